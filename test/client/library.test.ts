// The client library's parts in-process, against a stand-in fetch (client/src; the packed program is
// client.test.ts): stamping in batches and the fallback to single requests, Retry-After and cancellation, a
// connection that breaks mid-run (nothing more sent), the proof file's strict parsing, globs and sha256sum
// lists, pinning keys on first use and refusing changed ones, the witness policy's judgement of a checkpoint's
// cosignatures, and the fork memory.
import crypto from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { signCheckpoint } from '../../core/checkpoint.ts';
import {
  ed25519CosignatureSigner,
  ed25519PublicKey,
  encodeVkey,
  NOTE_TYPE_ED25519_COSIGNATURE,
} from '../../core/cosignature.ts';
import { toBase64 } from '../../core/encoding.ts';
import { ecdsaNoteSigner, mldsaNoteSigner } from '../../core/note.ts';
import { ecdsaKeygen, ecdsaPublicKeyToPem, mldsaKeygen } from '../../core/sig.ts';
import { encodeWitnessPolicy } from '../../core/witness-policy.ts';
import { checkpointLines } from '../../client/src/checks.ts';
import { globToRegExp, excluded, parseSha256sum } from '../../client/src/cli/files.ts';
import { isTemporary, TimesealClientError } from '../../client/src/errors.ts';
import { loadKeys } from '../../client/src/keys.ts';
import { encodeProofFile, newProofFile, parseProofFile } from '../../client/src/proof-file.ts';
import { stamp } from '../../client/src/stamp.ts';
import { emptyTrust, learnWitnessPolicy, pinServer, rememberCheckpoint } from '../../client/src/trust.ts';
import { upgrade } from '../../client/src/upgrade.ts';
import type { KeyFiles } from '../../client/src/types.ts';

const hex = (): string => crypto.randomBytes(32).toString('hex');
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A fetch answering by `route(method, path, body)`, recording each call. */
function fakeFetch(route: (method: string, path: string, body: any) => Response | Promise<Response>) {
  const calls: string[] = [];
  const fetch = async (input: string, init?: RequestInit) => {
    const url = new URL(input);
    calls.push(`${init?.method ?? 'GET'} ${url.pathname}`);
    return route(
      init?.method ?? 'GET',
      url.pathname,
      typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    );
  };
  return { fetch, calls };
}

