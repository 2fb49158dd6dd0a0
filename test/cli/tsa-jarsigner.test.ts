// Java's jarsigner (Debian's OpenJDK 17) as a real RFC 3161 client of `timeseal serve`'s POST /tsa
// (docs/API.md "POST /tsa", docs/FORMAT.md §3b): a jar signed with `-tsa` carries a time-stamp token from
// Timeseal, and `jarsigner -verify -strict` accepts it when the trust store holds keys/timeseal-tsa-root.pem —
// the signature's time is reported as "Timestamped by" the TSA certificate — and refuses the TSA chain when it
// does not. Java checks what OpenSSL checks and more: the TSA certificate's extended key usage (timeStamping,
// critical), the ESS signing-certificate attribute, the nonce, the content type of the answer. The next day's
// ledger holds each token's imprint at its genTime (for SHA-512: the SHA-256 of the TSTInfo).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { removeTempProjects, run, tempProject } from './helpers.ts';

afterAll(() => removeTempProjects());

const DAY = '2025-11-02';
const NOW = `${DAY}T12:00:00.250Z`;
const POLICY = '2.25.98735976325990746299618456542211080382';
const TSA_SUBJECT = 'CN=Timeseal TSA timeseal.test, O=timeseal.test';
const PASS = 'changeit';
const TIMESTAMP_TOKEN_ATTRIBUTE = '1.2.840.113549.1.9.16.2.14';

