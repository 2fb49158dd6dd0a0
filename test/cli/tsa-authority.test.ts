// Timeseal as an RFC 3161 time-stamp authority (docs/FORMAT.md §3b, docs/API.md "POST /tsa"), checked with
// Debian's OpenSSL only: `timeseal keys init` makes the TSA's key, its certificate (extended key usage time
// stamping only, critical) and the root that issued it — `openssl verify` accepts the chain.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { removeTempProjects, run, runJson, tempProject } from './helpers.ts';

const openssl = (args: string[], cwd: string): string => execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

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
    expect(fs.readFileSync(path.join(dir, 'data/private-keys/tsa_private.pem'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const chain = fs.readFileSync(path.join(dir, 'keys/timeseal-tsa.pem'), 'utf8');
    const root = fs.readFileSync(path.join(dir, 'keys/timeseal-tsa-root.pem'), 'utf8');
    expect(chain.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(chain.endsWith(root)).toBe(true);
    fs.writeFileSync(path.join(dir, 'leaf.pem'), chain.slice(0, chain.length - root.length));

    expect(openssl(['verify', '-CAfile', 'keys/timeseal-tsa-root.pem', 'leaf.pem'], dir)).toBe('leaf.pem: OK\n');
    expect(openssl(['verify', '-purpose', 'timestampsign', '-CAfile', 'keys/timeseal-tsa-root.pem', 'leaf.pem'], dir)).toBe('leaf.pem: OK\n');

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
    expect(pub(['pkey', '-in', 'data/private-keys/tsa_private.pem'])).toBe(openssl(['x509', '-in', 'leaf.pem', '-noout', '-pubkey'], dir));
  });

  test('keys add gives an archive without them the TSA keys and touches nothing else; a second run refuses', () => {
    const before = new Map(['keys/public.pem', 'keys/ed25519.vkey', 'data/private-keys/ecdsa_private.pem'].map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));
    for (const f of ['keys/timeseal-tsa.pem', 'keys/timeseal-tsa-root.pem', 'data/private-keys/tsa_private.pem']) fs.rmSync(path.join(dir, f));
    const added = runJson(dir, ['keys', 'add', '--json'], { env });
    expect(added.result.code, added.result.stderr).toBe(0);
    expect((added.json.created as string[]).map((f) => path.basename(f))).toEqual(['timeseal-tsa.pem', 'timeseal-tsa-root.pem', 'tsa_private.pem']);
    for (const [f, text] of before) expect(fs.readFileSync(path.join(dir, f), 'utf8'), f).toBe(text);
    expect(fs.statSync(path.join(dir, 'data/private-keys/tsa_private.pem')).mode & 0o777).toBe(0o600);
    expect(openssl(['verify', '-CAfile', 'keys/timeseal-tsa-root.pem', 'keys/timeseal-tsa.pem'], dir)).toBe('keys/timeseal-tsa.pem: OK\n');
    const again = run(dir, ['keys', 'add'], { env });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/keys already exist, refusing to overwrite/);
  });
});