describe('stamp', () => {
  test('a server without the batch route: one request per distinct hash after one probe', async () => {
    const [a, b] = [hex(), hex()];
    const { fetch, calls } = fakeFetch((_m, p, body) =>
      p === '/api/v1/beta/timestamps'
        ? json(404, { error: 'No API endpoint' })
        : json(201, {
            hash: body.hash,
            submittedAt: '2025-11-02T12:00:00.000Z',
            ledgerDate: '2025-11-02',
            receipt: 'AAEC',
          }),
    );
    const s = await stamp([a, b, a.toUpperCase(), b], { server: 'http://timeseal.test/', fetch });
    expect(s.batched).toBe(false);
    expect(s.results.map((r) => r.hash)).toEqual([a, b]);
    expect(s.results.every((r) => r.ok && r.receipt === 'AAEC')).toBe(true);
    expect(calls.sort()).toEqual([
      'POST /api/v1/beta/timestamp',
      'POST /api/v1/beta/timestamp',
      'POST /api/v1/beta/timestamps',
    ]);
    expect(s.requests).toBe(3);
  });

  test('batches: accepted and already are stamped (the batch time), invalid ones fail, chunks of batchSize', async () => {
    const hashes = [hex(), hex(), hex()];
    const { fetch, calls } = fakeFetch((_m, _p, body) =>
      json(200, {
        success: true,
        submittedAt: '2025-11-02T12:00:00.000Z',
        ledgerDate: '2025-11-02',
        results: body.hashes.map((h: string) =>
          h === hashes[2]
            ? { hash: h, status: 'invalid', error: 'hash: not 64 hex' }
            : { hash: h, status: h === hashes[1] ? 'already' : 'accepted', receipt: 'AAEC' },
        ),
      }),
    );
    const s = await stamp(hashes, { server: 'http://timeseal.test', fetch, batchSize: 2 });
    expect(s.batched).toBe(true);
    expect(calls).toEqual(['POST /api/v1/beta/timestamps', 'POST /api/v1/beta/timestamps']);
    expect(s.results.map((r) => r.ok)).toEqual([true, true, false]);
    expect(s.results[0]).toMatchObject({ submittedAt: '2025-11-02T12:00:00.000Z', ledgerDate: '2025-11-02' });
    expect(!s.results[2]!.ok && s.results[2]!.error.message).toMatch(/not 64 hex/);
  });

  test("a 503 with Retry-After is asked again after the wait; an abort during the wait is an 'aborted' error", async () => {
    let n = 0;
    const { fetch } = fakeFetch((_m, p, body) =>
      p.endsWith('timestamps')
        ? json(404, {})
        : n++ === 0
          ? json(503, { error: 'busy' }, { 'retry-after': '1' })
          : json(201, { hash: body.hash, submittedAt: 't', ledgerDate: '2025-11-02', receipt: 'AAEC' }),
    );
    const t0 = Date.now();
    const s = await stamp([hex()], { server: 'http://timeseal.test', fetch });
    expect(s.results[0]!.ok).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);

    const always503 = fakeFetch(() => json(503, { error: 'busy' }, { 'retry-after': '30' }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await stamp([hex()], {
      server: 'http://timeseal.test',
      fetch: always503.fetch,
      signal: controller.signal,
      batch: 'never',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimesealClientError);
    expect((err as TimesealClientError).code).toBe('aborted');
  });

  test('the connection breaking at the third batch: that batch and the later ones fail as temporary, and nothing more is sent', async () => {
    const hashes = Array.from({ length: 10 }, hex);
    let batches = 0;
    const { fetch, calls } = fakeFetch((_m, _p, body) => {
      if (++batches === 3) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
      return json(200, {
        success: true,
        submittedAt: '2025-11-02T12:00:00.000Z',
        ledgerDate: '2025-11-02',
        results: body.hashes.map((h: string) => ({ hash: h, status: 'accepted', receipt: 'AAEC' })),
      });
    });
    const seen: string[] = [];
    const s = await stamp(hashes, {
      server: 'http://timeseal.test',
      fetch,
      batchSize: 2,
      attempts: 1,
      onResult: (r) => void seen.push(r.hash),
    });
    expect(calls).toHaveLength(3);
    expect(s.results.map((r) => r.ok)).toEqual([true, true, true, true, false, false, false, false, false, false]);
    expect(s.interrupted).toMatchObject({
      code: 'network',
      message: expect.stringMatching(/timestamps: fetch failed \(ECONNRESET\)$/),
    });
    expect(s.results.slice(4).map((r) => !r.ok && isTemporary(r.error))).toEqual(Array(6).fill(true));
    expect(!s.results[4]!.ok && s.results[4]!.error.message).toMatch(/^POST .*fetch failed/);
    expect(!s.results[6]!.ok && s.results[6]!.error.message).toMatch(/^not sent: POST .*fetch failed/);
    expect(seen.sort()).toEqual([...hashes].sort()); // each result delivered once

    // One hash at a time (no batch route): after a 503 without Retry-After, the rest are not sent.
    let singles = 0;
    const single = fakeFetch((_m, p, body) =>
      p.endsWith('timestamps')
        ? json(404, {})
        : ++singles === 2
          ? json(503, { error: 'down for maintenance' })
          : json(201, { hash: body.hash, submittedAt: 't', ledgerDate: '2025-11-02', receipt: 'AAEC' }),
    );
    const t = await stamp(hashes, { server: 'http://timeseal.test', fetch: single.fetch, concurrency: 1 });
    expect(single.calls).toEqual([
      'POST /api/v1/beta/timestamps',
      'POST /api/v1/beta/timestamp',
      'POST /api/v1/beta/timestamp',
    ]);
    expect(t.results.map((r) => r.ok)).toEqual([true, ...Array(9).fill(false)]);
    expect(t.interrupted).toMatchObject({ code: 'http', status: 503 });
  });

  test('an answer cut short at the third batch (the server killed while it sent it) is a broken connection: temporary, nothing more sent', async () => {
    const hashes = Array.from({ length: 10 }, hex);
    let batches = 0;
    const { fetch, calls } = fakeFetch((_m, _p, body) => {
      const answer = JSON.stringify({
        success: true,
        submittedAt: '2025-11-02T12:00:00.000Z',
        ledgerDate: '2025-11-02',
        results: body.hashes.map((h: string) => ({ hash: h, status: 'accepted', receipt: 'AAEC' })),
      });
      if (++batches !== 3)
        return new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } });
      // The status line and half of the body, then the connection's end.
      const cut = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(answer.slice(0, answer.length / 2)));
          controller.error(new TypeError('terminated', { cause: { code: 'ECONNRESET' } }));
        },
      });
      return new Response(cut, { status: 200, headers: { 'content-type': 'application/json' } });
    });
    const s = await stamp(hashes, { server: 'http://timeseal.test', fetch, batchSize: 2, attempts: 1 });
    expect(calls).toHaveLength(3);
    expect(s.results.map((r) => r.ok)).toEqual([true, true, true, true, ...Array(6).fill(false)]);
    expect(s.interrupted).toMatchObject({ code: 'network' });
    expect(s.results.slice(4).map((r) => !r.ok && isTemporary(r.error))).toEqual(Array(6).fill(true));
  });

  test("a malformed hash is a 'usage' error before any request", async () => {
    const { fetch, calls } = fakeFetch(() => json(500, {}));
    await expect(stamp(['abc'], { server: 'http://timeseal.test', fetch })).rejects.toMatchObject({ code: 'usage' });
    expect(calls).toEqual([]);
  });
});

