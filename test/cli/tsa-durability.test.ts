// A time-stamp token is a promise that its imprint is published (docs/API.md "POST /tsa", docs/FORMAT.md §3b): the
// answer is sent only after the submission row is durable. Real processes, concurrent clients:
//
// - kill -9 under load (SQLite): 16 connections ask `timeseal serve` for tokens (SHA-256 imprints, every
//   eighth SHA-512) while the server's clock (libfaketime) runs across midnight; the server is killed with
//   SIGKILL in mid-stream after the first tokens of the new day, restarted, loaded and killed again; then
//   `timeseal ledger build` publishes both days. Every token answered (HTTP 200, status granted, its signature
//   checked) has its ledger hash in the ledger of its genTime's UTC day at exactly its genTime (ms), and the
//   ledgers hold no more than the answered tokens plus at most one request in flight per connection at each
//   kill.
// - Two nodes on one PostgreSQL database: 10,000 tokens, 8 connections per node at once; all granted, no serial
//   number twice, and the database holds exactly the 10,000 ledger hashes of the tokens.
//
// The tokens are read here with a small DER reader of their own (not the server's code); a sample also passes
// the project's strict client check, runtime/tsa-client.ts checkTimeStamp, with the root as the only trust.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { checkTimeStamp } from '../../runtime/tsa-client.ts';
import { projectEnv, removeTempDirs, startServer, tempDir, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { createDatabase, postgresForSuite } from '../support/postgres.ts';
import { pemDer, run } from './helpers.ts';
import { until } from '../support/until.ts';

const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }
  removeTempDirs();
});

