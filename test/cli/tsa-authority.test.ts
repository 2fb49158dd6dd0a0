// Timeseal as an RFC 3161 time-stamp authority (docs/FORMAT.md §3b, docs/API.md "POST /tsa"), checked with
// Debian's OpenSSL only: `timeseal keys init` makes the TSA's key, its certificate (extended key usage time
// stamping only, critical) and the root that issued it — `openssl verify` accepts the chain. Then a real
// `timeseal serve` answers `openssl ts -query` requests (SHA-256, SHA-384, SHA-512; with and without -cert and
// the nonce) with tokens `openssl ts -verify` accepts, refuses SHA-1 and garbage inside a TimeStampResp, answers
// 415 and 413 over HTTP, and the next day's ledger holds each granted imprint (for SHA-384/512: the SHA-256 of
// the TSTInfo) at the token's genTime.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { removeTempProjects, run, runJson, tempProject } from './helpers.ts';

const openssl = (args: string[], cwd: string): string =>
  execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

afterAll(() => removeTempProjects());

const env = { TIMESEAL_ORIGIN: 'https://timeseal.test' };

describe('the time-stamp authority keys', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempProject('tsa-keys');
  });

  test('keys init writes the chain (leaf first), the root and the private key (0600); OpenSSL verifies the chain', () => {
    const init = runJson(dir, ['keys', 'init', '--json'], { env });
    expect(init.result.code, init.result.stderr).toBe(0);
    const created = (init.json.created as string[]).map((f) => path.normalize(f));
    for (const f of ['keys/timeseal-tsa.pem', 'keys/timeseal-tsa-root.pem', 'data/private-keys/tsa_private.pem']) {
      expect(created).toContain(f);
      expect(fs.existsSync(path.join(dir, f)), f).toBe(true);
    }
    expect(fs.existsSync(path.join(dir, 'keys/tsa-ca.pem'))).toBe(false);
    expect(fs.statSync(path.join(dir, 'data/private-keys/tsa_private.pem')).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(dir, 'data/private-keys/tsa_private.pem'), 'utf8')).toMatch(
      /^-----BEGIN PRIVATE KEY-----\n/,
    );
    const chain = fs.readFileSync(path.join(dir, 'keys/timeseal-tsa.pem'), 'utf8');
    const root = fs.readFileSync(path.join(dir, 'keys/timeseal-tsa-root.pem'), 'utf8');
    expect(chain.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(chain.endsWith(root)).toBe(true);
    fs.writeFileSync(path.join(dir, 'leaf.pem'), chain.slice(0, chain.length - root.length));

    expect(openssl(['verify', '-CAfile', 'keys/timeseal-tsa-root.pem', 'leaf.pem'], dir)).toBe('leaf.pem: OK\n');
    expect(
      openssl(['verify', '-purpose', 'timestampsign', '-CAfile', 'keys/timeseal-tsa-root.pem', 'leaf.pem'], dir),
    ).toBe('leaf.pem: OK\n');

    const leaf = openssl(['x509', '-in', 'leaf.pem', '-noout', '-text'], dir);
    expect(leaf).toMatch(/Subject: O = timeseal\.test, CN = Timeseal TSA timeseal\.test\n/);
    expect(leaf).toMatch(/Issuer: O = timeseal\.test, CN = Timeseal TSA root\n/);
    expect(leaf).toMatch(/X509v3 Extended Key Usage: critical\n\s+Time Stamping\n/);
    expect(leaf).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:FALSE\n/);
    expect(leaf).toMatch(/X509v3 Key Usage: critical\n\s+Digital Signature\n/);
    expect(leaf).toMatch(/Public Key Algorithm: id-ecPublicKey[\s\S]*NIST CURVE: P-256/);
    expect(leaf).toMatch(/Signature Algorithm: ecdsa-with-SHA256/);
    const notBefore = Date.parse(/Not Before: (.+)\n/.exec(leaf)![1]!);
    const notAfter = Date.parse(/Not After : (.+)\n/.exec(leaf)![1]!);
    expect((notAfter - notBefore) / (365.25 * 86_400_000)).toBeCloseTo(10, 1);
    const ca = openssl(['x509', '-in', 'keys/timeseal-tsa-root.pem', '-noout', '-text'], dir);
    expect(ca).toMatch(/Subject: O = timeseal\.test, CN = Timeseal TSA root\n/);
    expect(ca).toMatch(/X509v3 Basic Constraints: critical\n\s+CA:TRUE\n/);
    expect(ca).toMatch(/X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign\n/);
    // The private key is the certificate's.
    const pub = (args: string[]) => openssl([...args, '-pubout'], dir);
    expect(pub(['pkey', '-in', 'data/private-keys/tsa_private.pem'])).toBe(
      openssl(['x509', '-in', 'leaf.pem', '-noout', '-pubkey'], dir),
    );
  });

  test('keys add gives an archive without them the TSA keys and touches nothing else; a second run refuses', () => {
    const before = new Map(
      ['keys/public.pem', 'keys/ed25519.vkey', 'data/private-keys/ecdsa_private.pem'].map((f) => [
        f,
        fs.readFileSync(path.join(dir, f), 'utf8'),
      ]),
    );
    for (const f of ['keys/timeseal-tsa.pem', 'keys/timeseal-tsa-root.pem', 'data/private-keys/tsa_private.pem'])
      fs.rmSync(path.join(dir, f));
    const added = runJson(dir, ['keys', 'add', '--json'], { env });
    expect(added.result.code, added.result.stderr).toBe(0);
    expect((added.json.created as string[]).map((f) => path.basename(f))).toEqual([
      'timeseal-tsa.pem',
      'timeseal-tsa-root.pem',
      'tsa_private.pem',
    ]);
    for (const [f, text] of before) expect(fs.readFileSync(path.join(dir, f), 'utf8'), f).toBe(text);
    expect(fs.statSync(path.join(dir, 'data/private-keys/tsa_private.pem')).mode & 0o777).toBe(0o600);
    expect(openssl(['verify', '-CAfile', 'keys/timeseal-tsa-root.pem', 'keys/timeseal-tsa.pem'], dir)).toBe(
      'keys/timeseal-tsa.pem: OK\n',
    );
    const again = run(dir, ['keys', 'add'], { env });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/keys already exist, refusing to overwrite/);
  });
});