describe('the proof file', () => {
  test('round trip; unknown or missing fields and a bad hash are refused', () => {
    const p = newProofFile({
      hash: hex(),
      server: 'http://timeseal.test',
      file: 'a.txt',
      submittedAt: '2025-11-02T12:00:00.000Z',
      ledgerDate: '2025-11-02',
      receipt: 'AAEC',
    });
    const text = encodeProofFile(p);
    expect(parseProofFile(text)).toEqual(p);
    const o = JSON.parse(text);
    expect(() => parseProofFile(JSON.stringify({ ...o, extra: 1 }))).toThrow(/extra: unknown field/);
    const { receipt: _dropped, ...missing } = o;
    expect(() => parseProofFile(JSON.stringify(missing))).toThrow(/receipt: missing/);
    expect(() => parseProofFile(JSON.stringify({ ...o, hash: o.hash.toUpperCase() }))).toThrow(/hash/);
    expect(() => parseProofFile(JSON.stringify({ ...o, headers: [{ height: 1, hash: hex(), header: 'ab' }] }))).toThrow(
      /headers\[0\]/,
    );
  });
});

describe('files', () => {
  test('globs match the path under the folder or the name', () => {
    const ex = ['*.log', 'build/**', 'node_modules', 'a?c.txt', '[xy].md'].map(globToRegExp);
    expect(excluded('x/y/debug.log', ex)).toBe(true);
    expect(excluded('build/out/app.js', ex)).toBe(true);
    expect(excluded('src/node_modules', ex)).toBe(true);
    expect(excluded('abc.txt', ex)).toBe(true);
    expect(excluded('y.md', ex)).toBe(true);
    expect(excluded('src/app.ts', ex)).toBe(false);
    expect(excluded('abbc.txt', ex)).toBe(false);
  });

  test('sha256sum output: text and binary mode, escaped names; a bad line names itself', () => {
    const [a, b, c] = [hex(), hex(), hex()];
    expect(
      parseSha256sum(`${a}  one.txt\n${b.toUpperCase()} *two words.bin\n\\${c}  new\\nline\\\\x\n\n`, 'list'),
    ).toEqual([
      { hash: a, name: 'one.txt' },
      { hash: b, name: 'two words.bin' },
      { hash: c, name: 'new\nline\\x' },
    ]);
    expect(() => parseSha256sum(`${a}  ok\nnot a line\n`, 'list')).toThrow(/list: not sha256sum output \(line 2\)/);
  });
});

/** A log's keys, a witness, and the key files a server would serve. */
function makeLog(withPolicy: boolean) {
  const origin = 'log.example';
  const ecdsa = ecdsaKeygen();
  const mldsa = mldsaKeygen();
  const witnessSeed = crypto.randomBytes(32);
  const witnessVkey = encodeVkey('witness.example', NOTE_TYPE_ED25519_COSIGNATURE, ed25519PublicKey(witnessSeed));
  const files: KeyFiles = { publicPem: ecdsaPublicKeyToPem(ecdsa.publicKey), dilithiumKey: toBase64(mldsa.publicKey) };
  if (withPolicy) files.witnessPolicy = encodeWitnessPolicy({ witnesses: [{ text: witnessVkey }], threshold: 1 });
  const log = [
    ecdsaNoteSigner(origin, ecdsa.secretKey, ecdsa.publicKey),
    mldsaNoteSigner(origin, mldsa.seed, mldsa.publicKey),
  ];
  const witness = ed25519CosignatureSigner('witness.example', witnessSeed, () => 1_762_041_600);
  return { origin, files, log, witness };
}