const log = (line: string): void => void process.stderr.write(`tsa-durability: ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- DER: the request written, the answer read ----

function tlv(tag: number, ...parts: Uint8Array[]): Buffer {
  const body = Buffer.concat(parts);
  const n = body.length;
  const len = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...len]), body]);
}

const OIDS = { sha256: '608648016503040201', sha512: '608648016503040203' } as const;
const MESSAGE_DIGEST_OID = '2a864886f70d010904';
type Algorithm = keyof typeof OIDS;

/** A DER TimeStampReq (RFC 3161 §2.4.1): version 1, the imprint, a nonce, certReq TRUE. */
function timeStampReq(algorithm: Algorithm, digest: Buffer, nonce: Buffer): Buffer {
  const algId = tlv(0x30, tlv(0x06, Buffer.from(OIDS[algorithm], 'hex')), tlv(0x05));
  return tlv(
    0x30,
    tlv(0x02, Buffer.of(1)),
    tlv(0x30, algId, tlv(0x04, digest)),
    tlv(0x02, nonce),
    tlv(0x01, Buffer.of(0xff)),
  );
}

interface Node {
  tag: number;
  /** The whole element, header included. */
  raw: Buffer;
  body: Buffer;
}

function readAt(der: Buffer, at: number): Node {
  const tag = der[at]!;
  let len = der[at + 1]!;
  let head = 2;
  if (len & 0x80) {
    const count = len & 0x7f;
    len = 0;
    for (let i = 0; i < count; i++) len = len * 256 + der[at + 2 + i]!;
    head += count;
  }
  if (at + head + len > der.length) throw new Error('a DER length runs past its end');
  return { tag, raw: der.subarray(at, at + head + len), body: der.subarray(at + head, at + head + len) };
}

function kids(node: Node): Node[] {
  const out: Node[] = [];
  for (let at = 0; at < node.body.length;) {
    const k = readAt(node.body, at);
    out.push(k);
    at += k.raw.length;
  }
  return out;
}

/** The genTime of a granted TimeStampResp, in milliseconds, read without any check. */
function genTimeOf(der: Buffer): number {
  const signedData = kids(kids(kids(kids(readAt(der, 0))[1]!)[1]!)[0]!);
  const info = kids(kids(signedData[2]!)[1]!)[0]!.body;
  return generalizedTime(kids(readAt(info, 0))[4]!.body.toString('latin1'));
}

/** GeneralizedTime YYYYMMDDHHMMSS[.fff]Z in milliseconds. */
function generalizedTime(text: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,3}))?Z$/.exec(text);
  if (!m) throw new Error(`not a GeneralizedTime with at most milliseconds: ${text}`);
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, Number((m[7] ?? '0').padEnd(3, '0')));
}

interface Token {
  algorithm: Algorithm;
  digest: Buffer;
  nonce: Buffer;
  der: Buffer;
  genTime: number;
  serial: string;
  /** What the ledger holds for it: the SHA-256 imprint, or for SHA-512 the SHA-256 of the DER TSTInfo. */
  ledgerHash: string;
}

const sha256 = (b: Uint8Array): Buffer => crypto.createHash('sha256').update(b).digest();

/**
 * Reads a granted TimeStampResp and checks it against the request: status granted, the imprint and the nonce as
 * sent, the signed messageDigest over the TSTInfo, and (given `key`) the ECDSA signature over the signed
 * attributes.
 */
function readToken(
  der: Buffer,
  sent: { algorithm: Algorithm; digest: Buffer; nonce: Buffer },
  key: crypto.KeyObject | undefined,
): Token {
  const resp = readAt(der, 0);
  if (resp.raw.length !== der.length) throw new Error('bytes follow the TimeStampResp');
  const [status, token] = kids(resp);
  const code = kids(status!)[0]!;
  if (code.body.length !== 1 || code.body[0] !== 0)
    throw new Error(`status ${code.body.toString('hex')}, not granted: ${der.toString('latin1')}`);
  const signedData = kids(kids(kids(token!)[1]!)[0]!); // ContentInfo { OID, [0] { SignedData } }
  const encap = kids(signedData[2]!);
  const info = kids(encap[1]!)[0]!.body; // [0] { OCTET STRING TSTInfo }
  const f = kids(readAt(info, 0));
  const imprint = kids(f[2]!);
  if (kids(imprint[0]!)[0]!.body.toString('hex') !== OIDS[sent.algorithm]) throw new Error('another imprint algorithm');
  if (!imprint[1]!.body.equals(sent.digest)) throw new Error('another imprint');
  const nonce = f.find((k, i) => i > 4 && k.tag === 0x02);
  if (!nonce?.body.equals(sent.nonce)) throw new Error('another nonce');
  const signerInfo = kids(kids(signedData.at(-1)!)[0]!);
  const signedAttrs = signerInfo[3]!;
  const digest = kids(signedAttrs).find((a) => kids(a)[0]!.body.toString('hex') === MESSAGE_DIGEST_OID);
  if (!digest || !kids(kids(digest)[1]!)[0]!.body.equals(sha256(info)))
    throw new Error('the signed messageDigest is not that of the TSTInfo');
  const signed = Buffer.concat([Buffer.of(0x31), signedAttrs.raw.subarray(1)]); // [0] IMPLICIT re-tagged as the SET signed
  if (key && !crypto.verify('sha256', signed, { key, dsaEncoding: 'der' }, signerInfo[5]!.body))
    throw new Error('the signature does not verify');
  return {
    ...sent,
    der,
    genTime: generalizedTime(f[4]!.body.toString('latin1')),
    serial: f[3]!.body.toString('hex'),
    ledgerHash: (sent.algorithm === 'sha256' ? sent.digest : sha256(info)).toString('hex'),
  };
}

// ---- Load ----

interface Answer {
  status: number;
  body: Buffer;
}

function post(agent: http.Agent, url: URL, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: '/tsa',
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Request {
  algorithm: Algorithm;
  digest: Buffer;
  nonce: Buffer;
}

function newRequest(n: number): Request {
  const algorithm: Algorithm = n % 8 === 7 ? 'sha512' : 'sha256';
  const nonce = crypto.randomBytes(8);
  nonce[0] = (nonce[0]! & 0x7f) | 0x01; // positive, minimal
  return { algorithm, digest: crypto.randomBytes(algorithm === 'sha256' ? 32 : 64), nonce };
}

interface Loaded {
  /** The raw answers granted (read after the load, off the hot path). */
  answered: Array<{ sent: Request; der: Buffer }>;
  /** Requests that got no HTTP answer (the connection broke). */
  broken: number;
  /** Answers other than HTTP 200. */
  other: Map<number, number>;
}

/**
 * `connections` workers post one request after another through a keep-alive agent, from the first request on,
 * until `stop()` says so or (with `untilBroken`) their connection breaks.
 */
function loadTsa(url: string, connections: number, options: { total?: number; untilBroken?: boolean }) {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const result: Loaded = { answered: [], broken: 0, other: new Map() };
  let stopped = false;
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (!stopped && (options.total === undefined || issued < options.total)) {
      const sent = newRequest(issued++);
      try {
        const answer = await post(agent, target, timeStampReq(sent.algorithm, sent.digest, sent.nonce));
        if (answer.status === 200) result.answered.push({ sent, der: answer.body });
        else result.other.set(answer.status, (result.other.get(answer.status) ?? 0) + 1);
      } catch (err) {
        result.broken++;
        if (options.untilBroken) return;
        throw err;
      }
    }
  };
  const done = Promise.all(Array.from({ length: connections }, worker)).finally(() => agent.destroy());
  return {
    result,
    done,
    stop: () => {
      stopped = true;
    },
  };
}

/** The TSA's certificate key and root from `keys init`. */
function tsaKeys(dir: string): { key: crypto.KeyObject; root: Uint8Array } {
  const chain = fs.readFileSync(path.join(dir, 'keys/timeseal-tsa.pem'), 'utf8');
  return {
    key: new crypto.X509Certificate(chain).publicKey,
    root: pemDer(fs.readFileSync(path.join(dir, 'keys/timeseal-tsa-root.pem'), 'utf8')),
  };
}

/** Up to `count` tokens, spread over the list, through the project's strict client check. */
async function strictSample(tokens: Token[], count: number, root: Uint8Array): Promise<number> {
  const sample = tokens
    .filter((t) => t.algorithm === 'sha256')
    .filter((_, i, all) => i % Math.max(1, Math.floor(all.length / count)) === 0)
    .slice(0, count);
  for (const t of sample) {
    const facts = await checkTimeStamp(t.der, t.digest, { nonce: t.nonce, trusted: [root] });
    expect(facts.genTime.getTime()).toBe(t.genTime);
    expect(facts.serialNumber).toBe(t.serial);
  }
  return sample.length;
}

/** A server started whose catch-up at start (the schedule's steps, last 'tsa stamp') has ended, or which runs no
 * schedule (another node, or a node killed less than the lease's time ago, holds it). */
async function startNode(dir: string, env: Record<string, string>): Promise<SpawnedServer> {
  const node = await startServer(dir, env);
  servers.push(node);
  const settled = /"msg":"(scheduled tsa stamp (done|failed)|schedule held by another node)/;
  await until("the schedule's catch-up at start", 30_000, () => settled.test(node.stderr())).catch((err: Error) => {
    throw new Error(`${err.message}; the server's log:\n${node.stderr()}`);
  });
  return node;
}

