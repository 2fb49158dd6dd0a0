// The installable client (client/), as a person gets it: `npm pack` of client/ (its prepack bundles core/ and
// every dependency into dist/; run on a copy of client/), `npm install <tarball>` into an empty folder offline with the system's Node 20
// and its npm, then the installed `timeseal-client` under Node 20 against a real `timeseal serve`:
//   stamp a folder of 200 files (10 duplicates, a symbolic link, a dot-file) in at most 10 requests (one
//   batch): each distinct hash is submitted once (the server's database says so), a proof file beside each
//   file, the link and the dot-file left out; the server killed (SIGKILL) in the middle of a stamp run in
//   batches, restarted: the re-run completes every file and sends no acknowledged hash again;
//   verify → 2 (pending, valid so far); the day is built, anchored through loopback OpenTimestamps calendars into
//   a synthetic regtest chain and upgraded by the server; `upgrade` fetches the bundles and the block header
//   (from a loopback Esplora) → 0; a second day: `upgrade --wait` polls through a server restart, the grown
//   log is proven to extend the tree seen (tiles); verify → 0 for every file, with the server, Esplora and
//   calendars stopped too;
//   a changed byte in one file → 1 naming it; a proof whose checkpoint is a validly signed fork of the tree the
//   client saw → 1 (fork). The library (import 'timeseal-client') runs under Node 20 too, and a TypeScript
//   consumer type-checks against its declarations.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signCheckpoint } from '../../core/checkpoint.ts';
import { ed25519NoteSigner, mldsa44CosignatureSigner } from '../../core/cosignature.ts';
import { fromHex, toHex } from '../../core/encoding.ts';
import { parseLedger } from '../../core/ledger.ts';
import { inclusionProof, leafHash, nodeHash, treeHash } from '../../core/merkle.ts';
import { ecdsaNoteSigner, mldsaNoteSigner } from '../../core/note.ts';
import { loadSigningKeys } from '../../runtime/keys.ts';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { SyntheticChain } from '../anchor/chain.ts';
import { cli } from '../anchor/helpers.ts';
import { LoopbackCalendar, LoopbackEsplora } from '../anchor/servers.ts';
import { launchChromium } from '../verifier/helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NODE20 = '/usr/bin/node';
const DAY = '2025-11-02';
const NOW = `${DAY}T12:00:00.000Z`;
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

// The chain's blocks are found after the day, as a real chain's would be.
const chain = new SyntheticChain(Date.parse('2025-11-03T00:00:00.000Z') / 1000);
const calendars = [new LoopbackCalendar(), new LoopbackCalendar()];
const esplora = new LoopbackEsplora(chain);
const made: string[] = [];
let tmp: string;
let app: string;
let bin: string;
let project: string;
let env: Record<string, string>;
let server: SpawnedServer | undefined;
/** Servers a test starts besides `server`, stopped after all if a test stops early. */
const others = new Set<SpawnedServer>();
let serverUrl: string;
let docs: string;
const files: string[] = [];
/**
 * The folder's files and how many of them are copies of others. 200, not more: what is shown here holds for any
 * folder that fits one batch, and each proof's upgrade and verify under Node 20 cost ~30-50 ms of CPU
 * (bench/client.bench.ts measures 10,000 files).
 */
const COUNT = 200;
const COPIES = 10;
const distinct = COUNT - COPIES;
let height = 0;
const timings: Record<string, number> = {};

const stopServer = async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  server = undefined;
};

/** A command under the system's Node 20 only: PATH without the project's Node 24, a home and trust store of the test's. */
function env20(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: SYSTEM_PATH,
    HOME: path.join(tmp, 'home'),
    TIMESEAL_TRUST: path.join(tmp, 'trust.json'),
    LANG: 'C.UTF-8',
    npm_config_update_notifier: 'false',
    npm_config_cache: path.join(tmp, 'npm-cache'),
    ...extra,
  };
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the installed timeseal-client with Node 20, without blocking this process (its loopback servers answer it). */
function client(args: string[], cwd = tmp, input?: string, onStderr?: (soFar: string) => void): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd,
      env: env20(),
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
      onStderr?.(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const lines = (r: Result): any[] =>
  r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

async function timed<T>(name: string, f: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await f();
  } finally {
    timings[name] = Date.now() - t0;
  }
}

