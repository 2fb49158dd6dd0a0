// SCITT registration of Signed Statements (draft-ietf-scitt-scrapi-11; docs/API.md "SCITT"), black box: a real
// `timeseal serve` takes a Signed Statement made by @transmute/cose's own signer (not ours) under a key the
// operator configured for its iss (SCITT_ISSUER_KEYS): 303 with Location, Retry-After up to the day's publication
// and an RFC 3161 receipt for the statement's entry (checked by `openssl ts -verify`); 302 while the day is open;
// `timeseal ledger build` publishes the day; then 200 with the COSE receipt and the Transparent Statement
// (receipt in label 394), both verified by @transmute/cose against GET /.well-known/scitt-keys. Refused statements
// (bad signature, no CWT claims, 65 KB, not CBOR, another Content-Type) each get their RFC 9290 problem details
// and change nothing: the published day holds exactly the registered statement and the registration policy.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as cose from '@transmute/cose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { arrayBuffer, entryOf, ISS, leafHash, sha256, signStatement, transmuteVerifier } from './cose-helpers.ts';
import { removeTempProjects, run, tempProject } from './helpers.ts';

afterAll(() => removeTempProjects());

const DAY = '2025-11-02';
const NEXT = '2025-11-03';
const ORIGIN = 'timeseal.test';

