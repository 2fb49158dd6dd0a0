// An operator's own time-stamp key and certificate chain (docs/OPERATIONS.md "Your own TSA certificate"), built
// here with Debian's OpenSSL as a CA would issue them: a root, an intermediate and the TSA certificate.
// TIMESEAL_TSA_KEY_FILE and TIMESEAL_TSA_CHAIN_FILE replace the files `keys init` made; `timeseal serve` checks
// the pair when it starts, and a good chain answers POST /tsa with tokens `openssl ts -verify` accepts with that
// root as the only trust. Each defect OpenSSL or Java would refuse a token for — or that Timeseal cannot sign
// with — makes `serve` exit 64 (usage: a setting) with one line naming the problem and the file, before it
// listens: the extended key usage not critical, with another purpose, absent; a key that is not the certificate's;
// a broken link; a chain without its root; an expired certificate; an RSA key. The default files
// (keys/timeseal-tsa.pem) get the same checks.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { BIN, childEnv, projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { removeTempProjects, run, tempProject } from './helpers.ts';

afterAll(() => removeTempProjects());

const openssl = (args: string[], cwd: string): string =>
  execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const EXT = {
  root: ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', 'subjectKeyIdentifier=hash'],
  ca: [
    'basicConstraints=critical,CA:TRUE,pathlen:0',
    'keyUsage=critical,keyCertSign,cRLSign',
    'subjectKeyIdentifier=hash',
    'authorityKeyIdentifier=keyid:always',
  ],
  tsa: (eku: string | undefined) => [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature',
    ...(eku === undefined ? [] : [`extendedKeyUsage=${eku}`]),
    'subjectKeyIdentifier=hash',
    'authorityKeyIdentifier=keyid:always',
  ],
};