describe('checkpoint lines and the witness policy', () => {
  test('a quorum of one witness: met with its cosignature (its time is the bound), not met without, a bad line is a problem', () => {
    const { origin, files, log, witness } = makeLog(true);
    const keys = loadKeys(files);
    const checkpoint = { origin, size: 5, root: crypto.randomBytes(32) };
    const cosigned = checkpointLines(signCheckpoint(checkpoint, [...log, witness]), origin, keys);
    expect(cosigned.signers).toEqual(['ECDSA P-256', 'ML-DSA-65']);
    expect(cosigned.witnesses).toMatchObject({
      required: true,
      met: true,
      cosigned: [{ name: 'witness.example', time: new Date(1_762_041_600_000).toISOString() }],
      problems: [],
    });
    expect(checkpointLines(signCheckpoint(checkpoint, log), origin, keys).witnesses).toMatchObject({
      required: true,
      met: false,
      cosigned: [],
    });
    const note = signCheckpoint(checkpoint, [...log, witness]);
    const lines = note.split('\n');
    const last = lines.length - 2; // the witness's line (the note ends with a newline)
    const sig = Buffer.from(lines[last]!.split(' ')[2]!, 'base64');
    sig[sig.length - 1]! ^= 1;
    lines[last] = `${lines[last]!.split(' ').slice(0, 2).join(' ')} ${sig.toString('base64')}`;
    const judged = checkpointLines(lines.join('\n'), origin, keys);
    expect(judged.witnesses?.met).toBe(false);
    expect(judged.witnesses?.problems[0]).toMatch(/does not verify/);
  });

  test('a log line that does not verify throws', () => {
    const { origin, files, log } = makeLog(false);
    const note = signCheckpoint({ origin, size: 5, root: crypto.randomBytes(32) }, log);
    const other = makeLog(false);
    expect(() => checkpointLines(note, origin, loadKeys({ ...files, publicPem: other.files.publicPem }))).toThrow();
  });
});