function npm(args: string[], cwd: string): string {
  const r = spawnSync('/usr/bin/npm', args, { cwd, env: env20(), encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

let packed: { filename: string; size: number; unpackedSize: number; entryCount: number };

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-client-'));
  made.push(tmp);
  fs.mkdirSync(path.join(tmp, 'home'));

  // Pack a copy of client/ (so that its prepack, which builds dist/ with Node 20, writes nothing into the working
  // tree), beside links to core/ and node_modules/ as in the repository; install it offline into an empty folder.
  await timed('pack', async () => {
    const stage = path.join(tmp, 'stage');
    fs.mkdirSync(stage);
    fs.cpSync(path.join(ROOT, 'client'), path.join(stage, 'client'), {
      recursive: true,
      filter: (src) => !/[/\\](dist|node_modules)$|\.tgz$/.test(src),
    });
    for (const dir of ['core', 'node_modules']) fs.symlinkSync(path.join(ROOT, dir), path.join(stage, dir));
    [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], path.join(stage, 'client'))) as [
      typeof packed,
    ];
  });
  app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), '{"name": "app", "private": true, "type": "module"}\n');
  await timed('install', async () => {
    npm(['install', '--offline', '--no-audit', '--no-fund', path.join(tmp, packed.filename)], app);
  });
  bin = path.join(app, 'node_modules/.bin/timeseal-client');

  // The server: TSA keys valid from the day's start, serving at NOW.
  await Promise.all([...calendars.map((c) => c.start()), esplora.start()]);
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-client-project-'));
  made.push(project);
  env = projectEnv(project, { LOG_FORMAT: 'json' });
  const init = await cli(project, ['keys', 'init'], { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` });
  expect(init.code, init.stderr).toBe(0);
  server = await startServer(project, { ...env, TIMESEAL_NOW: NOW });
  serverUrl = server.url;

  // COUNT files in two folders, COPIES of them copies of others; a dot-file and a symbolic link beside them.
  docs = path.join(tmp, 'docs');
  for (const sub of ['a', 'b/deeper']) fs.mkdirSync(path.join(docs, sub), { recursive: true });
  for (let i = 0; i < COUNT; i++) {
    const file = path.join(docs, i < COUNT / 2 ? 'a' : 'b/deeper', `f${String(i).padStart(4, '0')}.txt`);
    fs.writeFileSync(file, `document ${i < distinct ? i : i - distinct}\n`);
    files.push(file);
  }
  fs.writeFileSync(path.join(docs, '.secret'), 'a dot-file\n');
  fs.symlinkSync(path.join(docs, 'a/f0000.txt'), path.join(docs, 'link.txt'));
}, 180_000);

afterAll(async () => {
  await stopServer();
  for (const s of others) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  await Promise.all([...calendars.map((c) => c.stop()), esplora.stop()]);
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
  process.stderr.write(
    `client test timings (ms): ${JSON.stringify(timings)}; package ${packed?.size} bytes packed, ${packed?.unpackedSize} unpacked, ${packed?.entryCount} files\n`,
  );
});

describe('the packed client, installed offline, under Node 20', () => {
  test('the tarball carries everything: no dependencies, a small install; the library names no node: module', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(app, 'node_modules/timeseal-client/package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(fs.readdirSync(path.join(app, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual([
      'timeseal-client',
    ]);
    expect(packed.unpackedSize).toBeLessThan(400_000);
    // Every file the library's entry imports, and what they import (the command line's chunks may use node:).
    const dist = path.join(app, 'node_modules/timeseal-client/dist');
    const reached = new Set<string>();
    const follow = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      const text = fs.readFileSync(file, 'utf8');
      expect(text, path.relative(dist, file)).not.toMatch(/["']node:/);
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g))
        follow(path.resolve(path.dirname(file), m[1]!));
    };
    follow(path.join(dist, 'index.mjs'));
    expect(reached.size).toBeGreaterThan(1);
    const r = spawnSync(bin, ['--version'], { env: env20(), encoding: 'utf8' });
    expect(r.stdout.trim()).toBe(manifest.version);
  });

  test('stamp: each distinct hash sent once, a proof beside each file, the link and the dot-file left out; a re-run sends nothing new', async () => {
    const r = await timed('stamp', () => client(['stamp', 'docs', '--server', server!.url, '--json']));
    expect(r.code, r.stderr).toBe(0);
    const out = lines(r);
    const stamped = out.filter((l) => l.action === 'stamped');
    expect(stamped).toHaveLength(COUNT);
    expect(out.filter((l) => l.action === 'skipped')).toEqual([
      { file: 'docs/link.txt', action: 'skipped', reason: 'a symbolic link (not followed)' },
    ]);
    expect(out.some((l) => String(l.file).includes('.secret'))).toBe(false);
    for (const f of files) expect(fs.existsSync(`${f}.timeseal.json`), f).toBe(true);
    expect(fs.existsSync(path.join(docs, '.secret.timeseal.json'))).toBe(false);
    expect(fs.existsSync(path.join(docs, 'link.txt.timeseal.json'))).toBe(false);
    expect(stamped.every((l) => l.submittedAt === NOW && l.receiptTime === NOW && l.ledgerDate === DAY)).toBe(true);
    const db = new Database(env.TIMESEAL_DB!, { readonly: true });
    try {
      const rows = db.prepare('SELECT hash, COUNT(*) AS n FROM submissions GROUP BY hash').all() as Array<{
        hash: string;
        n: number;
      }>;
      expect(rows).toHaveLength(distinct);
      expect(rows.every((row) => row.n === 1)).toBe(true);
    } finally {
      db.close();
    }
    // At most 10 requests: one batch (POST /api/v1/beta/timestamps takes up to 1,000 hashes).
    const sent = /(\d+) file\(s\), (\d+) distinct hash\(es\) sent in (\d+) request\(s\) \(batched\)/.exec(r.stderr);
    expect(sent, r.stderr).not.toBeNull();
    expect(sent!.slice(1).map(Number)).toEqual([COUNT, distinct, 1]);
    expect(Number(sent![3])).toBeLessThanOrEqual(10);

    const again = await client(['stamp', 'docs', '--server', server!.url, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(lines(again).filter((l) => l.action === 'unchanged')).toHaveLength(COUNT);
    // Nothing changed (the day is not published yet), and the summary counts only what changed.
    expect(again.stderr).toContain(`, 0 of ${COUNT} pending proof(s) upgraded`);
    const db2 = new Database(env.TIMESEAL_DB!, { readonly: true });
    expect((db2.prepare('SELECT COUNT(*) AS n FROM submissions').get() as { n: number }).n).toBe(distinct);
    db2.close();
  }, 60_000);

  test('the server killed (SIGKILL) while stamp sends a folder in batches of 20: exit 75 saying to run it again; the re-run on the restarted server stamps every other file, and no acknowledged hash is sent twice', async () => {
    const N = 300;
    const BATCH = 20;
    // A server of its own, on the real clock: each batch is stored at its own time, so the database's rows show
    // which hashes each request carried. Its own log origin and trust store: the other tests' log stays apart.
    const proj = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-client-kill-'));
    made.push(proj);
    const killEnv = projectEnv(proj, { LOG_FORMAT: 'json', TIMESEAL_ORIGIN: 'https://kill.timeseal.test' });
    const init = await cli(proj, ['keys', 'init'], killEnv);
    expect(init.code, init.stderr).toBe(0);
    let victim = await startServer(proj, killEnv);
    others.add(victim);
    const url = victim.url;
    const folder = path.join(tmp, 'many');
    fs.mkdirSync(folder);
    const hashOf = new Map<string, string>();
    for (let i = 0; i < N; i++) {
      const name = `m${String(i).padStart(3, '0')}.txt`;
      fs.writeFileSync(path.join(folder, name), `many ${i}\n`);
      hashOf.set(name, crypto.createHash('sha256').update(`many ${i}\n`).digest('hex'));
    }
    const args = [
      'stamp',
      'many',
      '--server',
      url,
      '--batch-size',
      String(BATCH),
      '--trust',
      'kill-trust.json',
      '--json',
    ];
    /** The hashes the server stored, by request (one submittedAt per batch), in the order stored. */
    const requests = (): Map<string, string[]> => {
      const db = new Database(killEnv.TIMESEAL_DB!, { readonly: true });
      try {
        const byRequest = new Map<string, string[]>();
        for (const row of db.prepare('SELECT submitted_at AS at, hash FROM submissions ORDER BY id').all() as Array<{
          at: string;
          hash: string;
        }>)
          byRequest.set(row.at, [...(byRequest.get(row.at) ?? []), row.hash]);
        return byRequest;
      } finally {
        db.close();
      }
    };

    // Killed once two batches are stored (thirteen are still to come): each commit writes the database's WAL,
    // which is watched.
    const watched = new Database(killEnv.TIMESEAL_DB!, { readonly: true });
    watched.pragma('busy_timeout = 1000');
    let storedAtKill = 0;
    const watcher = fs.watch(path.dirname(killEnv.TIMESEAL_DB!), () => {
      if (storedAtKill > 0) return;
      const n = (watched.prepare('SELECT COUNT(*) AS n FROM submissions').get() as { n: number }).n;
      if (n >= 2 * BATCH) {
        storedAtKill = n;
        victim.child.kill('SIGKILL');
      }
    });
    const first = await timed('stamp-killed', () => client(args));
    watcher.close();
    watched.close();
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(storedAtKill).toBeGreaterThanOrEqual(2 * BATCH);
    expect(first.code, first.stdout + first.stderr).toBe(75);
    const m =
      /stopped: POST [^ ]+\/api\/v1\/beta\/timestamps: .*\. (\d+) of 300 hash\(es\) were stamped and their proofs written; the other (\d+) were not acknowledged\. Run the same command again to send them/.exec(
        first.stderr,
      );
    expect(m, first.stderr).not.toBeNull();
    const out1 = lines(first);
    const acknowledged = new Set(out1.filter((l) => l.action === 'stamped').map((l) => l.hash as string));
    expect(acknowledged.size).toBe(Number(m![1]));
    expect(acknowledged.size).toBeGreaterThanOrEqual(BATCH); // the first batch was answered before the second went
    expect(acknowledged.size).toBeLessThan(N);
    const failed = out1.filter((l) => l.action === 'failed');
    expect(failed).toHaveLength(N - acknowledged.size);
    for (const l of failed)
      expect(l, JSON.stringify(l)).toMatchObject({ temporary: true, error: expect.stringMatching(/^not stamped: /) });
    // A proof file for exactly the acknowledged hashes.
    for (const [name, hash] of hashOf)
      expect(fs.existsSync(path.join(folder, `${name}.timeseal.json`)), name).toBe(acknowledged.has(hash));
    const storedBefore = requests();
    for (const hashes of storedBefore.values()) expect(hashes.length).toBeLessThanOrEqual(BATCH);
    const storedHashes = new Set([...storedBefore.values()].flat());
    for (const h of acknowledged) expect(storedHashes.has(h), h).toBe(true);

    // Restarted on the same database and address (the proofs name the server by it); the same command again.
    victim = await startServer(proj, { ...killEnv, PORT: new URL(url).port });
    others.add(victim);
    const second = await timed('stamp-rerun', () => client(args));
    expect(second.code, second.stdout + second.stderr).toBe(0);
    const out2 = lines(second);
    expect(
      out2
        .filter((l) => l.action === 'stamped')
        .map((l) => l.hash)
        .sort(),
    ).toEqual([...hashOf.values()].filter((h) => !acknowledged.has(h)).sort());
    expect(
      out2
        .filter((l) => l.action === 'unchanged')
        .map((l) => l.hash)
        .sort(),
    ).toEqual([...acknowledged].sort()); // pending, asked for its bundle
    expect(second.stderr).toContain(
      `300 file(s), ${N - acknowledged.size} distinct hash(es) sent in ${Math.ceil((N - acknowledged.size) / BATCH)} request(s) (batched), 0 of ${acknowledged.size} pending proof(s) upgraded`, // their day is not published yet
    );
    for (const [name, hash] of hashOf) {
      const proof = JSON.parse(fs.readFileSync(path.join(folder, `${name}.timeseal.json`), 'utf8'));
      expect(proof.hash, name).toBe(hash);
      expect(typeof proof.receipt, name).toBe('string');
    }
    // What the server received after the restart: the hashes not acknowledged, each once, in batches of at most
    // BATCH; none that was acknowledged, and every acknowledged hash is stored once in all.
    const storedAfter = requests();
    const rerun = [...storedAfter].filter(([at]) => !storedBefore.has(at)).map(([, hashes]) => hashes);
    expect(rerun).toHaveLength(Math.ceil((N - acknowledged.size) / BATCH));
    for (const hashes of rerun) expect(hashes.length).toBeLessThanOrEqual(BATCH);
    expect(rerun.flat().sort()).toEqual([...hashOf.values()].filter((h) => !acknowledged.has(h)).sort());
    const all = [...storedAfter.values()].flat();
    for (const h of acknowledged)
      expect(
        all.filter((x) => x === h),
        h,
      ).toHaveLength(1);
    victim.child.kill('SIGTERM');
    await victim.exited;
    others.delete(victim);
  }, 90_000);

  test('verify before the day is published: 2, pending (the receipt checked)', async () => {
    const r = await timed('verify-pending', () => client(['verify', 'docs', '--json']));
    expect(r.code, r.stderr).toBe(2);
    const out = lines(r);
    expect(out).toHaveLength(COUNT);
    for (const l of out) {
      expect(l.state).toBe('pending');
      expect(l.layers.find((x: any) => x.layer === 'receipt')).toMatchObject({
        status: 'pending',
        bound: { time: NOW },
      });
      expect(l.layers.find((x: any) => x.layer === 'ledger').status).toBe('pending');
    }
  }, 60_000);

  test('upgrade once the day is built and anchored: 0, every proof complete with its block header', async () => {
    await stopServer();
    const anchorEnv = {
      ...env,
      OTS_CALENDARS: calendars.map((c) => c.url).join(','),
      OTS_MIN_CALENDARS: '2',
      BITCOIN_NETWORK: 'regtest',
      BITCOIN_ESPLORA_URL: esplora.url,
    };
    await timed('build-anchor', async () => {
      for (const [args, now] of [
        [['ledger', 'build'], '2025-11-03T00:01:00.000Z'],
        [['anchor'], '2025-11-03T00:02:00.000Z'],
      ] as const) {
        const r = await cli(project, [...args], { ...anchorEnv, TIMESEAL_NOW: now });
        expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
      }
      height = calendars[0]!.mine(chain); // the second calendar stays pending
      chain.extend(2);
      const up = await cli(project, ['upgrade'], { ...anchorEnv, TIMESEAL_NOW: '2025-11-03T01:05:00.000Z' });
      expect(up.code, up.stdout + up.stderr).toBe(0);
    });
    // The same address as before: the proof files name the server by it.
    server = await startServer(project, {
      ...env,
      TIMESEAL_NOW: '2025-11-03T01:10:00.000Z',
      PORT: new URL(serverUrl).port,
    });
    // Esplora down: the bundle is kept, the proof stays pending and says why.
    esplora.down = true;
    const down = await client([
      'upgrade',
      'docs/a/f0000.txt',
      '--headers-from',
      esplora.url,
      '--network',
      'regtest',
      '--json',
    ]);
    expect(down.code, down.stdout + down.stderr).toBe(2);
    expect(lines(down)[0]).toMatchObject({
      state: 'pending',
      stage: 'published',
      notes: expect.arrayContaining([
        expect.stringMatching(/^the header of Bitcoin block \d+ from .*HTTP 503.*asked again next time$/),
      ]),
    });
    esplora.down = false;
    esplora.requests = [];

    const r = await timed('upgrade', () =>
      client(['upgrade', 'docs', '--headers-from', esplora.url, '--network', 'regtest', '--json']),
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = lines(r);
    expect(out).toHaveLength(COUNT);
    expect(out.every((l) => l.state === 'complete' && l.stage === 'anchored')).toBe(true);
    expect(esplora.requests).toHaveLength(2); // the block's hash by height, then its header: once for all the files

    const one = await client(['verify', 'docs/a/f0001.txt', '--network', 'regtest']);
    expect(one.code, one.stdout + one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^docs\/a\/f0001\.txt: COMPLETE: existed no later than /);
    // Beside each proof, the leaf's COSE receipt (RFC 9942), the bytes the server serves for the hash.
    const digest = crypto
      .createHash('sha256')
      .update(fs.readFileSync(path.join(tmp, 'docs/a/f0001.txt')))
      .digest('hex');
    const served = Buffer.from(await (await fetch(`${serverUrl}/api/proof/${digest}.receipt.cose`)).arrayBuffer());
    expect(served.length).toBeGreaterThan(100);
    expect(fs.readFileSync(path.join(tmp, 'docs/a/f0001.txt.receipt.cose')).equals(served)).toBe(true);
  }, 90_000);

  test('a second day: upgrade --wait polls through a server restart; the grown log is shown to extend the tree seen (consistency from the tiles), and an older proof gets a consistency proof to the new tree', async () => {
    const restart = async (now: string) => {
      await stopServer();
      server = await startServer(project, { ...env, TIMESEAL_NOW: now, PORT: new URL(serverUrl).port });
    };
    await restart('2025-11-03T12:00:00.000Z');
    const docs2 = path.join(tmp, 'docs2');
    fs.mkdirSync(docs2);
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(docs2, `g${i}.txt`), `second day ${i}\n`);
    const stamped = await client(['stamp', 'docs2', '--server', serverUrl]);
    expect(stamped.code, stamped.stdout + stamped.stderr).toBe(0);

    // Waiting for the second day: not published yet (the server's clock, which the client follows, two seconds
    // before the day's end), then the server is down while the day is built.
    await restart('2025-11-03T23:59:58.000Z');
    let firstRound: () => void = () => {};
    const polled = new Promise<void>((resolve) => (firstRound = resolve));
    const waiting = client(
      [
        'upgrade',
        'docs2',
        '--wait',
        '--poll',
        '1',
        '--max-wait',
        '120',
        '--headers-from',
        esplora.url,
        '--network',
        'regtest',
        '--json',
      ],
      tmp,
      undefined,
      (err) => {
        if (err.includes('pending; asking again')) firstRound();
      },
    );
    await polled; // its first round found the day unpublished
    await stopServer();
    const built = await cli(project, ['ledger', 'build'], { ...env, TIMESEAL_NOW: '2025-11-04T00:01:00.000Z' });
    expect(built.code, built.stdout + built.stderr).toBe(0);
    await restart('2025-11-04T00:10:00.000Z');
    const waited = await timed('upgrade-wait', () => waiting);
    expect(waited.code, waited.stdout + waited.stderr).toBe(2); // published; Bitcoin is hours away, beyond --max-wait
    expect(waited.stderr).toMatch(/proof\(s\) pending; asking again at/);
    expect(lines(waited).map((l) => [l.state, l.stage])).toEqual(Array(3).fill(['pending', 'published']));

    // An older proof without its consistency proof: upgrade proves its tree inside the new one, from the tiles.
    const docs3 = path.join(tmp, 'docs3');
    fs.mkdirSync(docs3);
    fs.copyFileSync(files[2]!, path.join(docs3, 'f002.txt'));
    const old = JSON.parse(fs.readFileSync(`${files[2]}.timeseal.json`, 'utf8'));
    fs.writeFileSync(
      path.join(docs3, 'f002.txt.timeseal.json'),
      JSON.stringify({ ...old, file: 'f002.txt', consistency: null }, null, 2),
    );
    const up = await client(['upgrade', 'docs3', '--headers-from', esplora.url, '--network', 'regtest', '--json']);
    expect(up.code, up.stdout + up.stderr).toBe(0);
    const upgraded = JSON.parse(fs.readFileSync(path.join(docs3, 'f002.txt.timeseal.json'), 'utf8'));
    expect(upgraded.consistency.proof.length).toBeGreaterThan(0);
    const day1Size: number = old.bundle.tree_size;
    const trust = JSON.parse(fs.readFileSync(path.join(tmp, 'trust.json'), 'utf8'));
    const sizes = Object.values(
      trust.logs as Record<string, { checkpoints: Array<{ size: number }> }>,
    )[0]!.checkpoints.map((c) => c.size);
    expect(sizes).toEqual([day1Size, day1Size + 3]);
    const v = await client(['verify', 'docs3/f002.txt', '--network', 'regtest', '--json']);
    expect(v.code, v.stdout).toBe(0);
    expect(lines(v)[0].layers.find((x: any) => x.layer === 'log-view').checked).toContain(
      `consistent with the signed tree of size ${day1Size + 3}, which this trust store saw`,
    );
  }, 120_000);

  test("stamp's other inputs: stdin, --digest, --digests-from, --out-dir, --all, --exclude; verify and info find the proofs there; --keys DIR", async () => {
    const d = path.join(tmp, 'docs4');
    fs.mkdirSync(path.join(d, 'sub'), { recursive: true });
    for (const [name, text] of [
      ['x.txt', 'x'],
      ['.dot.txt', 'dot'],
      ['skip.log', 'log'],
      ['sub/y.txt', 'y'],
      ['named.txt', 'named'],
    ])
      fs.writeFileSync(path.join(d, name!), `${text}\n`);
    const sha = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
    const digest = sha('a digest given as it is');
    fs.writeFileSync(path.join(tmp, 'list.sha256'), `${sha('named\n')} *docs4/named.txt\n`);
    const r = await client(
      [
        'stamp',
        'docs4',
        '-',
        '--digest',
        digest,
        '--digests-from',
        'list.sha256',
        '--out-dir',
        'proofs',
        '--all',
        '--exclude',
        '*.log',
        '--exclude',
        'named.txt',
        '--server',
        serverUrl,
        '--json',
      ],
      tmp,
      'from stdin\n',
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const made = new Set<string>();
    const walkOut = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walkOut(p);
        else made.add(path.relative(path.join(tmp, 'proofs'), p));
      }
    };
    walkOut(path.join(tmp, 'proofs'));
    // --exclude applies to the folder walked and to the list's names alike.
    expect([...made].sort()).toEqual(
      [
        `${digest}.timeseal.json`,
        `${sha('from stdin\n')}.timeseal.json`,
        'docs4/.dot.txt.timeseal.json',
        'docs4/sub/y.txt.timeseal.json',
        'docs4/x.txt.timeseal.json',
      ].sort(),
    );
    expect(JSON.parse(fs.readFileSync(path.join(tmp, 'proofs/docs4/x.txt.timeseal.json'), 'utf8')).file).toBe(
      '../../docs4/x.txt',
    );

    const v = await client([
      'verify',
      'docs4',
      '--out-dir',
      'proofs',
      '--all',
      '--exclude',
      '*.log',
      '--exclude',
      'named.txt',
      '--json',
    ]);
    expect(v.code, v.stdout + v.stderr).toBe(2);
    expect(lines(v).map((l) => [l.file, l.state])).toEqual([
      ['docs4/.dot.txt', 'pending'],
      ['docs4/sub/y.txt', 'pending'],
      ['docs4/x.txt', 'pending'],
    ]);
    const byDigest = await client([
      'verify',
      '--digest',
      digest,
      '--out-dir',
      'proofs',
      '--keys',
      env.TIMESEAL_KEYS!,
      '--json',
    ]);
    expect(byDigest.code, byDigest.stdout).toBe(2);
    expect(lines(byDigest)[0].layers.find((l: any) => l.layer === 'keys').checked).toBe('the keys given');
    const missing = await client(['verify', 'docs4/skip.log', '--out-dir', 'proofs']);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toMatch(
      /^docs4\/skip\.log: NOT FOUND: no proof file proofs\/docs4\/skip\.log\.timeseal\.json/,
    );
    const info = await client(['info', 'docs4/x.txt', '--out-dir', 'proofs', '--json']);
    expect(info.code).toBe(0);
    expect(lines(info)[0]).toMatchObject({
      stage: 'stamped',
      file: '../../docs4/x.txt',
      ledgerDate: '2025-11-04',
      receipt: { genTime: '2025-11-04T00:10:00.000Z' },
    });
  }, 60_000);

  test('verify with the server, Esplora and the calendars stopped: 0 for every file', async () => {
    await stopServer();
    await Promise.all([...calendars.map((c) => c.stop()), esplora.stop()]);
    const r = await timed('verify-complete', () => client(['verify', 'docs', '--network', 'regtest', '--json']));
    expect(r.code, r.stderr).toBe(0);
    const out = lines(r);
    expect(out).toHaveLength(COUNT);
    for (const l of out) {
      expect(l.state, JSON.stringify(l)).toBe('complete');
      const layer = (name: string) => l.layers.find((x: any) => x.layer === name);
      expect(layer('document').status).toBe('ok');
      expect(layer('receipt').status).toBe('ok');
      expect(layer('ledger').status).toBe('ok');
      expect(layer('log-signatures').checked).toMatch(/ECDSA P-256, ML-DSA-65, Ed25519, ML-DSA-44/);
      expect(layer('log-view').status).toBe('ok');
      expect(layer('bitcoin')).toMatchObject({
        status: 'ok',
        bound: { time: new Date(chain.blocks[height]!.time * 1000).toISOString() },
      });
    }
    // The earliest bound is the receipt's time; Bitcoin bounds it later.
    expect(out[0].existedNoLaterThan.time).toBe(NOW);
  }, 60_000);

  test('a proof whose checkpoint is a validly signed fork of the tree the client saw: 1', async () => {
    const fork = path.join(tmp, 'fork');
    fs.mkdirSync(fork);
    fs.copyFileSync(files[0]!, path.join(fork, 'f000.txt'));
    const proof = JSON.parse(fs.readFileSync(`${files[0]}.timeseal.json`, 'utf8'));
    const bundle = proof.bundle;
    // Another tree of the same size holding the same hash at the same leaf: one other entry replaced.
    const ledger = parseLedger(fs.readFileSync(path.join(project, 'ledgers', `${DAY}.json`)));
    const entries = ledger.entries.map((e) => e.hash);
    entries[bundle.leaf_index === 0 ? 1 : 0] = crypto.randomBytes(32).toString('hex');
    const leaves = entries.map((h) => leafHash(fromHex(h)));
    const memo = new Map<string, Uint8Array>();
    const read = (level: number, index: number): Uint8Array => {
      if (level === 0) return leaves[index]!;
      const key = `${level}/${index}`;
      let h = memo.get(key);
      if (h === undefined) memo.set(key, (h = nodeHash(read(level - 1, 2 * index), read(level - 1, 2 * index + 1))));
      return h;
    };
    const size = entries.length;
    const root = treeHash(size, read);
    const keys = loadSigningKeys({ keys: env.TIMESEAL_KEYS!, privateKeys: env.TIMESEAL_PRIVATE_KEYS! });
    const origin = ledger.origin;
    const note = signCheckpoint({ origin, size, root }, [
      ecdsaNoteSigner(origin, keys.ecdsaSecret, keys.public.ecdsa),
      mldsaNoteSigner(origin, keys.mldsaSeed, keys.public.mldsa),
      ed25519NoteSigner(origin, keys.ed25519Seed!),
      mldsa44CosignatureSigner(origin, keys.mldsa44Seed!),
    ]);
    const forked = {
      ...proof,
      bundle: {
        ...bundle,
        inclusion_path: inclusionProof(bundle.leaf_index, size, read).map(toHex),
        checkpoint: note,
        ots: null,
      },
      consistency: null,
      headers: [],
    };
    fs.writeFileSync(path.join(fork, 'f000.txt.timeseal.json'), JSON.stringify(forked, null, 2));

    const r = await client(['verify', 'fork/f000.txt', '--network', 'regtest', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const [l] = lines(r);
    expect(l.state).toBe('invalid');
    expect(l.layers.find((x: any) => x.layer === 'ledger').status).toBe('ok'); // validly signed, the path checks…
    expect(l.layers.find((x: any) => x.layer === 'log-view')).toMatchObject({
      status: 'failed',
      checked: expect.stringMatching(/^fork: .* another tree of size \d+/),
    });
  }, 60_000);

  test('one changed byte in a file: 1, naming it', async () => {
    // A file of the second folder, three quarters of the way through the list.
    const index = (COUNT * 3) / 4;
    const changed = files[index]!;
    const name = `docs/b/deeper/f${String(index).padStart(4, '0')}.txt`;
    expect(path.relative(tmp, changed)).toBe(name);
    const bytes = fs.readFileSync(changed);
    bytes[0]! ^= 0x01;
    fs.writeFileSync(changed, bytes);
    const r = await client(['verify', 'docs', '--network', 'regtest', '--json']);
    expect(r.code).toBe(1);
    const bad = lines(r).filter((l) => l.state !== 'complete');
    expect(bad.map((l) => l.file)).toEqual([name]);
    expect(bad[0].problems[0]).toMatch(/^document: the document's SHA-256 is [0-9a-f]{64}, but the proof is for/);
    const human = await client(['verify', name, '--network', 'regtest']);
    expect(human.code).toBe(1);
    expect(human.stdout.startsWith(`${name}: INVALID: document: `), human.stdout).toBe(true);
  }, 60_000);

  test('the library under Node 20: verify, info, hashing, an aborted stamp as a typed error; its types check', async () => {
    const script = path.join(app, 'use.mjs');
    fs.writeFileSync(
      script,
      `import fs from 'node:fs';
import { parseProofFile, parseTrust, verify, describeProof, sha256Hex, stamp, TimesealClientError, VerifyCache } from 'timeseal-client';
const trust = parseTrust(fs.readFileSync(process.env.TIMESEAL_TRUST, 'utf8'));
const proof = parseProofFile(fs.readFileSync(process.argv[2], 'utf8'));
const cache = new VerifyCache();
const report = await verify(proof, { trust, network: 'regtest', hash: proof.hash, cache });
const info = await describeProof(proof);
const controller = new AbortController();
controller.abort();
let aborted;
try { await stamp([proof.hash], { server: 'http://127.0.0.1:9', signal: controller.signal }); } catch (err) { aborted = err instanceof TimesealClientError ? err.code : String(err); }
console.log(JSON.stringify({ state: report.state, stage: info.stage, abc: sha256Hex('abc'), aborted }));
`,
    );
    const r = spawnSync(NODE20, [script, `${files[1]}.timeseal.json`], { cwd: app, env: env20(), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      state: 'complete',
      stage: 'anchored',
      abc: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      aborted: 'aborted',
    });

    fs.writeFileSync(
      path.join(app, 'consumer.ts'),
      `import { verify, upgrade, stamp, type ProofFile, type VerifyReport, type TrustData } from 'timeseal-client';
export async function check(p: ProofFile, trust: TrustData): Promise<0 | 1 | 2> {
  const r: VerifyReport = await verify(p, { trust, network: 'mainnet' });
  await upgrade([p], { trust, headersFrom: 'https://blockstream.info/api', signal: AbortSignal.timeout(1000) });
  const s = await stamp([p.hash], { server: 'https://timeseal.example' });
  return s.results[0]!.ok ? r.exitCode : 1;
}
`,
    );
    const tsc = spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--lib',
        'es2022,dom',
        'consumer.ts',
      ],
      { cwd: app, encoding: 'utf8' },
    );
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
  }, 60_000);

  test('the library in a browser (Chromium): verify a proof, hash a Blob as a stream', async () => {
    const dist = path.join(app, 'node_modules/timeseal-client/dist');
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      await context.route('http://localhost:4321/**', (route) => {
        const p = new URL(route.request().url()).pathname;
        if (p === '/') return route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>client</title>' });
        const file = path.join(dist, p);
        if (!file.startsWith(dist) || !fs.existsSync(file)) return route.fulfill({ status: 404, body: '' });
        return route.fulfill({ contentType: 'text/javascript', body: fs.readFileSync(file, 'utf8') });
      });
      const page = await context.newPage();
      await page.goto('http://localhost:4321/'); // a secure context: Web Crypto is there
      // Given as text: the test runner rewrites import() in functions of this file.
      const script = `(async ([proofText, trustText]) => {
        const lib = await import('/index.mjs');
        const proof = lib.parseProofFile(proofText);
        const report = await lib.verify(proof, { trust: lib.parseTrust(trustText), network: 'regtest' });
        const streamed = await lib.hashStream(new Blob(['abc']).stream());
        return { state: report.state, layers: report.layers.map((l) => l.layer + ':' + l.status + (l.status === 'failed' ? ' ' + l.checked : '')), streamed };
      })(${JSON.stringify([fs.readFileSync(`${files[3]}.timeseal.json`, 'utf8'), fs.readFileSync(path.join(tmp, 'trust.json'), 'utf8')])})`;
      const result = (await page.evaluate(script)) as { state: string; layers: string[]; streamed: string };
      expect(result.streamed).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
      expect(result.state, result.layers.join(' ')).toBe('complete');
      expect(result.layers).toContain('bitcoin:ok');
    } finally {
      await browser.close();
    }
  }, 60_000);
});
