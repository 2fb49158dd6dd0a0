// COSE receipts (RFC 9942; docs/FORMAT.md §11), black box: a real `timeseal serve` takes a beta-API hash and an
// RFC 3161 request (`openssl ts -query`), `timeseal ledger build` publishes the day, and the server serves each
// leaf's receipts and the key set. Checked with code we did not write: @transmute/cose (npm) verifies the ES256
// receipts against the key from GET /.well-known/scitt-keys and refuses a receipt for another leaf, a flipped
// byte in the proof and a receipt under another key; node:crypto (OpenSSL 3.5) checks the ML-DSA-65 receipt's
// signature over the root of the day's checkpoint, since no third-party COSE verifier knows alg −49 yet.
// `timeseal proof --receipt` writes the same bytes as the URL.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { cbor, detached, receipt as coseReceipt } from '@transmute/cose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { arrayBuffer, decodeSign1, leafHash, sha256, transmuteVerifier } from './cose-helpers.ts';
import { makeHashes, removeTempProjects, run, tempProject } from './helpers.ts';

afterAll(() => removeTempProjects());

const DAY = '2025-11-02';
const NEXT = '2025-11-03';
const ORIGIN = 'timeseal.test';

describe('COSE receipts from a running timeseal serve', () => {
  let dir: string;
  let env: Record<string, string>;
  let server: SpawnedServer | undefined;
  const beta = makeHashes('cose-beta', 1)[0]!;
  const others = makeHashes('cose-other', 6);
  let tsaLeaf: string;
  const stop = async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    server = undefined;
  };
  const get = async (url: string) => {
    const res = await fetch(`${server!.url}${url}`);
    return { res, body: new Uint8Array(await res.arrayBuffer()) };
  };

  beforeAll(async () => {
    dir = tempProject('cose-receipt');
    env = projectEnv(dir, { LOG_FORMAT: 'json', TIMESEAL_ORIGIN: `https://${ORIGIN}` });
    const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
    expect(init.code, init.stderr).toBe(0);
    const imported = run(dir, ['import', '-'], {
      env: { ...env, TIMESEAL_NOW: `${DAY}T08:00:00.000Z` },
      input: `${others.join('\n')}\n`,
    });
    expect(imported.code, imported.stderr).toBe(0);
    server = await startServer(dir, { ...env, TIMESEAL_NOW: `${DAY}T12:00:00.000Z` });
    const submitted = await fetch(`${server.url}/api/v1/beta/timestamp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hash: beta }),
    });
    expect(submitted.status).toBe(201);
    fs.writeFileSync(path.join(dir, 'doc.txt'), 'a document time-stamped by Timeseal’s TSA\n');
    execFileSync('openssl', ['ts', '-query', '-data', 'doc.txt', '-sha256', '-cert', '-out', 'doc.tsq'], { cwd: dir });
    const token = await fetch(`${server.url}/tsa`, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: fs.readFileSync(path.join(dir, 'doc.tsq')),
    });
    expect(token.status).toBe(200);
    // A SHA-256 request's ledger hash is its imprint (docs/FORMAT.md §3b).
    tsaLeaf = sha256(fs.readFileSync(path.join(dir, 'doc.txt'))).toString('hex');
    await stop();
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${NEXT}T00:01:00.000Z` } });
    expect(built.code, built.stderr).toBe(0);
    server = await startServer(dir, { ...env, TIMESEAL_NOW: `${NEXT}T09:00:00.000Z` });
  }, 120_000);
  afterAll(stop);

  /** The checkpoint root of the day, read from the published checkpoint (its third line). */
  const dayRoot = (): Buffer =>
    Buffer.from(fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.checkpoint`), 'utf8').split('\n')[2]!, 'base64');

  test('GET /.well-known/scitt-keys: a COSE Key Set (application/cbor) of the ES256 and ML-DSA-65 keys; each by its kid', async () => {
    const { res, body } = await get('/.well-known/scitt-keys');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/cbor');
    const keys = cbor.decode(body) as Map<number, unknown>[];
    expect(keys.map((k) => [k.get(1), k.get(3)])).toEqual([
      [2, -7],
      [7, -49],
    ]);
    // The ES256 key is the published PEM's.
    const pem = crypto.createPublicKey(fs.readFileSync(path.join(dir, 'keys/receipt-es256.pem')));
    const jwk = pem.export({ format: 'jwk' });
    expect(Buffer.from(keys[0]!.get(-2) as Uint8Array).toString('base64url')).toBe(jwk.x);
    expect(Buffer.from(keys[0]!.get(-3) as Uint8Array).toString('base64url')).toBe(jwk.y);
    for (const k of keys) {
      const kid = Buffer.from(k.get(2) as Uint8Array).toString('base64url');
      const one = await get(`/.well-known/scitt-keys/${kid}`);
      expect(one.res.status).toBe(200);
      expect(Buffer.from(one.body).equals(Buffer.from(cbor.encode(k)))).toBe(true);
    }
    const missing = await get(`/.well-known/scitt-keys/${Buffer.alloc(32).toString('base64url')}`);
    expect(missing.res.status).toBe(404);
    // SCRAPI -11 §2.2: an RFC 9290 Concise Problem Details body, read with @transmute/cose's CBOR.
    expect(missing.res.headers.get('content-type')).toBe('application/concise-problem-details+cbor');
    const problem = cbor.decode(missing.body) as Map<number, string>;
    expect(problem.get(-1)).toBe('No such key');
    expect(problem.get(-2)).toMatch(/^No key could be found for this kid value/);
  });

  test('@transmute/cose verifies the ES256 receipt of a beta-API hash and of a TSA token’s leaf, under the published key', async () => {
    const keySet = (await get('/.well-known/scitt-keys')).body;
    const verifier = transmuteVerifier(keySet);
    for (const hash of [beta, tsaLeaf]) {
      const { res, body } = await get(`/api/proof/${hash}.receipt.cose`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/cose');
      const root = await coseReceipt.inclusion.verify({
        entry: leafHash(Buffer.from(hash, 'hex')),
        receipt: arrayBuffer(body),
        verifier,
      });
      expect(Buffer.from(root).equals(dayRoot())).toBe(true);
      const { header, payload } = decodeSign1(body);
      expect(payload).toBeNull();
      expect(header.get(395)).toBe(1);
      expect(header.get(15)).toEqual(
        new Map<number, string>([
          [1, ORIGIN],
          [2, DAY],
        ]),
      );
    }
  });

  test('@transmute/cose refuses a receipt for another leaf, a flipped byte in the proof and a receipt under another key', async () => {
    const verifier = transmuteVerifier((await get('/.well-known/scitt-keys')).body);
    const { body } = await get(`/api/proof/${beta}.receipt.cose`);
    const verify = (receipt: Uint8Array, entry = beta) =>
      coseReceipt.inclusion.verify({
        entry: leafHash(Buffer.from(entry, 'hex')),
        receipt: arrayBuffer(receipt),
        verifier,
      });
    await expect(verify(body, tsaLeaf)).rejects.toThrow(/Signature verification failed|sn is not zero/);
    // A flipped byte in the first hash of the inclusion path (found by its bytes, re-encoded by transmute's CBOR).
    const { protectedBytes, unprotected, signature } = decodeSign1(body);
    const [size, index, pathHashes] = cbor.decode((unprotected.get(396) as Map<number, Uint8Array[]>).get(-1)![0]!) as [
      number,
      number,
      Uint8Array[],
    ];
    const flippedPath = pathHashes.map((h, i) => (i === 0 ? Buffer.from(h).map((b, j) => (j === 5 ? b ^ 1 : b)) : h));
    const flipped = cbor.encode(
      new cbor.Tagged(18, [
        protectedBytes,
        new Map([[396, new Map([[-1, [cbor.encode([size, index, flippedPath])]]])]]),
        null,
        signature,
      ]),
    );
    await expect(verify(new Uint8Array(flipped))).rejects.toThrow(/Signature verification failed/);
    // The same receipt signed by another P-256 key (node:crypto, IEEE P1363 r || s, as COSE ES256 wants).
    const other = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const toBeSigned = cbor.encode(['Signature1', protectedBytes, Buffer.alloc(0), dayRoot()]);
    const forged = cbor.encode(
      new cbor.Tagged(18, [
        protectedBytes,
        unprotected,
        null,
        crypto.sign('sha256', toBeSigned, { key: other.privateKey, dsaEncoding: 'ieee-p1363' }),
      ]),
    );
    await expect(verify(new Uint8Array(forged))).rejects.toThrow(/Signature verification failed/);
    // It is refused for its key alone: under that other key, the same library accepts it.
    const otherJwk = other.publicKey.export({ format: 'jwk' });
    const otherVerifier = detached.verifier({
      resolver: { resolve: async () => ({ ...otherJwk, alg: 'ES256' }) as never },
    });
    await expect(
      coseReceipt.inclusion.verify({
        entry: leafHash(Buffer.from(beta, 'hex')),
        receipt: arrayBuffer(new Uint8Array(forged)),
        verifier: otherVerifier,
      }),
    ).resolves.toBeDefined();
    // And the genuine one still verifies with the same verifier.
    await expect(verify(body)).resolves.toBeDefined();
  });

  test('node:crypto verifies the ML-DSA-65 receipt’s signature over the root of the day’s checkpoint', async () => {
    const { res, body } = await get(`/api/proof/${tsaLeaf}.receipt-mldsa65.cose`);
    expect(res.status).toBe(200);
    const { protectedBytes, header, signature } = decodeSign1(body);
    expect(header.get(1)).toBe(-49);
    const key = crypto.createPublicKey(fs.readFileSync(path.join(dir, 'keys/receipt-mldsa65.pem')));
    expect(key.asymmetricKeyType).toBe('ml-dsa-65');
    const toBeSigned = cbor.encode(['Signature1', protectedBytes, Buffer.alloc(0), dayRoot()]);
    expect(crypto.verify(null, toBeSigned, key, signature)).toBe(true);
    const otherRoot = cbor.encode(['Signature1', protectedBytes, Buffer.alloc(0), sha256(dayRoot())]);
    expect(crypto.verify(null, otherRoot, key, signature)).toBe(false);
  });

  test('timeseal proof --receipt writes the bytes the URL serves; the bundle (timeseal-proof/4) carries both receipts', async () => {
    const file = path.join(dir, `${beta}.receipt.cose`);
    const r = run(dir, ['proof', beta, '--receipt', file, '--receipt-mldsa65', `${file}.mldsa65`], {
      env: { ...env, TIMESEAL_NOW: `${NEXT}T09:00:00.000Z` },
    });
    expect(r.code, r.stderr).toBe(0);
    const bundle = JSON.parse(r.stdout);
    expect(bundle.format).toBe('timeseal-proof/4');
    expect(bundle.cose_receipts).toHaveLength(2);
    const served = (await get(`/api/proof/${beta}.receipt.cose`)).body;
    expect(Buffer.from(fs.readFileSync(file)).equals(Buffer.from(served))).toBe(true);
    expect(bundle.cose_receipts[0]).toBe(Buffer.from(served).toString('base64'));
    const mldsa = (await get(`/api/proof/${beta}.receipt-mldsa65.cose`)).body;
    expect(Buffer.from(fs.readFileSync(`${file}.mldsa65`)).equals(Buffer.from(mldsa))).toBe(true);
  });

  test('the day’s receipt signatures are published immutable files, and a re-check of the day reproduces them', async () => {
    const es256 = await get(`/ledgers/${DAY}.receipt-es256.cose`);
    expect(es256.res.status).toBe(200);
    expect(es256.res.headers.get('content-type')).toBe('application/cose');
    expect(es256.res.headers.get('cache-control')).toMatch(/immutable/);
    const before = fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.receipt-mldsa65.cose`));
    const again = run(dir, ['ledger', 'build', '--date', DAY], {
      env: { ...env, TIMESEAL_NOW: `${NEXT}T09:00:00.000Z` },
    });
    expect(again.code, again.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.receipt-mldsa65.cose`)).equals(before)).toBe(true);
    const anchor = await get(`/api/receipt-anchor/${beta}.ots`);
    expect(anchor.res.status).toBe(404);
    expect(JSON.parse(Buffer.from(anchor.body).toString()).error).toBe('not anchored yet');
    const unknown = await get(`/api/proof/${'0'.repeat(64)}.receipt.cose`);
    expect(unknown.res.status).toBe(404);
    expect(JSON.parse(Buffer.from(unknown.body).toString()).error).toMatch(/is not in any published ledger/);
  });

  test('timeseal verify checks each day’s receipt signatures with the published receipt keys, and names a changed one', () => {
    const atNext = { env: { ...env, TIMESEAL_NOW: `${NEXT}T09:00:00.000Z` } };
    const ok = run(dir, ['verify'], atNext);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    const file = path.join(dir, 'ledgers', `${DAY}.receipt-es256.cose`);
    const original = fs.readFileSync(file);
    try {
      const changed = Buffer.from(original);
      changed[changed.length - 1]! ^= 1;
      fs.writeFileSync(file, changed);
      const bad = run(dir, ['verify'], atNext);
      expect(bad.code).toBe(1);
      expect(bad.stdout + bad.stderr).toMatch(
        new RegExp(
          `${DAY}\\.receipt-es256\\.cose: receipt signature \\(ES256\\) over root [0-9a-f]{64}: signature does not verify`,
        ),
      );
    } finally {
      fs.writeFileSync(file, original);
    }
  });
});