describe('trust on first use', () => {
  test('keys are pinned once; a changed log key is refused; another witness policy is noted and the pinned one kept', async () => {
    const a = makeLog(true);
    let served = a.files;
    const serve = fakeFetch((_m, p) => {
      const name = p.replace('/keys/', '');
      const body = {
        'public.pem': served.publicPem,
        'dilithium_public.key': served.dilithiumKey && Buffer.from(served.dilithiumKey, 'base64'),
        witnesses: served.witnessPolicy,
      }[name];
      return body === undefined
        ? new Response('not found', { status: 404 })
        : new Response(body as BodyInit, { status: 200 });
    });
    const trust = emptyTrust();
    expect((await pinServer(trust, 'http://timeseal.test', { fetch: serve.fetch })).pinned).toBe('new');
    expect(trust.servers['http://timeseal.test']!.keys).toEqual(a.files);
    expect(await pinServer(trust, 'http://timeseal.test', { fetch: serve.fetch })).toEqual({
      pinned: 'same',
      notes: [],
    });
    served = { ...a.files, witnessPolicy: makeLog(true).files.witnessPolicy! };
    const noted = await pinServer(trust, 'http://timeseal.test', { fetch: serve.fetch });
    expect(noted.notes[0]).toMatch(/another witness policy than the one pinned; the pinned one is kept/);
    expect(trust.servers['http://timeseal.test']!.keys.witnessPolicy).toBe(a.files.witnessPolicy);
    served = { ...a.files, publicPem: makeLog(false).files.publicPem };
    await expect(pinServer(trust, 'http://timeseal.test', { fetch: serve.fetch })).rejects.toMatchObject({
      code: 'trust',
      message: expect.stringMatching(/public\.pem \(ECDSA P-256\)/),
    });
  });

  test('a server without witnesses is asked for its policy when pinned, not on every later run; a policy it serves later is pinned when asked', async () => {
    const a = makeLog(true);
    let policy: string | undefined;
    const { fetch, calls } = fakeFetch((_m, p) => {
      const body = {
        '/keys/public.pem': a.files.publicPem,
        '/keys/dilithium_public.key': Buffer.from(a.files.dilithiumKey, 'base64'),
        '/keys/witnesses': policy,
      }[p];
      return body === undefined ? new Response('not found', { status: 404 }) : new Response(body as BodyInit);
    });
    const trust = emptyTrust();
    const server = 'http://timeseal.test';
    await pinServer(trust, server, { fetch });
    expect(calls.filter((c) => c === 'GET /keys/witnesses')).toHaveLength(1);
    calls.length = 0;
    expect(await pinServer(trust, server, { fetch })).toEqual({ pinned: 'same', notes: [] });
    expect(await pinServer(trust, server, { fetch })).toEqual({ pinned: 'same', notes: [] });
    expect(calls).not.toContain('GET /keys/witnesses');
    expect(calls).toContain('GET /keys/public.pem'); // the log keys are still checked on every run
    // What upgrade does once a checkpoint carries cosignature lines: still none served, nothing pinned.
    expect(await learnWitnessPolicy(trust, server, { fetch })).toBeNull();
    policy = a.files.witnessPolicy;
    expect(await learnWitnessPolicy(trust, server, { fetch })).toBe(
      'pinned the witness policy, which http://timeseal.test did not serve before',
    );
    expect(trust.servers[server]!.keys.witnessPolicy).toBe(a.files.witnessPolicy);
    // Pinned now: every run asks for it again, to note a policy that differs.
    calls.length = 0;
    await pinServer(trust, server, { fetch });
    expect(calls).toContain('GET /keys/witnesses');
    policy = 'not a policy';
    const other = emptyTrust();
    await pinServer(other, server, {
      fetch: fakeFetch((_m, p) =>
        p === '/keys/witnesses' ? new Response('', { status: 404 }) : fetch(`${server}${p}`),
      ).fetch,
    });
    await expect(learnWitnessPolicy(other, server, { fetch })).rejects.toThrow();
    expect(other.servers[server]!.keys.witnessPolicy).toBeUndefined();
  });

  test("two roots for one tree size are a 'fork'", () => {
    const trust = emptyTrust();
    const [r1, r2] = [hex(), hex()];
    rememberCheckpoint(trust, 'log.example', 7, r1);
    rememberCheckpoint(trust, 'log.example', 7, r1);
    expect(() => rememberCheckpoint(trust, 'log.example', 7, r2)).toThrow(expect.objectContaining({ code: 'fork' }));
    expect(trust.logs['log.example']!.checkpoints).toHaveLength(1);
  });
});