/** A small PKI in `dir`: keys, certificate requests and certificates made with `openssl`. */
function pki(dir: string) {
  fs.mkdirSync(dir, { recursive: true });
  const ssl = (args: string[]) => openssl(args, dir);
  const key = (name: string, kind: 'p256' | 'rsa' = 'p256') => {
    ssl([
      'genpkey',
      '-algorithm',
      kind === 'rsa' ? 'RSA' : 'EC',
      '-pkeyopt',
      kind === 'rsa' ? 'rsa_keygen_bits:2048' : 'ec_paramgen_curve:P-256',
      '-out',
      `${name}.key`,
    ]);
    return path.join(dir, `${name}.key`);
  };
  const request = (name: string, subject: string) =>
    ssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
  const extfile = (name: string, lines: string[]) =>
    fs.writeFileSync(path.join(dir, `${name}.ext`), `${lines.join('\n')}\n`);
  return {
    key,
    /** A self-signed root for `name`.key. */
    root(name: string, subject: string) {
      request(name, subject);
      extfile(name, EXT.root);
      ssl([
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-signkey',
        `${name}.key`,
        '-sha256',
        '-days',
        '3650',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.pem`,
      ]);
    },
    /** A certificate for `name`.key issued by `issuer` (its .pem and .key). */
    issue(name: string, subject: string, issuer: string, ext: string[]) {
      request(name, subject);
      extfile(name, ext);
      ssl([
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        `${issuer}.pem`,
        '-CAkey',
        `${issuer}.key`,
        '-set_serial',
        `0x${Date.now().toString(16)}${Math.floor(Math.random() * 1e6).toString(16)}`,
        '-sha256',
        '-days',
        '365',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.pem`,
      ]);
    },
    /** The same, with a validity in the past (`openssl ca` sets both dates). */
    issueExpired(name: string, subject: string, issuer: string, ext: string[]) {
      request(name, subject);
      extfile(name, ext);
      fs.writeFileSync(path.join(dir, 'index.txt'), '');
      const config = [
        '[ca]',
        'default_ca = issuing',
        '[issuing]',
        'database = index.txt',
        'new_certs_dir = .',
        'rand_serial = yes',
        'default_md = sha256',
        'policy = any',
        'unique_subject = no',
        '[any]',
        'commonName = supplied',
      ];
      fs.writeFileSync(path.join(dir, 'ca.cnf'), `${config.join('\n')}\n`);
      ssl([
        'ca',
        '-batch',
        '-config',
        'ca.cnf',
        '-cert',
        `${issuer}.pem`,
        '-keyfile',
        `${issuer}.key`,
        '-in',
        `${name}.csr`,
        '-preserveDN',
        '-notext',
        '-startdate',
        '20240101000000Z',
        '-enddate',
        '20240201000000Z',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.pem`,
      ]);
    },
    /** A PEM chain file of these certificates, in this order. */
    chain(name: string, certs: string[]) {
      fs.writeFileSync(
        path.join(dir, `${name}.pem`),
        certs.map((c) => fs.readFileSync(path.join(dir, `${c}.pem`), 'utf8')).join(''),
      );
      return path.join(dir, `${name}.pem`);
    },
  };
}

/** Runs `timeseal serve`, which must exit by itself (a start refused before listening). */
function refusedServe(
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ['serve'], {
      cwd,
      env: childEnv({ PORT: '0', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe("timeseal serve with an operator's TSA key and chain", () => {
  let dir: string;
  let ca: string;
  let env: Record<string, string>;
  let server: SpawnedServer | undefined;
  const files: Record<string, { key: string; chain: string }> = {};

  beforeAll(() => {
    dir = tempProject('tsa-chain');
    env = projectEnv(dir, { LOG_FORMAT: 'json' });
    const init = run(dir, ['keys', 'init'], { env });
    expect(init.code, init.stderr).toBe(0);
    ca = path.join(dir, 'ca');
    const p = pki(ca);
    // A public CA's shape: an RSA root, an ECDSA intermediate, the TSA's ECDSA P-256 certificate.
    p.key('root', 'rsa');
    p.root('root', '/C=EU/O=Example Trust Services/CN=Example Root CA');
    p.key('int');
    p.issue('int', '/C=EU/O=Example Trust Services/CN=Example TSA Issuing CA', 'root', EXT.ca);
    const tsa = (name: string, eku: string | undefined, kind: 'p256' | 'rsa' = 'p256') => {
      const key = p.key(name, kind);
      p.issue(name, `/C=EU/O=Example Trust Services/CN=Example TSA ${name}`, 'int', EXT.tsa(eku));
      files[name] = { key, chain: p.chain(`${name}-chain`, [name, 'int', 'root']) };
    };
    tsa('good', 'critical,timeStamping');
    tsa('eku-not-critical', 'timeStamping');
    tsa('eku-codesigning', 'critical,timeStamping,codeSigning');
    tsa('no-eku', undefined);
    tsa('rsa', 'critical,timeStamping', 'rsa');
    files['other-key'] = { key: p.key('other'), chain: files.good!.chain };
    files['no-root'] = { key: files.good!.key, chain: p.chain('no-root-chain', ['good', 'int']) };
    // A second intermediate with the same name but another key signs a TSA certificate; the chain names the first.
    p.key('int2');
    p.issue('int2', '/C=EU/O=Example Trust Services/CN=Example TSA Issuing CA', 'root', EXT.ca);
    p.key('stray');
    p.issue('stray', '/C=EU/O=Example Trust Services/CN=Example TSA stray', 'int2', EXT.tsa('critical,timeStamping'));
    files['broken-link'] = {
      key: path.join(ca, 'stray.key'),
      chain: p.chain('broken-link-chain', ['stray', 'int', 'root']),
    };
    p.key('expired');
    p.issueExpired(
      'expired',
      '/C=EU/O=Example Trust Services/CN=Example TSA expired',
      'int',
      EXT.tsa('critical,timeStamping'),
    );
    files.expired = { key: path.join(ca, 'expired.key'), chain: p.chain('expired-chain', ['expired', 'int', 'root']) };

    // OpenSSL's own view of the good chain: the TSA certificate verifies for time stamping with the root alone.
    expect(
      openssl(['verify', '-purpose', 'timestampsign', '-CAfile', 'root.pem', '-untrusted', 'int.pem', 'good.pem'], ca),
    ).toBe('good.pem: OK\n');
  }, 60_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  const configured = (name: string) => ({
    ...env,
    TIMESEAL_TSA_KEY_FILE: files[name]!.key,
    TIMESEAL_TSA_CHAIN_FILE: files[name]!.chain,
  });

  test('a good chain (root, intermediate, TSA certificate): serve starts, and openssl ts -verify accepts its tokens with that root', async () => {
    // The machine's clock: the certificates were issued now.
    server = await startServer(dir, configured('good'));
    fs.writeFileSync(path.join(dir, 'doc.txt'), 'a document time-stamped under an operator certificate\n');
    for (const [name, args] of [
      ['cert', ['-cert']],
      ['nocert', []],
    ] as const) {
      openssl(['ts', '-query', '-data', 'doc.txt', '-sha256', ...args, '-out', `${name}.tsq`], dir);
      const res = await fetch(`${server.url}/tsa`, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query' },
        body: fs.readFileSync(path.join(dir, `${name}.tsq`)),
      });
      expect(res.status).toBe(200);
      fs.writeFileSync(path.join(dir, `${name}.tsr`), Buffer.from(await res.arrayBuffer()));
      const text = openssl(['ts', '-reply', '-in', `${name}.tsr`, '-text'], dir);
      expect(text).toMatch(/Status: Granted\./);
      expect(text).toMatch(/TSA: DirName:\/C=EU\/O=Example Trust Services\/CN=Example TSA good\n/);
      // With certReq the token carries the chain; without it the verifier is given the intermediate.
      const untrusted = name === 'cert' ? [] : ['-untrusted', files.good!.chain];
      expect(
        openssl(
          [
            'ts',
            '-verify',
            '-queryfile',
            `${name}.tsq`,
            '-in',
            `${name}.tsr`,
            '-CAfile',
            path.join(ca, 'root.pem'),
            ...untrusted,
          ],
          dir,
        ),
      ).toMatch(/^Verification: OK$/m);
      expect(
        openssl(
          [
            'ts',
            '-verify',
            '-data',
            'doc.txt',
            '-in',
            `${name}.tsr`,
            '-CAfile',
            path.join(ca, 'root.pem'),
            ...untrusted,
          ],
          dir,
        ),
      ).toMatch(/^Verification: OK$/m);
    }
    // Timeseal's own root (keys/timeseal-tsa-root.pem) is not this token's root.
    expect(() =>
      openssl(
        ['ts', '-verify', '-queryfile', 'cert.tsq', '-in', 'cert.tsr', '-CAfile', 'keys/timeseal-tsa-root.pem'],
        dir,
      ),
    ).toThrow();
    const certs = await fetch(`${server.url}/tsa/certs`);
    expect(await certs.text()).toBe(fs.readFileSync(files.good!.chain, 'utf8'));
    // keys/timeseal-tsa.pem (from `keys init`) is not the configured chain: the log says so.
    await vi.waitFor(
      () =>
        expect(server!.stderr()).toMatch(
          /timeseal-tsa\.pem is not the configured TSA chain \(TIMESEAL_TSA_CHAIN_FILE\)/,
        ),
      { timeout: 5000, interval: 100 },
    );
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    server = undefined;
  }, 60_000);

  const rule =
    'RFC 3161 §2\\.3 requires exactly one purpose, timeStamping, in an extension marked critical \\(OpenSSL and Java refuse anything else\\)';
  test.concurrent.each([
    ['eku-not-critical', `the TSA certificate's extended key usage is not critical \\(CHAIN\\): ${rule}`],
    [
      'eku-codesigning',
      `the TSA certificate's extended key usage names other purposes besides timeStamping \\(codeSigning\\) \\(CHAIN\\): ${rule}`,
    ],
    ['no-eku', `the TSA certificate has no extended key usage \\(CHAIN\\): ${rule}`],
    ['other-key', 'the TSA private key \\(KEY\\) does not match the TSA certificate, the first of CHAIN'],
    [
      'broken-link',
      'certificate 1 of the TSA chain \\(C=EU, O=Example Trust Services, CN=Example TSA stray\\) is not signed by the next one, certificate 2 of the TSA chain \\(C=EU, O=Example Trust Services, CN=Example TSA Issuing CA\\) \\(CHAIN\\): the chain must run from the TSA certificate, each followed by its issuer, up to and including the root',
    ],
    [
      'no-root',
      'the last certificate of the TSA chain, certificate 2 of the TSA chain \\(C=EU, O=Example Trust Services, CN=Example TSA Issuing CA\\), is not a self-signed root \\(CHAIN\\)',
    ],
    [
      'expired',
      'certificate 1 of the TSA chain \\(C=EU, O=Example Trust Services, CN=Example TSA expired\\) expired on 2024-02-01T00:00:00\\.000Z \\(CHAIN\\)',
    ],
    [
      'rsa',
      "the TSA certificate's key is RSA \\(2048 bits\\) \\(CHAIN\\): Timeseal signs time-stamp tokens with ECDSA P-256 and SHA-256 only",
    ],
  ])(
    '%s: serve exits 1 (an unfit key or certificate is no usage mistake) naming the problem and the file',
    async (name, message) => {
      const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const r = await refusedServe(dir, configured(name));
      expect(r.stdout).not.toMatch(/listening/);
      expect(r.code, r.stderr).toBe(1);
      const expected = message
        .replace('CHAIN', escape(files[name]!.chain))
        .replace('CHAIN', escape(files[name]!.chain))
        .replace('KEY', escape(files[name]!.key));
      expect(r.stderr).toMatch(new RegExp(`^timeseal: cannot serve the time-stamp authority: ${expected}`));
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    },
    60_000,
  );

  test.concurrent(
    'a configured file that is missing: exit 3 (not found); only one of the two variables: exit 64 (a setting)',
    async () => {
      const missing = await refusedServe(dir, {
        ...configured('good'),
        TIMESEAL_TSA_KEY_FILE: path.join(ca, 'absent.key'),
      });
      expect(missing.code).toBe(3);
      expect(missing.stderr).toMatch(
        /^timeseal: cannot serve the time-stamp authority: cannot read the TSA private key \(.*absent\.key\): .*no such file/,
      );
      const alone = await refusedServe(dir, { ...env, TIMESEAL_TSA_CHAIN_FILE: files.good!.chain });
      expect(alone.code).toBe(64);
      expect(alone.stderr).toMatch(
        /^timeseal: TIMESEAL_TSA_KEY_FILE and TIMESEAL_TSA_CHAIN_FILE go together \(the key and its certificate chain\): TIMESEAL_TSA_KEY_FILE is not set\n$/,
      );
    },
    60_000,
  );

  test('the default files get the same checks: a keys/timeseal-tsa.pem whose extended key usage is not critical refuses the start', async () => {
    const other = tempProject('tsa-chain-default');
    const otherEnv = projectEnv(other, { LOG_FORMAT: 'json' });
    expect(run(other, ['keys', 'init'], { env: otherEnv }).code).toBe(0);
    const chain = path.join(other, 'keys/timeseal-tsa.pem');
    const key = path.join(other, 'data/private-keys/tsa_private.pem');
    fs.copyFileSync(files['eku-not-critical']!.chain, chain);
    fs.copyFileSync(files['eku-not-critical']!.key, key);
    const r = await refusedServe(other, otherEnv);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `timeseal: cannot serve the time-stamp authority: the TSA certificate's extended key usage is not critical (${chain}): RFC 3161 §2.3 requires exactly one purpose, timeStamping, in an extension marked critical (OpenSSL and Java refuse anything else)\n`,
    );
    // An archive without the TSA key still starts (POST /tsa answers 503, as before it had one).
    fs.rmSync(key);
    const started = await startServer(other, otherEnv);
    const res = await fetch(`${started.url}/tsa`, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: fs.readFileSync(path.join(dir, 'cert.tsq')),
    });
    expect(res.status).toBe(503);
    started.child.kill('SIGTERM');
    expect((await started.exited).code).toBe(0);
  }, 60_000);
});