/** Runs a JDK tool in `cwd`; its exit code and everything it printed (jarsigner writes its report to stdout). */
const java = (tool: string, args: string[], cwd: string): { code: number | null; output: string } => {
  const r = spawnSync(tool, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
};
const ok = (tool: string, args: string[], cwd: string): string => {
  const r = java(tool, args, cwd);
  expect(r.code, `${tool} ${args.join(' ')}\n${r.output}`).toBe(0);
  return r.output;
};

const sha256 = (data: Uint8Array): string => crypto.createHash('sha256').update(data).digest('hex');

/** The time-stamp token jarsigner put in the jar's signature block: the TSTInfo (DER and read) and what it stamps. */
function tokenOf(dir: string, jar: string): { der: Buffer; info: pkijs.TSTInfo; signature: Buffer } {
  const out = path.join(dir, `${jar}.x`);
  fs.mkdirSync(out);
  ok('jar', ['xf', path.join(dir, jar), 'META-INF/SIGNER.EC'], out);
  const block = pkijs.ContentInfo.fromBER(Uint8Array.from(fs.readFileSync(path.join(out, 'META-INF/SIGNER.EC'))));
  const signerInfo = new pkijs.SignedData({ schema: block.content }).signerInfos[0]!;
  const attribute = signerInfo.unsignedAttrs!.attributes.find((a) => a.type === TIMESTAMP_TOKEN_ATTRIBUTE)!;
  expect(attribute, 'the signature carries a time-stamp token').toBeDefined();
  const token = new pkijs.SignedData({ schema: new pkijs.ContentInfo({ schema: attribute.values[0] }).content });
  const der = Buffer.from(token.encapContentInfo.eContent!.getValue());
  return {
    der,
    info: pkijs.TSTInfo.fromBER(der),
    signature: Buffer.from(signerInfo.signature.valueBlock.valueHexView),
  };
}

describe('jarsigner -tsa against a running timeseal serve', () => {
  let dir: string;
  let env: Record<string, string>;
  let server: SpawnedServer | undefined;
  /** The imprint each token stored, and its genTime. */
  const stored: Array<{ hash: string; genTime: Date }> = [];
  const stop = async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    server = undefined;
  };

  beforeAll(async () => {
    dir = tempProject('tsa-jarsigner');
    env = projectEnv(dir, { LOG_FORMAT: 'json' });
    // The TSA certificates are valid from the project's clock at `keys init`: the day's tokens fall inside.
    const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
    expect(init.code, init.stderr).toBe(0);
    server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });

    // The signer: a self-signed EC P-256 key valid before the day (Java checks it at the timestamp's time). The
    // signing keystore trusts our root too, so that jarsigner checks the TSA chain it receives while signing.
    const keystore = ['-keystore', 'signer.p12', '-storetype', 'PKCS12', '-storepass', PASS];
    ok(
      'keytool',
      [
        '-genkeypair',
        ...keystore,
        '-keypass',
        PASS,
        '-alias',
        'signer',
        '-keyalg',
        'EC',
        '-groupname',
        'secp256r1',
        '-sigalg',
        'SHA256withECDSA',
        '-dname',
        'CN=Jar Signer, O=Example',
        '-startdate',
        '2025/11/01 00:00:00',
        '-validity',
        '3650',
      ],
      dir,
    );
    ok(
      'keytool',
      ['-importcert', '-noprompt', ...keystore, '-alias', 'timeseal-tsa-root', '-file', 'keys/timeseal-tsa-root.pem'],
      dir,
    );
    ok('keytool', ['-exportcert', '-rfc', ...keystore, '-alias', 'signer', '-file', 'signer.pem'], dir);
    // Trust stores for verifying: the signer and our root; the signer alone.
    for (const [store, files] of [
      ['trust.p12', ['signer.pem', 'keys/timeseal-tsa-root.pem']],
      ['signer-only.p12', ['signer.pem']],
    ] as const) {
      for (const file of files)
        ok(
          'keytool',
          [
            '-importcert',
            '-noprompt',
            '-keystore',
            store,
            '-storetype',
            'PKCS12',
            '-storepass',
            PASS,
            '-alias',
            path.basename(file, '.pem'),
            '-file',
            file,
          ],
          dir,
        );
    }
    fs.writeFileSync(path.join(dir, 'Hello.txt'), 'a file in a jar\n');
  }, 120_000);
  afterAll(stop);

  const sign = (jar: string, args: string[]): string => {
    ok('jar', ['cf', jar, 'Hello.txt'], dir);
    return ok(
      'jarsigner',
      [
        '-keystore',
        'signer.p12',
        '-storetype',
        'PKCS12',
        '-storepass',
        PASS,
        '-tsa',
        `${server!.url}/tsa`,
        ...args,
        jar,
        'signer',
      ],
      dir,
    );
  };
  const verify = (jar: string, store = 'trust.p12') =>
    java(
      'jarsigner',
      ['-verify', '-verbose', '-certs', '-strict', '-keystore', store, '-storetype', 'PKCS12', '-storepass', PASS, jar],
      dir,
    );

  test.each([
    ['sha256.jar', [], 'SHA-256'],
    // Asking for our policy by its OID: granted (another policy would be refused, and jarsigner would fail).
    ['sha512.jar', ['-tsadigestalg', 'SHA-512', '-tsapolicyid', POLICY], 'SHA-512'],
  ] as const)(
    '%s: signed with a Timeseal time-stamp that jarsigner -verify -strict accepts',
    (jar, args, digest) => {
      const signed = sign(jar, [...args]);
      expect(signed).toMatch(/^jar signed\.$/m);
      // The TSA chain jarsigner received checks out against the root in the signing keystore.
      expect(signed).not.toMatch(/TSA certificate chain is invalid/);
      expect(signed).toMatch(/The timestamp will expire on 2035-11-0[12]\./);

      const { code, output } = verify(jar);
      expect(code, output).toBe(0);
      expect(output).toMatch(/^jar verified\.$/m);
      expect(output).not.toMatch(/invalid|not yet valid|expired|Error/i);
      expect(output).toContain(`Timestamped by "${TSA_SUBJECT}" on Sun Nov 02 12:00:00 UTC 2025`);
      expect(output).toMatch(
        new RegExp(
          `Timestamp digest algorithm: ${digest}\\n\\s+Timestamp signature algorithm: SHA256withECDSA, 256-bit key\\n`,
        ),
      );
      // -certs lists the TSA's chain from the token: our TSA certificate, then the root, trusted.
      expect(output).toMatch(
        new RegExp(
          `>>> TSA\\n\\s+X\\.509, ${TSA_SUBJECT}\\n\\s+Signature algorithm: SHA256withECDSA, 256-bit key\\n\\s+\\[certificate is valid from [^\\]]+\\]\\n\\s+X\\.509, CN=Timeseal TSA root, O=timeseal\\.test\\n\\s+Signature algorithm: SHA256withECDSA, 256-bit key\\n\\s+\\[trusted certificate\\]\\n`,
        ),
      );

      const token = tokenOf(dir, jar);
      expect(token.info.genTime.toISOString()).toBe(NOW);
      expect(token.info.nonce, 'jarsigner sends a nonce, the token returns it').toBeDefined();
      if (digest === 'SHA-256') {
        // What jarsigner time-stamps: the SHA-256 of the signature; Timeseal stores that imprint.
        expect(Buffer.from(token.info.messageImprint.hashedMessage.valueBlock.valueHexView).toString('hex')).toBe(
          sha256(token.signature),
        );
        stored.push({ hash: sha256(token.signature), genTime: token.info.genTime });
      } else {
        stored.push({ hash: sha256(token.der), genTime: token.info.genTime });
      }
    },
    60_000,
  );

  test('without our root in the trust store, jarsigner -verify -strict refuses the TSA chain', () => {
    const { code, output } = verify('sha256.jar', 'signer-only.p12');
    expect(code).not.toBe(0);
    expect(output).toMatch(/jar verified, with signer errors\./);
    expect(output).toMatch(/This jar contains entries whose TSA certificate chain is invalid/);
  }, 60_000);

  test("the next day's ledger holds each token's imprint at its genTime", async () => {
    expect(stored).toHaveLength(2);
    await stop();
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
    expect(built.code, built.stderr).toBe(0);
    const ledger = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.json`), 'utf8')) as {
      entries: Array<[string, string]>;
    };
    const entries = new Map(ledger.entries.map((e) => [e[0], e[1]]));
    expect(entries.size).toBe(2);
    for (const { hash, genTime } of stored) expect(Date.parse(entries.get(hash)!), hash).toBe(genTime.getTime());
  }, 60_000);
});
