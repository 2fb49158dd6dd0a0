// The public API through inject(): every route's success and error bodies, the product's texts (docs/API.md), the free
// tier's limit, forged X-Forwarded-For, the beta API, and what the archive-backed routes report.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../core/encoding.ts';
import { parseProofBundle, verifyProofBundle } from '../../core/proof.ts';
import { parseTlogProof, verifyTlogProof } from '../../core/tlog-proof.ts';
import { buildLedgers } from '../../pipeline/build.ts';
import { loadPublicKeys, loadSigningKeys } from '../../runtime/keys.ts';
import { DAILY_LIMIT_ERROR } from '../limits.ts';
import { DAILY_LIMIT_ERROR_NO_PAYMENTS } from '../limit-answer.ts';
import { betaResponse, betaResponseWriter } from '../routes/beta.ts';
import { DAY, makeFixture, NOW, ORIGIN, randomHash, removeTempDirs, sha256, TODAY, type Fixture } from './fixture.ts';
import { openSqliteStore } from '../../store/sqlite/engine.ts';

const INVALID_HASH = 'Invalid hash format. Expected 64-character hexadecimal SHA-256 hash.';
const CSP =
  "default-src 'self';script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval';style-src 'self' 'unsafe-inline';img-src 'self' data:;connect-src 'self';frame-ancestors 'none';object-src 'none';base-uri 'self'";

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

const post = (url: string, payload: unknown, options: { ip?: string; headers?: Record<string, string> } = {}) =>
  f.app.inject({
    method: 'POST',
    url,
    payload: payload as object,
    remoteAddress: options.ip ?? '198.51.100.7',
    headers: options.headers ?? {},
  });

const submissionsOf = (hash: string): Array<{ source: string; file_name: string | null; ledger_date: string }> =>
  f.db.prepare('SELECT source, file_name, ledger_date FROM submissions WHERE hash = ?').all(hash) as never;

describe('POST /api/submit (free tier)', () => {
  it('accepts a hash, stores it lower-cased with its file name, and answers ok', async () => {
    const hash = randomHash();
    const res = await post('/api/submit', { hash: hash.toUpperCase(), fileName: 'report.pdf' }, { ip: '198.51.100.1' });
    expect(res.statusCode).toBe(201);
    // With the hash's receipt (an RFC 3161 token, base64 DER; checked in receipts.test.ts).
    expect(res.json()).toEqual({
      ok: true,
      hash,
      submittedAt: NOW,
      ledgerDate: TODAY,
      message: 'Your timestamp has been submitted',
      remainingToday: 1,
      receipt: expect.stringMatching(/^MII[A-Za-z0-9+/]+=*$/),
    });
    expect(submissionsOf(hash)).toEqual([{ source: 'web', file_name: 'report.pdf', ledger_date: TODAY }]);
  });

  it('allows 2 a day per IP; the third gets 429 with the limit text and is not stored', async () => {
    const ip = '198.51.100.2';
    for (let i = 0; i < 2; i++)
      expect((await post('/api/submit', { hash: randomHash() }, { ip })).statusCode).toBe(201);
    const hash = randomHash();
    const res = await post('/api/submit', { hash }, { ip });
    expect(res.statusCode).toBe(429);
    // No payments configured here: the text does not offer the upgrade (limit-answer.ts).
    expect(res.json()).toEqual({
      ok: false,
      error: DAILY_LIMIT_ERROR_NO_PAYMENTS,
      message: DAILY_LIMIT_ERROR_NO_PAYMENTS,
      limit: { period: 'day', max: 2, resetsAt: '2025-11-04T00:00:00.000Z' },
    });
    expect(DAILY_LIMIT_ERROR).toBe(
      'Daily limit reached: the free tier allows 2 timestamps per day. Try again tomorrow or upgrade to Standard.',
    );
    expect(submissionsOf(hash)).toEqual([]);
    expect((await post('/api/submit', { hash: randomHash() }, { ip: '198.51.100.3' })).statusCode).toBe(201);
  });

  it('20 concurrent submissions from one IP: exactly 2 accepted', async () => {
    const before = f.rowCounts().submissions!;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post('/api/submit', { hash: randomHash() }, { ip: '198.51.100.20' })),
    );
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(2);
    expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(18);
    expect(f.rowCounts().submissions! - before).toBe(2);
  });

  it('a forged X-Forwarded-For buys nothing without TRUST_PROXY', async () => {
    const ip = '198.51.100.30';
    const codes = [];
    for (let i = 0; i < 5; i++) {
      codes.push(
        (await post('/api/submit', { hash: randomHash() }, { ip, headers: { 'x-forwarded-for': `203.0.113.${i}` } }))
          .statusCode,
      );
    }
    expect(codes).toEqual([201, 201, 429, 429, 429]);
  });

  it('rejects a bad hash, unknown fields and wrong types with {ok:false, error}', async () => {
    const cases: Array<[unknown, string]> = [
      [{ hash: 'abc' }, INVALID_HASH],
      [{ hash: 'g'.repeat(64) }, INVALID_HASH],
      [{ hash: 42 }, INVALID_HASH],
      [{}, INVALID_HASH],
      [{ hash: randomHash(), extra: 1 }, 'body: unknown field "extra"'],
      [{ hash: randomHash(), fileName: 7 }, 'fileName: must be of type string,null'],
      [{ hash: randomHash(), fileName: 'x'.repeat(256) }, 'fileName: must be at most 255 characters'],
      [[randomHash()], 'body: must be a JSON object'],
    ];
    const before = f.rowCounts();
    for (const [body, error] of cases) {
      const res = await post('/api/submit', body, { ip: '198.51.100.40' });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toEqual({ ok: false, error, message: error });
    }
    expect(f.rowCounts()).toEqual(before);
  });
});