test('without TIMESEAL_ORIGIN the TSA is named after localhost:PORT (the links origin), the checkpoint keys after the log origin localhost:8080', () => {
  const dev = tempProject('tsa-keys-port');
  const portEnv = { PORT: '18093' };
  const subjectOf = (file: string): string =>
    openssl(['x509', '-in', file, '-noout', '-subject', '-issuer', '-nameopt', 'RFC2253'], dev);
  const init = run(dev, ['keys', 'init'], { env: portEnv });
  expect(init.code, init.stderr).toBe(0);
  expect(subjectOf('keys/timeseal-tsa.pem')).toBe(
    'subject=CN=Timeseal TSA localhost:18093,O=localhost:18093\nissuer=CN=Timeseal TSA root,O=localhost:18093\n',
  );
  expect(fs.readFileSync(path.join(dev, 'keys/ed25519.vkey'), 'utf8')).toMatch(/^localhost:8080\+/);
  // keys add names a TSA made later the same way.
  for (const f of ['keys/timeseal-tsa.pem', 'keys/timeseal-tsa-root.pem', 'data/private-keys/tsa_private.pem'])
    fs.rmSync(path.join(dev, f));
  const added = run(dev, ['keys', 'add'], { env: { PORT: '18094' } });
  expect(added.code, added.stderr).toBe(0);
  expect(subjectOf('keys/timeseal-tsa.pem')).toMatch(/^subject=CN=Timeseal TSA localhost:18094,O=localhost:18094\n/);
});