// ---- The tests ----

describe('POST /tsa: a token answered is a row stored', () => {
  it("kill -9 of serve under 16 connections, twice: every token answered is in the ledger of its genTime's day at its genTime", async () => {
    const libfaketime = fs.globSync('/usr/lib/*/faketime/libfaketime.so.1')[0];
    expect(libfaketime, 'libfaketime (Debian package faketime)').toBeDefined();
    const dir = tempDir('tsa-kill');
    const env = projectEnv(dir, { LOG_FORMAT: 'json' });
    const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: '2025-11-02T00:00:00.000Z' } });
    expect(init.code, init.stderr).toBe(0);
    const { key, root } = tsaKeys(dir);
    // The server's own clock starts at the given instant and runs (milliseconds differ from token to token); the
    // monotonic clock stays real, for the server's timers.
    const clock = (start: string) => ({
      ...env,
      TZ: 'UTC',
      LD_PRELOAD: libfaketime!,
      FAKETIME: `@${start}`,
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    });

    const tokens: Token[] = [];
    const phases: string[] = [];
    const MIDNIGHT = Date.parse('2025-11-03T00:00:00.000Z');
    for (const [phase, start, minimum] of [
      // Its clock starts 8 s before midnight: the load usually runs across it (a start slower than that, on a busy
      // machine, begins after it; the checks hold all the same).
      ['first run, across midnight', '2025-11-02 23:59:52', 400],
      ['restarted on the next day', '2025-11-03 00:00:40', 200],
    ] as const) {
      const node = await startNode(dir, clock(start));
      const load = loadTsa(node.url, 16, { untilBroken: true });
      // The kill lands at a moment of its own, while 16 requests are in flight: after `minimum` tokens were
      // answered, and a token of the new day (or 15 s).
      const t0 = Date.now();
      await until(
        `${minimum} tokens`,
        30_000,
        () => {
          const { answered } = load.result;
          return (
            answered.length >= minimum && (genTimeOf(answered.at(-1)!.der) >= MIDNIGHT || Date.now() - t0 > 15_000)
          );
        },
        10,
      );
      await sleep(Math.round(Math.random() * 300));
      node.child.kill('SIGKILL');
      const exit = await node.exited;
      await load.done;
      expect(exit.signal).toBe('SIGKILL');
      expect(load.result.other, 'answers other than 200').toEqual(new Map());
      // The kill came while requests were under way: some got no answer at all.
      expect(load.result.broken).toBeGreaterThan(0);
      for (const { sent, der } of load.result.answered) tokens.push(readToken(der, sent, key));
      const days = Map.groupBy(load.result.answered, (a) => new Date(genTimeOf(a.der)).toISOString().slice(0, 10));
      phases.push(
        `${phase}: ${load.result.answered.length} tokens answered (${[...days].map(([d, a]) => `${d}: ${a.length}`).join(', ')}), ${load.result.broken} requests cut by the kill`,
      );
    }
    log(phases.join('; '));
    expect(await strictSample(tokens, 20, root)).toBe(20);
    expect(tokens.some((t) => t.algorithm === 'sha512')).toBe(true);
    expect(new Set(tokens.map((t) => t.serial)).size).toBe(tokens.length);
    expect(new Set(tokens.map((t) => t.genTime)).size, 'genTimes vary (a running clock)').toBeGreaterThan(10);

    // Both days are finished at this clock: the build publishes them.
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: '2025-11-04T00:01:00.000Z' } });
    expect(built.code, built.stderr).toBe(0);
    const ledgers = new Map<string, Map<string, string>>();
    for (const day of ['2025-11-02', '2025-11-03']) {
      const file = path.join(dir, 'ledgers', `${day}.json`);
      const entries = fs.existsSync(file)
        ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { entries: Array<[string, string]> }).entries
        : [];
      ledgers.set(day, new Map(entries.map((e) => [e[0], e[1]])));
    }
    const wrong = tokens.filter((t) => {
      const day = new Date(t.genTime).toISOString().slice(0, 10);
      const at = ledgers.get(day)?.get(t.ledgerHash);
      return at === undefined || Date.parse(at) !== t.genTime;
    });
    expect(wrong.map((t) => `${t.ledgerHash} at ${new Date(t.genTime).toISOString()}`)).toEqual([]);
    // Nothing else is stored but requests cut in flight (at most one a connection at each kill).
    const answered = new Set(tokens.map((t) => t.ledgerHash));
    const unanswered = [...ledgers.values()].flatMap((m) => [...m.keys()]).filter((h) => !answered.has(h));
    expect(unanswered.length).toBeLessThanOrEqual(2 * 16);
    log(
      `ledgers: 2025-11-02 ${ledgers.get('2025-11-02')!.size} entries, 2025-11-03 ${ledgers.get('2025-11-03')!.size}; ${tokens.length} answered tokens all in place, ${unanswered.length} stored unanswered (cut in flight)`,
    );
    const verify = run(dir, ['verify'], { env: { ...env, TIMESEAL_NOW: '2025-11-04T00:01:00.000Z' } });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 120_000);
});