describe('POST /api/v1/beta/timestamp', () => {
  it('answers 201 with the beta shape and how and when to verify', async () => {
    const hash = randomHash();
    const res = await post('/api/v1/beta/timestamp', { hash: hash.toUpperCase() });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ success: true, hash, submittedAt: NOW, ledgerDate: TODAY, origin: 'api_beta' });
    expect(body.message).toContain(TODAY);
    expect(body.note).toMatch(/beta/i);
    expect(body.verification).toMatchObject({
      availableAt: '2025-11-04T00:01:00.000Z',
      verifyUrl: `${ORIGIN}/verify?hash=${hash}&search=true`,
      proofUrl: `${ORIGIN}/api/proof/${hash}`,
      ledgerUrl: `${ORIGIN}/ledgers/${TODAY}.json`,
    });
    expect(body.verification.instructions).toContain(`${ORIGIN}/keys/dilithium_public.key`);
    expect(submissionsOf(hash)).toEqual([{ source: 'api_beta', file_name: null, ledger_date: TODAY }]);
  });

  it('answers 400 with the spec text and a valid example for a bad hash', async () => {
    for (const body of [{ hash: 'xyz' }, { hash: `${randomHash()}0` }, { hash: null }, {}]) {
      const res = await post('/api/v1/beta/timestamp', body);
      expect(res.statusCode).toBe(400);
      const json = res.json();
      expect(json).toEqual({
        success: false,
        error: INVALID_HASH,
        message: INVALID_HASH,
        example: { hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      });
    }
    const extra = await post('/api/v1/beta/timestamp', { hash: randomHash(), fileName: 'a' });
    expect(extra.statusCode).toBe(400);
    expect(extra.json()).toMatchObject({ success: false, error: 'body: unknown field "fileName"' });
  });

  it('writes the same JSON as serializing the answer, across a change of day and for an origin that needs escaping', () => {
    for (const base of [ORIGIN, 'https://example.org/a"b\\c']) {
      const write = betaResponseWriter(base);
      for (const [hash, at, day] of [
        [randomHash(), '2025-11-03T23:59:59.999Z', '2025-11-03'],
        [randomHash(), '2025-11-04T00:00:00.000Z', '2025-11-04'],
        [randomHash(), '2025-11-04T12:00:00.000Z', '2025-11-04'],
      ] as const) {
        const text = write(hash, at, day);
        expect(text).toBe(JSON.stringify(betaResponse(base, hash, at, day)));
        expect(JSON.parse(text).verification.proofUrl).toBe(`${base}/api/proof/${hash}`);
      }
    }
  });

  it('has no rate limit', async () => {
    const codes = await Promise.all(
      Array.from({ length: 10 }, () => post('/api/v1/beta/timestamp', { hash: randomHash() }, { ip: '198.51.100.50' })),
    );
    expect(codes.map((r) => r.statusCode)).toEqual(Array(10).fill(201));
  });
});