describe('POST /tsa on a running timeseal serve', () => {
  const DAY = '2025-11-02';
  const NOW = `${DAY}T12:00:00.250Z`;
  let dir: string;
  let env: Record<string, string>;
  let server: SpawnedServer | undefined;
  /** What each granted request put in the ledger: the hash, and the token's genTime. */
  const stored: Array<{ hash: string; genTime: Date }> = [];
  const stop = async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    server = undefined;
  };

  beforeAll(async () => {
    dir = tempProject('tsa-serve');
    env = projectEnv(dir, { LOG_FORMAT: 'json' });
    // The certificates are valid from the project's clock (a minute before it): the day's tokens fall inside.
    const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
    expect(init.code, init.stderr).toBe(0);
    fs.writeFileSync(path.join(dir, 'doc.txt'), 'the document that is time-stamped\n');
    server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });
  }, 60_000);
  afterAll(stop);

  const post = async (body: Uint8Array, type = 'application/timestamp-query') => {
    const res = await fetch(`${server!.url}/tsa`, {
      method: 'POST',
      headers: { 'content-type': type },
      body: Uint8Array.from(body),
    });
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  };
  /** Makes `name`.tsq with `openssl ts -query`, posts it, writes `name`.tsr; the HTTP answer. */
  const ask = async (name: string, args: string[]) => {
    execFileSync('openssl', ['ts', '-query', '-data', 'doc.txt', ...args, '-out', `${name}.tsq`], {
      cwd: dir,
      stdio: 'pipe',
    });
    const answer = await post(fs.readFileSync(path.join(dir, `${name}.tsq`)));
    fs.writeFileSync(path.join(dir, `${name}.tsr`), answer.body);
    return answer;
  };
  const verify = (args: string[]): string =>
    openssl(
      ['ts', '-verify', ...args, '-CAfile', 'keys/timeseal-tsa-root.pem', '-untrusted', 'keys/timeseal-tsa.pem'],
      dir,
    );
  const text = (name: string): string => openssl(['ts', '-reply', '-in', `${name}.tsr`, '-text'], dir);
  /** The token's DER TSTInfo and genTime, read with pkijs. */
  const tstInfo = (tsr: Buffer) => {
    const resp = pkijs.TimeStampResp.fromBER(Uint8Array.from(tsr));
    const signed = new pkijs.SignedData({ schema: resp.timeStampToken!.content });
    const der = Buffer.from(signed.encapContentInfo.eContent!.getValue());
    return { der, genTime: pkijs.TSTInfo.fromBER(der).genTime, certificates: signed.certificates?.length ?? 0 };
  };
  const sha256 = (data: Uint8Array) =>
    execFileSync('openssl', ['dgst', '-sha256', '-r'], { input: data }).toString().slice(0, 64);
  const docSha256 = () => sha256(fs.readFileSync(path.join(dir, 'doc.txt')));

  test.each([
    ['sha256', ['-sha256', '-cert'], 2],
    ['sha384', ['-sha384', '-cert'], 2],
    ['sha512', ['-sha512', '-cert'], 2],
    ['nocert', ['-sha256'], 0],
    ['nononce', ['-sha256', '-cert', '-no_nonce'], 2],
  ] as const)('%s: a granted token that openssl ts -verify accepts', async (name, args, certificates) => {
    const { res, body } = await ask(name, [...args]);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/timestamp-reply');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(verify(['-queryfile', `${name}.tsq`, '-in', `${name}.tsr`])).toMatch(/^Verification: OK$/m);
    if (name !== 'sha384' && name !== 'sha512')
      expect(verify(['-data', 'doc.txt', '-in', `${name}.tsr`])).toMatch(/^Verification: OK$/m);
    const shown = text(name);
    expect(shown).toMatch(/Status: Granted\./);
    expect(shown).toMatch(/Policy OID: 2\.25\.98735976325990746299618456542211080382\n/);
    expect(shown).toMatch(/Accuracy: 0x01 seconds, unspecified millis, unspecified micros\n/);
    expect(shown).toMatch(/Ordering: no\n/);
    expect(shown).toMatch(/TSA: DirName:\/O=timeseal\.test\/CN=Timeseal TSA timeseal\.test\n/);
    expect(shown).toMatch(name === 'nononce' ? /Nonce: unspecified\n/ : /Nonce: 0x[0-9A-F]+\n/);
    expect(shown).toMatch(/Time stamp: Nov  2 12:00:00\.25 2025 GMT\n/);
    const info = tstInfo(body);
    expect(info.certificates).toBe(certificates);
    expect(info.genTime.toISOString()).toBe(NOW);
    stored.push({
      hash: name === 'sha384' || name === 'sha512' ? sha256(info.der) : docSha256(),
      genTime: info.genTime,
    });
  });

  test('serial numbers differ', () => {
    const serials = ['sha256', 'sha384', 'sha512', 'nocert', 'nononce'].map(
      (n) => /Serial number: (0x[0-9A-F]+)\n/.exec(text(n))![1],
    );
    expect(new Set(serials).size).toBe(5);
  });

  test('SHA-1: HTTP 200 and a rejection with badAlg; garbage: badDataFormat', async () => {
    const sha1 = await ask('sha1', ['-sha1', '-cert']);
    expect(sha1.res.status).toBe(200);
    expect(sha1.res.headers.get('content-type')).toBe('application/timestamp-reply');
    const shown = text('sha1');
    expect(shown).toMatch(/Status: Rejected\.\n/);
    expect(shown).toMatch(/Failure info: unrecognized or unsupported algorithm identifier\n/);
    expect(shown).toMatch(/SHA-1/);
    expect(shown).toMatch(/TST info:\nNot included\./);

    const garbage = await post(Buffer.from('this is not a time-stamp request'));
    expect(garbage.res.status).toBe(200);
    fs.writeFileSync(path.join(dir, 'garbage.tsr'), garbage.body);
    const g = text('garbage');
    expect(g).toMatch(/Status: Rejected\.\n/);
    expect(g).toMatch(/Failure info: the data submitted has the wrong format\n/);
    expect(g).toMatch(/Status description: The request is not a DER TimeStampReq/);
  });

  test('our policy asked for: granted; another policy: unacceptedPolicy; extensions: unacceptedExtension; a wrong-length digest: badDataFormat', async () => {
    await ask('ourpolicy', ['-sha256', '-cert', '-tspolicy', '2.25.98735976325990746299618456542211080382']);
    expect(verify(['-queryfile', 'ourpolicy.tsq', '-in', 'ourpolicy.tsr'])).toMatch(/^Verification: OK$/m);
    stored.push({ hash: docSha256(), genTime: tstInfo(fs.readFileSync(path.join(dir, 'ourpolicy.tsr'))).genTime });
    await ask('policy', ['-sha256', '-cert', '-tspolicy', '1.2.3.4']);
    expect(text('policy')).toMatch(
      /Status: Rejected\.\n[\s\S]*Failure info: the requested TSA policy is not supported by the TSA\n/,
    );
    const request = (length: number, extensions: boolean): Uint8Array =>
      new Uint8Array(
        new pkijs.TimeStampReq({
          version: 1,
          messageImprint: new pkijs.MessageImprint({
            hashAlgorithm: new pkijs.AlgorithmIdentifier({
              algorithmId: '2.16.840.1.101.3.4.2.1',
              algorithmParams: new asn1js.Null(),
            }),
            hashedMessage: new asn1js.OctetString({ valueHex: new Uint8Array(length).fill(7).buffer }),
          }),
          ...(extensions
            ? { extensions: [new pkijs.Extension({ extnID: '1.2.3.4', extnValue: new asn1js.Null().toBER() })] }
            : {}),
        })
          .toSchema()
          .toBER(),
      );
    for (const [name, der, info] of [
      ['extension', request(32, true), 'the requested extension is not supported by the TSA'],
      ['short', request(31, false), 'the data submitted has the wrong format'],
    ] as const) {
      const { res, body } = await post(der);
      expect(res.status).toBe(200);
      fs.writeFileSync(path.join(dir, `${name}.tsr`), body);
      expect(text(name)).toMatch(new RegExp(`Status: Rejected\\.\\n[\\s\\S]*Failure info: ${info}\\n`));
    }
  });

  test('another content type: 415; a body over 4 KiB: 413; GET /tsa/certs: the chain; /keys/ serves both PEM files', async () => {
    const q = fs.readFileSync(path.join(dir, 'sha256.tsq'));
    for (const type of ['application/octet-stream', 'application/json', 'application/timestamp-query; charset=utf-8']) {
      const { res, body } = await post(q, type);
      expect(res.status, type).toBe(415);
      expect(JSON.parse(body.toString()).error).toMatch(/Content-Type must be application\/timestamp-query/);
    }
    const big = await post(new Uint8Array(5000));
    expect(big.res.status).toBe(413);
    expect(JSON.parse(big.body.toString()).error).toMatch(/at most 4096 bytes/);
    const certs = await fetch(`${server!.url}/tsa/certs`);
    expect(certs.status).toBe(200);
    expect(certs.headers.get('content-type')).toBe('application/pem-certificate-chain');
    expect(await certs.text()).toBe(fs.readFileSync(path.join(dir, 'keys/timeseal-tsa.pem'), 'utf8'));
    for (const name of ['timeseal-tsa.pem', 'timeseal-tsa-root.pem']) {
      const served = await fetch(`${server!.url}/keys/${name}`);
      expect(served.status, name).toBe(200);
      expect(await served.text()).toBe(fs.readFileSync(path.join(dir, 'keys', name), 'utf8'));
    }
  });

  test("the next day's ledger holds each granted imprint at its genTime", async () => {
    expect(stored).toHaveLength(6);
    await stop();
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
    expect(built.code, built.stderr).toBe(0);
    const ledger = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.json`), 'utf8')) as {
      entries: Array<[string, string]>;
    };
    const entries = new Map(ledger.entries.map((e) => [e[0], e[1]]));
    expect(entries.size).toBe(3); // the SHA-256 imprint (asked three times: one entry) and two TSTInfo hashes
    for (const { hash, genTime } of stored) expect(Date.parse(entries.get(hash)!), hash).toBe(genTime.getTime());
  });

  test('a server whose clock is on a published day: 503 with Retry-After', async () => {
    server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });
    const { res, body } = await post(fs.readFileSync(path.join(dir, 'sha256.tsq')));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(body.toString()).error).toMatch(/./);
    await stop();
  }, 60_000);

  test('without the TSA key the server starts and POST /tsa answers 503 naming `timeseal keys add`', async () => {
    fs.rmSync(path.join(dir, 'data/private-keys/tsa_private.pem'));
    server = await startServer(dir, { ...env, TIMESEAL_NOW: '2025-11-03T12:00:00.000Z' });
    const { res, body } = await post(fs.readFileSync(path.join(dir, 'sha256.tsq')));
    expect(res.status).toBe(503);
    expect(JSON.parse(body.toString()).error).toMatch(/no time-stamp key: run `timeseal keys add`/);
    await stop();
  }, 60_000);
});