describe('two nodes on one PostgreSQL database', () => {
  const database = postgresForSuite();
  const TOTAL = 10_000;

  it(`${TOTAL.toLocaleString('en-US')} tokens from two serve nodes at once, 8 connections each: all granted, no serial twice, every ledger hash stored once`, async () => {
    const dir = tempDir('tsa-two-nodes');
    const url = await createDatabase(database.url, `tsa_${crypto.randomBytes(4).toString('hex')}`);
    const env = projectEnv(dir, { LOG_FORMAT: 'json', TIMESEAL_DATABASE_URL: url });
    const NOW = '2025-11-02T12:00:00.000Z';
    const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: '2025-11-02T00:00:00.000Z' } });
    expect(init.code, init.stderr).toBe(0);
    const { key, root } = tsaKeys(dir);
    const nodes = await Promise.all([
      startNode(dir, { ...env, TIMESEAL_NOW: NOW }),
      startNode(dir, { ...env, TIMESEAL_NOW: NOW }),
    ]);

    const t0 = Date.now();
    const loads = nodes.map((node) => loadTsa(node.url, 8, { total: TOTAL / 2 }));
    await Promise.all(loads.map((l) => l.done));
    const seconds = (Date.now() - t0) / 1000;
    for (const l of loads) expect(l.result.other, 'answers other than 200').toEqual(new Map());
    // Every token is read; every tenth one's signature is checked here (the kill test checks all of its own).
    const tokens = loads.flatMap((l) =>
      l.result.answered.map(({ sent, der }, i) => readToken(der, sent, i % 10 === 0 ? key : undefined)),
    );
    expect(tokens).toHaveLength(TOTAL);
    expect(loads.map((l) => l.result.answered.length)).toEqual([TOTAL / 2, TOTAL / 2]);
    expect(new Set(tokens.map((t) => t.serial)).size).toBe(TOTAL);
    expect(await strictSample(tokens, 10, root)).toBe(10);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = (
        await client.query<{ hash: string; submitted_at: string; source: string }>(
          'SELECT hash, submitted_at, source FROM submissions',
        )
      ).rows;
      expect(rows).toHaveLength(TOTAL);
      const stored = new Map(rows.map((r) => [r.hash, r]));
      expect(stored.size).toBe(TOTAL);
      const missing = tokens.filter(
        (t) => stored.get(t.ledgerHash)?.submitted_at !== new Date(t.genTime).toISOString(),
      );
      expect(missing.map((t) => t.ledgerHash)).toEqual([]);
      expect(new Set(rows.map((r) => r.source))).toEqual(new Set(['api_beta']));
    } finally {
      await client.end();
    }
    log(
      `two PostgreSQL nodes: ${TOTAL} tokens in ${seconds.toFixed(1)} s (${Math.round(TOTAL / seconds)}/s), ${tokens.filter((t) => t.algorithm === 'sha512').length} of them SHA-512; ${TOTAL} distinct serials, ${TOTAL} rows`,
    );
  }, 120_000);
});