describe('SCITT registration (POST /entries) from a running timeseal serve', () => {
  let dir: string;
  let env: Record<string, string>;
  let server: SpawnedServer | undefined;
  let issuerKey: cose.SecretKeyJwk;
  let statement: Uint8Array;
  let entry: string;
  const refusedEntries: string[] = [];
  const stop = async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    server = undefined;
  };
  const request = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(`${server!.url}${url}`, { redirect: 'manual', ...init });
    return { res, body: new Uint8Array(await res.arrayBuffer()) };
  };
  const post = (body: Uint8Array, type = 'application/cose') =>
    request('/entries', { method: 'POST', headers: { 'content-type': type }, body: Buffer.from(body) });
  /** An RFC 9290 Concise Problem Details body read with @transmute/cose's CBOR: [title, detail]. */
  const problem = (res: Response, body: Uint8Array): [string, string] => {
    expect(res.headers.get('content-type')).toBe('application/concise-problem-details+cbor');
    const map = cose.cbor.decode(body) as Map<number, string>;
    return [map.get(-1)!, map.get(-2)!];
  };

  beforeAll(async () => {
    dir = tempProject('scitt-registration');
    issuerKey = await cose.key.generate<cose.SecretKeyJwk>('ES256', 'application/jwk+json');
    const issuerPublic = await cose.key.publicFromPrivate<cose.PublicKeyJwk>(issuerKey);
    fs.writeFileSync(path.join(dir, 'issuers.json'), JSON.stringify({ [ISS]: [issuerPublic] }));
    env = projectEnv(dir, {
      LOG_FORMAT: 'json',
      TIMESEAL_ORIGIN: `https://${ORIGIN}`,
      SCITT_ISSUER_KEYS: path.join(dir, 'issuers.json'),
    });
    const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
    expect(init.code, init.stderr).toBe(0);
    server = await startServer(dir, { ...env, TIMESEAL_NOW: `${DAY}T12:00:00.000Z` });
    statement = await signStatement(issuerKey, new TextEncoder().encode('{"sbom":"sha256:0123"}'));
    entry = await entryOf(statement);
  }, 120_000);
  afterAll(stop);

  test('GET /.well-known/transparency-configuration: CBOR naming the endpoints, the keys and the policy', async () => {
    const { res, body } = await request('/.well-known/transparency-configuration');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/cbor');
    // A map of text keys, which @transmute/cose's CBOR reads as an object.
    const config = cose.cbor.decode(body) as Record<string, unknown>;
    expect(config.issuer).toBe(ORIGIN);
    expect(config.registration_endpoint).toBe(`https://${ORIGIN}/entries`);
    expect(config.scitt_keys).toBe(`https://${ORIGIN}/.well-known/scitt-keys`);
    expect(config.registration_policy).toBe(`https://${ORIGIN}/api/scitt/registration-policy`);
    expect(config.registration_policy_entry).toMatch(new RegExp(`^https://${ORIGIN}/entries/[0-9a-f]{64}$`));
  });

  test('refused statements get their problem details and store nothing', async () => {
    const other = await cose.key.generate<cose.SecretKeyJwk>('ES256', 'application/jwk+json');
    const cases: Array<[string, Uint8Array, string, number, string, RegExp]> = [
      [
        'signed by another key',
        await signStatement({ ...other, kid: issuerKey.kid! }, new TextEncoder().encode('{"forged":true}')),
        'application/cose',
        400,
        'Rejected',
        /the ES256 signature does not verify with a key configured for iss "https:\/\/issuer\.example"; nothing was stored/,
      ],
      [
        'no CWT claims',
        await signStatement(issuerKey, new TextEncoder().encode('{"claims":false}'), null),
        'application/cose',
        400,
        'Rejected',
        /no CWT claims \(label 15/,
      ],
      [
        '65 KB',
        await signStatement(issuerKey, new Uint8Array(65 * 1024)),
        'application/cose',
        413,
        'Rejected',
        /at most 65536 bytes; nothing was stored/,
      ],
      [
        'not CBOR',
        new TextEncoder().encode('{"this is":"JSON"}'),
        'application/cose',
        400,
        'Malformed request',
        /not well-formed CBOR/,
      ],
      [
        'another Content-Type',
        await signStatement(issuerKey, new TextEncoder().encode('{"sent":"as JSON"}')),
        'application/json',
        415,
        'Malformed request',
        /Content-Type must be application\/cose/,
      ],
    ];
    for (const [what, body, type, status, title, detail] of cases) {
      const { res, body: answer } = await post(body, type);
      expect(res.status, what).toBe(status);
      const [gotTitle, gotDetail] = problem(res, answer);
      expect(gotTitle, what).toBe(title);
      expect(gotDetail, what).toMatch(detail);
      if (what !== 'not CBOR') refusedEntries.push(await entryOf(body));
    }
    // Nothing is queued for any of them (the well-signed statement sent as JSON included).
    for (const e of refusedEntries) {
      const status = await request(`/api/status/${e}`);
      expect(JSON.parse(Buffer.from(status.body).toString()).state).toBe('unknown');
      expect((await request(`/entries/${e}`)).res.status).toBe(404);
    }
  });

  test('a statement signed by @transmute/cose: 303 to its entry with Retry-After up to 00:01 UTC, an RFC 3161 receipt for the entry at once, and the statement kept through kill -9', async () => {
    const { res, body } = await post(statement);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`https://${ORIGIN}/entries/${entry}`);
    // 12:00 → 00:01 the next day.
    expect(res.headers.get('retry-after')).toBe(String(12 * 3600 + 60));
    expect(res.headers.get('content-type')).toBe('application/timestamp-reply');
    fs.writeFileSync(path.join(dir, 'statement.tsr'), body);
    const verified = execFileSync(
      'openssl',
      `ts -verify -digest ${entry} -in statement.tsr -CAfile keys/timeseal-tsa-root.pem -untrusted keys/timeseal-tsa.pem`.split(
        ' ',
      ),
      { cwd: dir, encoding: 'utf8' },
    );
    expect(verified).toMatch(/Verification: OK/);
    // The statement was durable before the answer: the server killed with SIGKILL right after, a new one has it.
    server!.child.kill('SIGKILL');
    await server!.exited;
    server = await startServer(dir, { ...env, TIMESEAL_NOW: `${DAY}T12:30:00.000Z` });
    // While the day is open: 302 Found to the same place, Retry-After.
    const status = await request(`/entries/${entry}`);
    expect(status.res.status).toBe(302);
    expect(status.res.headers.get('location')).toBe(`https://${ORIGIN}/entries/${entry}`);
    expect(Number(status.res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await request(`/entries/${entry}/transparent-statement`)).res.status).toBe(302);
    const bad = await request('/entries/not-an-entry');
    expect(bad.res.status).toBe(400);
    expect(problem(bad.res, bad.body)[0]).toBe('Invalid locator');
  });

  test('after the day is built: 200 with the receipt and the Transparent Statement, verified by @transmute/cose against /.well-known/scitt-keys', async () => {
    await stop();
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${NEXT}T00:01:00.000Z` } });
    expect(built.code, built.stderr).toBe(0);
    server = await startServer(dir, { ...env, TIMESEAL_NOW: `${NEXT}T09:00:00.000Z` });

    const verifier = transmuteVerifier((await request('/.well-known/scitt-keys')).body);
    const dayRoot = Buffer.from(
      fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.checkpoint`), 'utf8').split('\n')[2]!,
      'base64',
    );

    const receipt = await request(`/entries/${entry}`);
    expect(receipt.res.status).toBe(200);
    expect(receipt.res.headers.get('content-type')).toBe('application/cose');
    const root = await cose.receipt.inclusion.verify({
      entry: leafHash(Buffer.from(entry, 'hex')),
      receipt: arrayBuffer(receipt.body),
      verifier,
    });
    expect(Buffer.from(root).equals(dayRoot)).toBe(true);

    const ts = await request(`/entries/${entry}/transparent-statement`);
    expect(ts.res.status).toBe(200);
    const receipts = await cose.receipt.get(arrayBuffer(ts.body));
    expect(receipts).toHaveLength(1);
    expect(Buffer.from(receipts[0] as unknown as Uint8Array).equals(Buffer.from(receipt.body))).toBe(true);
    // Without its receipts the Transparent Statement is the registered statement: its SHA-256 is the entry.
    expect(await entryOf(ts.body)).toBe(entry);
    const again = await cose.receipt.inclusion.verify({
      entry: leafHash(Buffer.from(await entryOf(ts.body), 'hex')),
      receipt: arrayBuffer(receipts[0] as unknown as Uint8Array),
      verifier,
    });
    expect(Buffer.from(again).equals(dayRoot)).toBe(true);
    // The issuer's signature still verifies (transmute's attached verifier, the issuer's public key).
    const issuerPublic = await cose.key.publicFromPrivate<cose.PublicKeyJwk>(issuerKey);
    const payload = await cose.attached
      .verifier({ resolver: { resolve: async () => issuerPublic } })
      .verify({ coseSign1: arrayBuffer(ts.body) });
    expect(new TextDecoder().decode(payload)).toBe('{"sbom":"sha256:0123"}');
  });

  test('the registration policy is itself a registered entry whose payload is the served policy; the refused statements are in no ledger', async () => {
    const config = cose.cbor.decode((await request('/.well-known/transparency-configuration')).body) as Record<
      string,
      string
    >;
    const policyEntry = config.registration_policy_entry!.split('/').at(-1)!;
    const served = await request('/api/scitt/registration-policy');
    expect(served.res.status).toBe(200);
    expect(JSON.parse(Buffer.from(served.body).toString()).policy).toBe('timeseal-registration-policy/1');
    const ts = await request(`/entries/${policyEntry}/transparent-statement`);
    expect(ts.res.status).toBe(200);
    const [protectedBytes, , payload] = (cose.cbor.decode(ts.body) as { value: [Uint8Array, unknown, Uint8Array] })
      .value;
    expect(Buffer.from(payload).equals(Buffer.from(served.body))).toBe(true);
    const claims = (cose.cbor.decode(protectedBytes) as Map<number, Map<number, string>>).get(15)!;
    expect([claims.get(1), claims.get(2)]).toEqual([ORIGIN, 'registration-policy']);
    // The day's ledger holds the statement and the policy, and nothing refused.
    const ledger = JSON.parse(fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.json`), 'utf8')) as {
      entries?: Array<{ hash: string }>;
    };
    const hashes = JSON.stringify(ledger);
    expect(hashes).toContain(entry);
    expect(hashes).toContain(policyEntry);
    for (const e of refusedEntries) expect(hashes).not.toContain(e);
  });

  test("the day's statements are published beside its ledger (immutable), checked by timeseal verify and copied by mirror pull", async () => {
    const rel = `${DAY}.statements.cbor`;
    const file = await request(`/ledgers/${rel}`);
    expect(file.res.status).toBe(200);
    expect(file.res.headers.get('content-type')).toBe('application/cbor');
    expect(file.res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // An array of the day's statements as the log holds them, in entry order: the registered one and the policy.
    const listed = (cose.cbor.decode(file.body) as Uint8Array[]).map((b) => new Uint8Array(b));
    const entries = await Promise.all(listed.map((b) => entryOf(b)));
    expect(entries).toHaveLength(2);
    expect(entries).toContain(entry);
    expect([...entries].sort()).toEqual(entries);
    expect(
      Buffer.from(listed[entries.indexOf(entry)]!).equals(
        Buffer.from(await cose.receipt.remove(arrayBuffer(statement))),
      ),
    ).toBe(true);

    // timeseal verify checks each statement's signature again: the policy's with the receipt key, the issuer's
    // with SCITT_ISSUER_KEYS; without that setting the issuer's is named as not checked.
    const verified = run(dir, ['verify', '--json'], { env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout).notes.join('\n')).not.toMatch(/statements\.cbor/);
    const noIssuerKeys = run(dir, ['verify', '--json'], { env: { ...env, SCITT_ISSUER_KEYS: undefined } });
    expect(noIssuerKeys.code, noIssuerKeys.stdout + noIssuerKeys.stderr).toBe(0);
    expect(JSON.parse(noIssuerKeys.stdout).notes).toContain(
      `${rel}: the signature of 1 statement not checked: no x5chain and no key for its iss (SCITT_ISSUER_KEYS)`,
    );
    const mirror = path.join(dir, 'mirror');
    const pulled = run(dir, ['mirror', 'pull', `${server!.url}/ledgers/`, mirror, '--keys', path.join(dir, 'keys')]);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(fs.readFileSync(path.join(mirror, rel)).equals(fs.readFileSync(path.join(dir, 'ledgers', rel)))).toBe(true);

    // A statements file that was tampered with fails the check: a statement's byte flipped (its entry then is
    // in no ledger), and the file cut short.
    const published = fs.readFileSync(path.join(dir, 'ledgers', rel));
    try {
      // The issuer's statement with its last byte (of the signature) flipped, the array re-sorted by entry.
      const forged = listed.map((b, i) =>
        i === entries.indexOf(entry) ? Buffer.from(b).map((x, j) => (j === b.length - 1 ? x ^ 1 : x)) : Buffer.from(b),
      );
      const sorted = forged.map((b) => ({ b, e: sha256(b).toString('hex') })).sort((x, y) => (x.e < y.e ? -1 : 1));
      fs.writeFileSync(path.join(dir, 'ledgers', rel), new Uint8Array(cose.cbor.encode(sorted.map((x) => x.b))));
      const refused = run(dir, ['verify'], { env });
      expect(refused.code).toBe(1);
      const forgedEntry = sha256(forged[entries.indexOf(entry)]!).toString('hex');
      expect(refused.stdout).toContain(
        `statements.cbor: the statement of entry ${forgedEntry}: the ES256 signature does not verify with a key configured for iss "${ISS}"`,
      );
      expect(refused.stdout).toContain(
        `statements.cbor: the statement of entry ${forgedEntry} is not in the day's ledger`,
      );
      // The same file served to a new mirror: mirror pull refuses it and keeps nothing of the day.
      const other = path.join(dir, 'mirror-of-forged');
      const forgedPull = run(dir, [
        'mirror',
        'pull',
        `${server!.url}/ledgers/`,
        other,
        '--keys',
        path.join(dir, 'keys'),
      ]);
      expect(forgedPull.code).not.toBe(0);
      expect(forgedPull.stderr).toContain(`${rel}: the statement of entry ${forgedEntry}`);
      expect(fs.existsSync(path.join(other, rel))).toBe(false);
      fs.writeFileSync(path.join(dir, 'ledgers', rel), published.subarray(0, published.length - 3));
      expect(run(dir, ['verify'], { env }).stdout).toMatch(/statements\.cbor: .*truncated/);
    } finally {
      fs.writeFileSync(path.join(dir, 'ledgers', rel), published);
    }
  });
});