describe('status routes', () => {
  it('queue-stats counts unpublished submissions and reports the anchored day', async () => {
    const res = await f.app.inject('/api/queue-stats.php');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const waiting = (
      f.db.prepare('SELECT COUNT(*) AS n FROM submissions WHERE ledger_date > ?').get(DAY) as { n: number }
    ).n;
    expect(body).toEqual({
      status: 'operational',
      lastUpdate: NOW,
      latestAnchoredDay: '',
      queueSize: waiting,
      lastPublishedDay: DAY,
      submissionsOpen: true,
    });
    expect(waiting).toBeGreaterThan(0);
    fs.writeFileSync(
      path.join(f.config.archive, 'ots_status.json'),
      JSON.stringify({ latest_ots_ok: DAY, last_update: NOW, queue_size: 0 }),
    );
    expect((await f.app.inject('/api/queue-stats.php')).json().latestAnchoredDay).toBe(DAY);
  });

  it('ledgers.php lists published days with real signature verification and OTS state', async () => {
    fs.writeFileSync(
      path.join(f.config.archive, 'ots_status.json'),
      JSON.stringify({ latest_ots_ok: '', last_update: NOW, queue_size: 1 }),
    );
    let body = (await f.app.inject('/api/ledgers.php')).json();
    expect(body.ledgers).toEqual([
      {
        date: DAY,
        jsonUrl: `/ledgers/${DAY}.json`,
        otsUrl: `/ledgers/${DAY}.json.ots`,
        otsStatus: 'pending',
        signatureVerified: true,
        entryCount: 3,
        rfc3161: [],
      },
    ]);
    expect(body.otsStatus).toEqual({ latest_ots_ok: '', last_update: NOW, queue_size: 1 });
    fs.writeFileSync(
      path.join(f.config.archive, 'block_info.json'),
      JSON.stringify({ ledgers: { [DAY]: { block_height: 922004, confirmations: 7 } }, pending: {} }),
    );
    body = (await f.app.inject('/api/ledgers.php')).json();
    expect(body.ledgers[0].otsStatus).toBe('verified');
    expect((await f.app.inject('/api/ots-block-info.php')).json()).toEqual({
      ledgers: { [DAY]: { block_height: 922004, confirmations: 7 } },
    });
    fs.rmSync(path.join(f.config.archive, 'block_info.json'));
    expect((await f.app.inject('/api/ots-block-info.php')).json()).toEqual({ ledgers: {} });
  });

  it('verify-quantum reports real verification; bad and unknown dates are 4xx', async () => {
    const ok = await f.app.inject(`/api/verify-quantum.php?date=${DAY}`);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({
      date: DAY,
      quantum_shield: true,
      dual_signature: true,
      ecdsa_p256: true,
      ml_dsa_65: true,
    });
    expect((await f.app.inject('/api/verify-quantum.php?date=2025-11-01')).statusCode).toBe(404);
    expect((await f.app.inject('/api/verify-quantum.php?date=2025-11-01')).json()).toEqual({
      error: 'No published ledger for 2025-11-01',
      message: 'No published ledger for 2025-11-01',
    });
    for (const q of [
      'date=2025-02-30',
      'date=20251102',
      'date=2025-11-02T00:00',
      '',
      'date=2025-11-02&x=1',
      'date=2025-11-02&date=2025-11-03',
    ]) {
      const res = await f.app.inject(`/api/verify-quantum.php?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(typeof res.json().error).toBe('string');
    }
  });
});

describe('GET /api/proof/:hash', () => {
  it('returns a proof bundle that verifies offline with the public keys', async () => {
    const hash = f.published[1]!;
    const res = await f.app.inject(`/api/proof/${hash.toUpperCase()}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const bundle = parseProofBundle(res.body);
    expect(bundle.hash).toBe(hash);
    expect(bundle.date).toBe(DAY);
    expect(() => verifyProofBundle(bundle, loadPublicKeys(f.config.keys))).not.toThrow();
  });

  it('404 for an unknown hash, 400 for a malformed one, and no .ots before anchoring', async () => {
    const unknown = randomHash();
    expect((await f.app.inject(`/api/proof/${unknown}`)).statusCode).toBe(404);
    expect((await f.app.inject(`/api/proof/${unknown}`)).json()).toEqual({
      error: `${unknown} is not in any published ledger`,
      message: `${unknown} is not in any published ledger`,
    });
    expect((await f.app.inject('/api/proof/abc')).statusCode).toBe(400);
    const ots = await f.app.inject(`/api/proof/${f.published[0]}.ots`);
    expect(ots.statusCode).toBe(404);
    expect(ots.json()).toEqual({ error: 'not anchored yet', message: 'not anchored yet' });
  });
});

describe('GET /api/proof/:hash.tlog-proof', () => {
  it('answers the c2sp.org/tlog-proof@v1 of a published hash: the bundle’s leaf, path and day checkpoint, verified with the keys', async () => {
    const hash = f.published[1]!;
    const res = await f.app.inject(`/api/proof/${hash.toUpperCase()}.tlog-proof`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${hash}.tlog-proof"`);
    expect(res.body.startsWith('c2sp.org/tlog-proof@v1\n')).toBe(true);
    const proof = parseTlogProof(res.body);
    const verified = verifyTlogProof(proof, loadPublicKeys(f.config.keys), { hash: fromHex(hash) });
    expect(verified.hash).toBe(hash);
    const bundle = parseProofBundle((await f.app.inject(`/api/proof/${hash}`)).body);
    expect(bundle.date).toBe(DAY);
    expect(proof.index).toBe(bundle.leafIndex);
    expect(proof.proof.map(toHex)).toEqual(bundle.inclusionPath);
    expect(proof.checkpoint).toBe(bundle.checkpoint);
    expect(verified.treeSize).toBe(bundle.treeSize);
  });

  it('404 with a JSON message for an unknown hash, 400 for a malformed one', async () => {
    const unknown = randomHash();
    const missing = await f.app.inject(`/api/proof/${unknown}.tlog-proof`);
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/json/);
    expect(missing.json()).toEqual({
      error: `${unknown} is not in any published ledger`,
      message: `${unknown} is not in any published ledger`,
    });
    for (const bad of ['abc', `${unknown}0`, `${unknown.slice(1)}g`]) {
      const res = await f.app.inject(`/api/proof/${bad}.tlog-proof`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error, bad).toMatch(/hash/);
    }
  });
});

describe('GET /api/certificate.php', () => {
  it('prints a certificate for a published hash with its date, time, status and proof links', async () => {
    const hash = f.published[0]!;
    const res = await f.app.inject(`/api/certificate.php?hash=${hash}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    for (const text of [
      hash,
      DAY,
      `${DAY}T09:00:00.000Z`,
      'Bitcoin',
      `/api/proof/${hash}`,
      `/ledgers/${DAY}.json.dilithium.sig`,
      `/ledgers/${DAY}.json.sig`,
      'timeseal.test\n3\n',
    ]) {
      expect(res.body).toContain(text);
    }
    expect(res.body).toMatch(/ML-DSA-65 signature \(quantum shield\)<\/dt><dd><span class="ok">Verified/);
  });

  it('says where the anchoring stands in the words every surface uses: pending, delayed with its reason, anchored', async () => {
    const hash = f.published[0]!;
    const info = path.join(f.config.archive, 'block_info.json');
    const saved = fs.existsSync(info) ? fs.readFileSync(info) : undefined;
    const bitcoin = async () =>
      /<dt>Bitcoin<\/dt><dd>(.*?)<\/dd>/.exec((await f.app.inject(`/api/certificate.php?hash=${hash}`)).body)![1];
    try {
      fs.writeFileSync(
        info,
        JSON.stringify({
          ledgers: {},
          pending: {
            [DAY]: {
              state: 'not-stamped',
              reason: 'not yet submitted to the OpenTimestamps calendars (anchoring runs at 00:02 UTC)',
              checked_at: NOW,
            },
          },
        }),
      );
      expect(await bitcoin()).toBe(
        '<span class="wait">Pending: the ledger is submitted for Bitcoin anchoring at 00:02 UTC and typically confirmed within 12 to 24 hours</span>',
      );
      fs.writeFileSync(
        info,
        JSON.stringify({
          ledgers: {},
          pending: {
            [DAY]: {
              state: 'not-stamped',
              reason: 'only 0 of 2 calendars answered (a.example: refused); next attempt at 2025-11-03T14:00:00.000Z',
              checked_at: NOW,
            },
          },
        }),
      );
      expect(await bitcoin()).toBe(
        '<span class="bad">Bitcoin anchoring is delayed; next try 2025-11-03 14:00 UTC</span>',
      );
      fs.writeFileSync(
        info,
        JSON.stringify({
          ledgers: {},
          pending: {
            [DAY]: { state: 'unverified', reason: 'the block header at height 5 does not match', checked_at: NOW },
          },
        }),
      );
      expect(await bitcoin()).toBe('<span class="bad">Bitcoin anchoring is delayed; it is retried every hour</span>');
      fs.writeFileSync(
        info,
        JSON.stringify({ ledgers: { [DAY]: { block_height: 922004, confirmations: 7 } }, pending: {} }),
      );
      expect(await bitcoin()).toMatch(/^<span class="ok">Anchored in Bitcoin block 922004<\/span> \(7 confirmations/);
    } finally {
      if (saved) fs.writeFileSync(info, saved);
      else fs.rmSync(info, { force: true });
    }
  });

  it('404 page for an unknown hash or id, escaping what the user sent; 400 for bad queries', async () => {
    const unknown = await f.app.inject(`/api/certificate.php?hash=${randomHash()}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('Certificate not found');
    const id = await f.app.inject(`/api/certificate.php?id=${encodeURIComponent('<script>alert(1)</script>"')}`);
    expect(id.statusCode).toBe(404);
    expect(id.body).not.toContain('<script>alert(1)');
    expect(id.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;');
    for (const q of ['', `hash=${f.published[0]}&id=1`, 'hash=<b>', 'hash=1&hash=2', 'foo=1']) {
      const res = await f.app.inject(`/api/certificate.php?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error).toBeTypeOf('string');
    }
  });
});

describe('same hash twice in a day', () => {
  it('both submissions succeed and the ledger holds it once', async () => {
    const hash = sha256('twice in one day');
    expect((await post('/api/v1/beta/timestamp', { hash })).statusCode).toBe(201);
    expect((await post('/api/submit', { hash }, { ip: '198.51.100.60' })).statusCode).toBe(201);
    expect(submissionsOf(hash)).toHaveLength(2);
    const [built] = await buildLedgers({
      config: f.config,
      store: openSqliteStore(f.config.db, { db: f.db }),
      clock: () => new Date('2025-11-04T00:01:00.000Z'),
      keys: loadSigningKeys({ keys: f.config.keys, privateKeys: f.config.privateKeys }),
    });
    expect(built!.date).toBe(TODAY);
    const ledger = fs.readFileSync(path.join(f.config.archive, `${TODAY}.json`), 'utf8');
    expect(ledger.split(hash).length - 1).toBe(1);
    const proof = await f.app.inject(`/api/proof/${hash}`);
    expect(proof.json().date).toBe(TODAY);
  });
});

describe('errors, limits and headers', () => {
  it('malformed bodies are clear 4xx JSON answers', async () => {
    const send = (payload: string | Buffer, type = 'application/json') =>
      f.app.inject({ method: 'POST', url: '/api/v1/beta/timestamp', payload, headers: { 'content-type': type } });
    const cases: Array<[string | Buffer, string, number, string]> = [
      ['{"hash": ', 'application/json', 400, 'Request body is not valid JSON'],
      [
        Buffer.from([0x7b, 0x22, 0x68, 0xff, 0xfe, 0x22, 0x7d]),
        'application/json',
        400,
        'Request body is not valid UTF-8',
      ],
      [`{"hash":"${'a'.repeat(20_000)}"}`, 'application/json', 413, 'Request body is larger than 16384 bytes'],
      ['hash=abc', 'application/x-www-form-urlencoded', 415, 'Content-Type must be application/json'],
      ['', 'application/json', 400, 'Request body is empty; expected a JSON object'],
    ];
    for (const [payload, type, status, error] of cases) {
      const res = await send(payload, type);
      expect(res.statusCode, error).toBe(status);
      expect(res.json()).toMatchObject({ success: false, error });
    }
    const plain = await f.app.inject({
      method: 'POST',
      url: '/api/contact',
      payload: '[',
      headers: { 'content-type': 'application/json' },
    });
    expect(plain.statusCode).toBe(400);
    expect(plain.json()).toEqual({
      error: 'Request body is not valid JSON',
      message: 'Request body is not valid JSON',
    });
  });

  it('unknown API paths are 404 JSON; a server fault is a 500 that reveals nothing', async () => {
    const missing = await f.app.inject('/api/nothing-here');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toMatch(/^No API endpoint GET \/api\/nothing-here/);
    const days = path.join(f.config.archive, 'days.json');
    const saved = fs.readFileSync(days);
    fs.writeFileSync(days, '{"format":"broken"');
    try {
      const res = await f.app.inject('/api/ledgers.php');
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ error: 'Internal server error', message: 'Internal server error' });
    } finally {
      fs.writeFileSync(days, saved);
    }
  });

  it('sends the site security headers on pages and the API set on JSON answers', async () => {
    const page = await f.app.inject('/no-such-page');
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe(CSP);
    expect(page.headers['cross-origin-opener-policy']).toBe('same-origin');
    for (const res of [
      page,
      await f.app.inject('/api/queue-stats.php'),
      await post('/api/v1/beta/timestamp', { hash: 'bad' }),
    ]) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    }
    for (const url of ['/api/queue-stats.php', '/api/no-such-endpoint']) {
      const res = await f.app.inject(url);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
      expect(res.headers['cross-origin-opener-policy']).toBeUndefined();
    }
  });

  it('publishes an OpenAPI 3 document of every public route a program may call, and of no account route', async () => {
    const res = await f.app.inject('/api/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/.well-known/scitt-keys',
      '/.well-known/scitt-keys/{kid}',
      '/.well-known/transparency-configuration',
      '/api/certificate.php',
      '/api/ledgers-calendar.php',
      '/api/ledgers.php',
      '/api/ots-block-info.php',
      '/api/proof/{hash}',
      '/api/proof/{hash}.ots',
      '/api/proof/{hash}.receipt-mldsa65.cose',
      '/api/proof/{hash}.receipt.cose',
      '/api/proof/{hash}.tlog-proof',
      '/api/queue-stats.php',
      '/api/receipt-anchor/{hash}.ots',
      '/api/scitt/registration-policy',
      '/api/status/{hash}',
      '/api/submit',
      '/api/v1/beta/timestamp',
      '/api/v1/beta/timestamps',
      '/api/v1/timestamp',
      '/api/v1/timestamp/certchain',
      '/api/verify-quantum.php',
      '/entries',
      '/entries/{id}',
      '/entries/{id}/transparent-statement',
      '/keys/sigstore-trusted-root.json',
      '/ledgers/feed.xml',
      '/tsa',
      '/tsa/certs',
    ]);
    expect(Object.keys(doc.paths['/tsa'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/api/v1/timestamp'])).toEqual(['post']);
    for (const [route, methods] of Object.entries(doc.paths as Record<string, Record<string, { summary?: string }>>))
      for (const [method, op] of Object.entries(methods))
        expect(op.summary, `${method.toUpperCase()} ${route} has a summary`).toMatch(/\w{3}/);
    // Every GET and POST route the app has is in it, but for the accounts', the site's pages and files, and these.
    const notForPrograms = [
      /^\/api\/(auth|stripe)\//,
      /^\/api\/(subscription|quota\/usage|timestamps|site-config|contact|professional-waitlist\.php|openapi\.json)$/,
      /^(\*|\/verify\/?|\/robots\.txt|\/sitemap\.xml|\/favicon\.ico)$/,
    ];
    const routes: string[] = [];
    const parents: string[] = [];
    for (const line of f.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)$/.exec(line);
      if (m === null) continue;
      const depth = m[1]!.length / 4;
      parents[depth] = (parents[depth - 1] ?? '') + m[2]!;
      parents.length = depth + 1;
      const route = parents[depth]!.replace(/:(\w+)/g, '{$1}');
      for (const method of m[3]!.split(', '))
        if ((method === 'GET' || method === 'POST') && !notForPrograms.some((r) => r.test(parents[depth]!)))
          routes.push(`${method} ${route}`);
    }
    // The tree's nested routes are read whole.
    expect(routes).toEqual(
      expect.arrayContaining(['POST /api/v1/beta/timestamps', 'GET /.well-known/scitt-keys/{kid}']),
    );
    const documented = Object.entries(doc.paths as Record<string, object>).flatMap(([route, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
    );
    // GET /tsa is a person's: a browser sent on to the policy page.
    expect(routes.filter((r) => r !== 'GET /tsa' && !documented.includes(r))).toEqual([]);
    const op = doc.paths['/api/v1/beta/timestamp'].post;
    expect(Object.keys(op.responses).sort()).toEqual(['201', '4XX', '5XX'].sort());
    expect(op.requestBody.content['application/json'].schema.properties.hash.pattern).toBe('^[0-9a-fA-F]{64}$');
    expect(op.requestBody.content['application/json'].schema.properties.receipt.type).toBe('boolean');
  });
});