describe('upgrade', () => {
  test("before publication: pending, the next check at the day's end by the server's clock (its Date header), asked once per day", async () => {
    const a = makeLog(false);
    let serverNow = '2025-11-02T15:00:00.000Z';
    const { fetch, calls } = fakeFetch((_m, p) => {
      if (p === '/keys/public.pem') return new Response(a.files.publicPem);
      if (p === '/keys/dilithium_public.key') return new Response(Buffer.from(a.files.dilithiumKey, 'base64'));
      return json(404, { error: 'not in any published ledger' }, { date: new Date(serverNow).toUTCString() });
    });
    const proofs = [0, 1].map(() =>
      newProofFile({ hash: hex(), server: 'http://timeseal.test', ledgerDate: '2025-11-02' }),
    );
    const ours = () => new Date('2025-11-02T15:00:00.000Z');
    const [r, r2] = await upgrade(proofs, { trust: emptyTrust(), fetch, now: ours, concurrency: 1 });
    expect(r).toMatchObject({
      changed: false,
      complete: false,
      stage: 'stamped',
      nextCheck: '2025-11-03T00:00:00.000Z',
      notes: [
        'pinned the keys of http://timeseal.test',
        'not published yet (the ledger of 2025-11-02 is published at 2025-11-03T00:01:00.000Z, server time, 2025-11-02T15:00:00.000Z there now)',
      ],
    });
    expect(r!.error).toBeUndefined();
    expect(r2).toMatchObject({ stage: 'stamped', nextCheck: '2025-11-03T00:00:00.000Z' });
    // The second proof of the day took the first one's answer.
    expect(calls.filter((c) => c.startsWith('GET /api/proof/'))).toEqual([`GET /api/proof/${proofs[0]!.hash}`]);
    // Asked at once (concurrency 8), the day's proofs wait for the first one's answer: one request, not one each.
    calls.length = 0;
    const many = Array.from({ length: 20 }, () =>
      newProofFile({ hash: hex(), server: 'http://timeseal.test', ledgerDate: '2025-11-02' }),
    );
    const results = await upgrade(many, { trust: emptyTrust(), fetch, now: ours, concurrency: 8 });
    expect(results.map((x) => x.nextCheck)).toEqual(many.map(() => '2025-11-03T00:00:00.000Z'));
    expect(calls.filter((c) => c.startsWith('GET /api/proof/'))).toEqual([`GET /api/proof/${many[0]!.hash}`]);

    // Its keys checked by the caller in this run (stamp pins them before it upgrades): no key asked again.
    const trust = emptyTrust();
    await pinServer(trust, 'http://timeseal.test', { fetch });
    calls.length = 0;
    const [again] = await upgrade([proofs[0]!], { trust, fetch, now: ours, keysChecked: ['http://timeseal.test'] });
    expect(again).toMatchObject({ stage: 'stamped', changed: false });
    expect(calls).toEqual([`GET /api/proof/${proofs[0]!.hash}`]);
    await upgrade([proofs[0]!], { trust, fetch, now: ours });
    expect(calls.filter((c) => c.startsWith('GET /keys/')).length).toBeGreaterThan(0); // without it, checked again

    // A server whose clock was moved to 23:59 (timeseal clock): the day ends in a minute of ours.
    serverNow = '2025-11-02T23:59:00.000Z';
    const [moved] = await upgrade([proofs[0]!], { trust: emptyTrust(), fetch, now: ours });
    // The server's lead goes with it, so that the next check can be shown on the server's clock (8 h 59 min ahead).
    expect(moved).toMatchObject({ stage: 'stamped', nextCheck: '2025-11-02T15:01:00.000Z', serverLead: 32_340_000 });
    // A server already past the publication time, not published yet (its build is under way): ask at the next poll.
    serverNow = '2025-11-03T00:05:00.000Z';
    const [due] = await upgrade([proofs[0]!], { trust: emptyTrust(), fetch, now: ours });
    expect(due).toMatchObject({ changed: false, complete: false, stage: 'stamped', nextCheck: null });
    expect(due!.notes).toContain(
      'not published yet (the ledger of 2025-11-02 is published at 2025-11-03T00:01:00.000Z, server time)',
    );

    // Its days.json lists the day: a 404 is that hash's alone, a broken promise (each proof of the day asks for
    // its own; days.json is read once). A days.json without the day (only the day before): not published yet.
    const day = (date: string, firstIndex: number) => ({
      date,
      first_index: firstIndex,
      entry_count: 1,
      tree_size: firstIndex + 1,
      root: hex(),
      sha256: hex(),
    });
    let listed = [day('2025-11-01', 0), day('2025-11-02', 1)];
    const served = fakeFetch((m, p) =>
      p === '/ledgers/days.json'
        ? json(200, { format: 'timeseal-days/1', origin: 'timeseal.test', days: listed })
        : fetch(`http://timeseal.test${p}`, { method: m }),
    );
    const broken = await upgrade(proofs, { trust: emptyTrust(), fetch: served.fetch, now: ours });
    expect(broken.map((x) => x.error?.code)).toEqual(['broken', 'broken']);
    expect(broken[0]!.error!.message).toBe(
      `the ledger of 2025-11-02 is published and does not hold this hash: the promise is broken (GET http://timeseal.test/api/proof/${proofs[0]!.hash}: 404)`,
    );
    expect(served.calls.filter((c) => c.startsWith('GET /api/proof/'))).toHaveLength(2);
    expect(served.calls.filter((c) => c === 'GET /ledgers/days.json')).toHaveLength(1);
    listed = [day('2025-11-01', 0)];
    const [later] = await upgrade([proofs[0]!], { trust: emptyTrust(), fetch: served.fetch, now: ours });
    expect(later!.error).toBeUndefined();
    expect(later!.notes.at(-1)).toMatch(/^not published yet /);
  });
});
