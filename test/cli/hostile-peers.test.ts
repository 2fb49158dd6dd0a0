// Outgoing requests against hostile peers (pipeline/http.ts), through the real CLI: a TSA
// (`timeseal tsa stamp`), a witness (`timeseal witness cosign`) and an archive host (`timeseal verify --archive
// URL`) that answer 512 MiB, an endless body, a gzip bomb (1 GiB inflated), a 307 to a canary, or one byte every
// 200 ms. Each command fails with the reason, nothing reaches the canary, nothing is published, and the
// command's peak RSS (GNU time's maximum resident set size) stays under 250 MB. `timeseal serve` keeps answering
// its API while its schedule's `tsa stamp` talks to an endless peer, and its own peak RSS stays bounded too.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ed25519PublicKey, encodeVkey, NOTE_TYPE_ED25519_COSIGNATURE } from '../../core/cosignature.ts';
import { fromHex } from '../../core/encoding.ts';
import { grantedResponse, randomSerial, receiptRequest, tstInfo, type TsaIdentity } from '../../core/tsa-authority.ts';
import { loadTsaKeys } from '../../runtime/keys.ts';
import { HOSTILE_MODES, startHostilePeer, type HostileMode, type HostilePeer } from '../support/hostile-peer.ts';
import { BIN, makeHashes, removeTempProjects, run, sleep, start, tempProject, type RunResult } from './helpers.ts';
import { listeningUrl } from '../support/until.ts';

// The commands' peak RSS on this code: 100–150 MB (serve: under 200 MB); on the code before pipeline/http.ts,
// 390 MB (a gzip bomb cut off by the deadline while it inflated) to 1.7 GB (512 MiB answers).
const PEAK_RSS_LIMIT_MB = 250;
/** Each request's deadline (TSA_TIMEOUT_MS, TIMESEAL_WITNESS_TIMEOUT_MS, verify --timeout): short for the trickle,
 * which only the deadline stops, and for the endless body, which on the code before pipeline/http.ts fills memory
 * for as long as it is given; long enough for the others that only the cap or the refusal stops them (that code
 * took all 512 MiB, or inflated all 1 GiB). */
const DEADLINE_MS: Record<HostileMode, string> = {
  huge: '5000',
  endless: '1500',
  'gzip-bomb': '5000',
  redirect: '5000',
  trickle: '1500',
};
const WITNESS = 'hostile.example/witness';
const WITNESS_VKEY = encodeVkey(WITNESS, NOTE_TYPE_ED25519_COSIGNATURE, ed25519PublicKey(new Uint8Array(32).fill(7)));

/** What each command must say about each peer. */
const REASONS: Record<HostileMode, { tsa: RegExp; witness: RegExp; verify: RegExp }> = {
  huge: {
    tsa: /exceeds the 1048576-byte limit/,
    witness: /exceeds the 65536-byte limit/,
    verify: /days\.json: answer exceeds the 16777216-byte limit/,
  },
  endless: {
    tsa: /exceeds the 1048576-byte limit/,
    witness: /exceeds the 65536-byte limit/,
    verify: /days\.json: answer exceeds the 16777216-byte limit/,
  },
  'gzip-bomb': {
    tsa: /gzip-encoded although identity was asked for; not decompressed/,
    witness: /gzip-encoded although identity was asked for; not decompressed/,
    verify: /days\.json: answer is gzip-encoded .*not decompressed/,
  },
  redirect: {
    tsa: /HTTP 307 redirect to http:\/\/127\.0\.0\.1:\d+\/stolen\S*, not followed/,
    witness: /HTTP 307 redirect .*, not followed/,
    verify: /days\.json: HTTP 307 redirect .*, not followed/,
  },
  trickle: {
    tsa: /no answer within 1500 ms/,
    witness: /did not answer within 1500 ms/,
    verify: /days\.json: did not answer within 1500 ms/,
  },
};

/** `timeseal <args>` under GNU time (`-f %M`): its result and its peak RSS in MB. The environment is the
 * one test/cli/helpers.ts gives the CLI: ours without TIMESEAL_* or NODE_OPTIONS, the project's Node first. */
async function measured(
  cwd: string,
  args: string[],
  extra: Record<string, string>,
): Promise<RunResult & { peakMb: number }> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('TIMESEAL_') && k !== 'NODE_OPTIONS'),
  );
  env.PATH = `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  const report = path.join(cwd, `peak-rss-${process.hrtime.bigint()}.txt`);
  const child = spawn('/usr/bin/time', ['-o', report, '-f', '%M', BIN, ...args], {
    cwd,
    env: { ...env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c, s) => resolve({ code: c, signal: s }));
    },
  );
  // GNU time writes "Command exited with non-zero status N" (or "…terminated by signal N") before the figure.
  const kb = Number(fs.readFileSync(report, 'utf8').trim().split('\n').at(-1));
  return { code, signal, stdout, stderr, peakMb: Math.round(kb / 1024) };
}

/** Peak RSS of a running process in MB (VmHWM), or undefined once it is gone. */
function peakRssMb(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

describe('outgoing requests to hostile peers', () => {
  let dir: string;
  let peer: HostilePeer;
  const ledgers = () => path.join(dir, 'ledgers');
  const published = (suffix: string) => fs.readdirSync(ledgers()).filter((f) => f.endsWith(suffix));
  const figures: string[] = [];

  beforeAll(async () => {
    dir = tempProject('hostile');
    expect(run(dir, ['keys', 'init']).code).toBe(0);
    expect(
      run(dir, ['import', '-'], {
        env: { TIMESEAL_NOW: '2025-11-02T10:00:00.000Z' },
        input: `${makeHashes('hostile', 20).join('\n')}\n`,
      }).code,
    ).toBe(0);
    const built = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
    expect(built.code, built.stderr).toBe(0);
    peer = await startHostilePeer();
    // The archive host serves the real keys, so that verify gets past them to days.json.
    peer.files.set('/keys/', path.join(dir, 'keys'));
  });
  afterAll(async () => {
    await peer?.stop();
    removeTempProjects();
    // The figures of the run, for the commit message and the report.
    if (figures.length > 0) console.log(`peak RSS:\n${figures.join('\n')}`);
  });

  /** Each command, run against the peer with a deadline. */
  const commands = {
    tsa: (deadline: string) =>
      measured(dir, ['tsa', 'stamp', '--json'], { TSA_URLS: `${peer.url}/tsa`, TSA_TIMEOUT_MS: deadline }),
    witness: (deadline: string) =>
      measured(dir, ['witness', 'cosign', '--json'], {
        TIMESEAL_WITNESSES: `${WITNESS_VKEY} ${peer.url}/witness`,
        TIMESEAL_WITNESS_TIMEOUT_MS: deadline,
      }),
    verify: (deadline: string) =>
      measured(dir, ['verify', '--archive', `${peer.url}/ledgers/`, '--timeout', deadline, '--json'], {}),
  };
  const cases = HOSTILE_MODES.flatMap((mode) =>
    (['tsa', 'witness', 'verify'] as const).map((command) => [mode, command] as const),
  );
  test.each(cases)(
    `%s peer, %s: fails with the reason, nothing reaches the canary, peak RSS < ${PEAK_RSS_LIMIT_MB} MB`,
    async (mode, command) => {
      peer.mode = mode;
      const requests = peer.requests;
      const sent = peer.sent;
      const started = Date.now();
      const result = await commands[command](DEADLINE_MS[mode]);
      figures.push(
        `  ${mode} ${command}: ${result.peakMb} MB, ${Date.now() - started} ms, the peer wrote ${peer.sent - sent} bytes`,
      );
      let reason: string;
      if (command === 'tsa') {
        const json = JSON.parse(result.stdout || 'null');
        expect(json?.days?.[0], result.stderr).toMatchObject({ date: '2025-11-02', outcome: 'failed', tokens: [] });
        reason = json.days[0].failures[0].reason;
        expect(published('.tsr')).toEqual([]);
      } else if (command === 'witness') {
        const json = JSON.parse(result.stdout || 'null');
        expect(json, result.stderr).toMatchObject({ date: '2025-11-02', cosigned: [], met: false });
        expect(json.failures.map((f: { witness: string }) => f.witness)).toEqual([WITNESS]);
        reason = json.failures[0].reason;
        expect(published('.cosignatures')).toEqual([]);
      } else {
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(
          new RegExp(
            `keys: taken from ${peer.url}/keys/ on the same host as the archive: pin them with --keys DIR\\|URL`,
          ),
        );
        reason = result.stderr;
      }
      // A verify stopped by its deadline may pass later (75, try again); every other refusal is final (1). The
      // builds' steps (tsa, witness) report the failure in their output and exit 1 either way.
      expect(result.code, result.stderr).toBe(command === 'verify' && mode === 'trickle' ? 75 : 1);
      expect(reason).toMatch(REASONS[mode][command]);
      expect(peer.requests).toBeGreaterThan(requests);
      expect(peer.canary.requests).toEqual([]);
      expect(result.peakMb, `peak RSS of timeseal ${command} against the ${mode} peer`).toBeLessThan(PEAK_RSS_LIMIT_MB);
    },
  );

  test('an honest archive host: verify --archive URL passes and states where the keys came from; --keys pins them', async () => {
    peer.files.set('/ledgers/', ledgers());
    try {
      const url = `${peer.url}/ledgers/`;
      const fromHost = await measured(dir, ['verify', '--archive', url, '--json'], {});
      expect(fromHost.code, fromHost.stderr).toBe(0);
      expect(JSON.parse(fromHost.stdout)).toMatchObject({
        ok: true,
        days: 1,
        keys: { location: `${peer.url}/keys/`, from: 'archive host' },
      });
      expect(fromHost.stderr).toMatch(/keys: taken from .* on the same host as the archive/);
      const pinned = await measured(dir, ['verify', '--archive', url, '--keys', path.join(dir, 'keys'), '--json'], {});
      expect(pinned.code, pinned.stderr).toBe(0);
      expect(JSON.parse(pinned.stdout)).toMatchObject({
        ok: true,
        keys: { location: path.join(dir, 'keys'), from: '--keys' },
      });
      expect(pinned.stderr).not.toMatch(/keys: taken from/);
    } finally {
      peer.files.delete('/ledgers/');
    }
  });

  test(
    'timeseal serve keeps answering its API while its schedule asks an endless TSA; its peak RSS stays bounded',
    { timeout: 90_000 },
    async () => {
      peer.mode = 'endless';
      const requests = peer.requests;
      const server = start(dir, ['serve'], {
        env: {
          TIMESEAL_NOW: '2025-11-03T00:05:00.000Z',
          PORT: '0',
          TIMESEAL_SITE: path.join(dir, 'no-site'),
          OTS_CALENDARS: 'http://127.0.0.1:9/',
          TSA_URLS: `${peer.url}/tsa`,
          TSA_TIMEOUT_MS: '2000',
        },
      });
      let stdout = '';
      server.child.stdout!.on('data', (s: string) => (stdout += s));
      let stderr = '';
      server.child.stderr!.on('data', (s: string) => (stderr += s));
      const pid = server.child.pid!;
      try {
        const base = await listeningUrl(
          () => stdout,
          30_000,
          () => stderr,
        );
        // The catch-up runs the schedule's steps at once: wait for the TSA request, then ask the API every 250 ms
        // until the step is done (and at least the TSA deadline long), each answer within 2 s.
        await vi.waitFor(() => expect(peer.requests, stderr).toBeGreaterThan(requests), {
          timeout: 60_000,
          interval: 50,
        });
        const asked = Date.now();
        const latencies: number[] = [];
        let peak = 0;
        while (Date.now() - asked < 2500 || !/scheduled tsa stamp (done|failed)/.test(stderr)) {
          expect(Date.now() - asked, stderr).toBeLessThan(30_000);
          const t = Date.now();
          const res = await fetch(`${base}/api/queue-stats.php`, { signal: AbortSignal.timeout(2000) });
          expect(res.status).toBe(200);
          await res.json();
          latencies.push(Date.now() - t);
          peak = Math.max(peak, peakRssMb(pid) ?? 0);
          await sleep(250);
        }
        peak = Math.max(peak, peakRssMb(pid) ?? 0);
        figures.push(
          `  serve with an endless TSA: ${peak} MB; API answered ${latencies.length} times, slowest ${Math.max(...latencies)} ms`,
        );
        expect(Math.max(...latencies)).toBeLessThan(2000);
        expect(peak, 'peak RSS of timeseal serve').toBeLessThan(PEAK_RSS_LIMIT_MB);
        const done = stderr
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg: string; result?: Array<{ failures: Array<{ reason: string }> }> });
        // The day failed: the log says so ("failed for 1 of 1 day"), not "done", and its one "delayed" line names
        // why (the run's last line leaves the raw error out).
        expect(done.find((r) => r.msg.startsWith('scheduled tsa stamp failed for '))).toBeDefined();
        expect(
          done
            .filter((r) => r.msg.startsWith('time-stamping delayed: '))
            .map((r) => r.msg)
            .join('\n'),
        ).toMatch(REASONS.endless.tsa);
        expect(published('.tsr')).toEqual([]);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    },
  );
});

/** Names of every file under `root`, relative to it (folders left out). */
function filesUnder(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  return (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

/** How an archive host answers one path instead of serving the archive's file. */
type Answer = (res: http.ServerResponse, honest: Buffer) => void;

/** An archive host on loopback: the real archive's ledgers/ and keys/ as `timeseal serve` would serve them,
 * except the paths in `answers`. `sent` counts the body bytes written by those answers. */
async function startArchiveHost(project: string) {
  const answers = new Map<string, Answer>();
  const host = { url: '', answers, sent: 0, stop: async () => {} };
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const [, top, ...rest] = pathname.split('/');
    const file = path.join(project, top === 'keys' ? 'keys' : 'ledgers', ...rest);
    const known = (top === 'keys' || top === 'ledgers') && !rest.includes('..') && fs.existsSync(file);
    const honest = known && fs.statSync(file).isFile() ? fs.readFileSync(file) : undefined;
    const answer = answers.get(pathname);
    if (answer !== undefined) return answer(res, honest ?? Buffer.alloc(0));
    if (honest === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': honest.length }).end(honest);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  host.stop = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return host;
}

const GiB = 1024 * 1024 * 1024;
/** A ledger past its size: the honest bytes, then filler up to `total` bytes (no content-length), written as fast
 * as the client reads and stopped when it goes away. */
const oversizeLedger =
  (host: { sent: number }, total: number): Answer =>
  (res, honest) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const filler = Buffer.alloc(64 * 1024, 0x20);
    let open = true;
    res.on('close', () => (open = false));
    let written = 0;
    const pour = (): void => {
      while (open && written < total) {
        const piece = written === 0 ? honest : filler;
        written += piece.length;
        host.sent += piece.length;
        if (!res.write(piece)) return void res.once('drain', pour);
      }
      if (open) res.end();
    };
    pour();
  };

describe('a day ledger larger than its signed entry count allows (mirror pull, verify --archive URL)', () => {
  const DAY = '2025-11-02';
  let project: string;
  let work: string;
  let host: Awaited<ReturnType<typeof startArchiveHost>>;
  const figures: string[] = [];
  const keysDir = () => path.join(project, 'keys');

  beforeAll(async () => {
    project = tempProject('hostile-ledger');
    work = tempProject('hostile-ledger-work');
    // Keys made on the day, so that a receipt of the day is within the TSA certificate's validity.
    expect(run(project, ['keys', 'init'], { env: { TIMESEAL_NOW: `${DAY}T09:00:00.000Z` } }).code).toBe(0);
    const imported = run(project, ['import', '-'], {
      env: { TIMESEAL_NOW: `${DAY}T10:00:00.000Z` },
      input: `${makeHashes('hostile-ledger', 20).join('\n')}\n`,
    });
    expect(imported.code, imported.stderr).toBe(0);
    const built = run(project, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
    expect(built.code, built.stderr).toBe(0);
    host = await startArchiveHost(project);
  });
  afterAll(async () => {
    await host?.stop();
    removeTempProjects();
    if (figures.length > 0) console.log(`peak RSS:\n${figures.join('\n')}`);
  });

  const commands = {
    mirror: (dir: string) =>
      measured(work, ['mirror', 'pull', `${host.url}/ledgers/`, dir, '--keys', keysDir(), '--json'], {}),
    verify: () => measured(work, ['verify', '--archive', `${host.url}/ledgers/`, '--keys', keysDir(), '--json'], {}),
  };

  test.each([
    ['mirror', '1 GiB', GiB],
    ['verify', '1 GiB', GiB],
    ['mirror', 'an endless', 64 * GiB],
  ] as const)(
    '%s against %s ledger for a day of 20 entries: refused as soon as the excess arrives, peak RSS < 200 MB, nothing left in the mirror',
    async (command, what, total) => {
      host.answers.set(`/ledgers/${DAY}.json`, oversizeLedger(host, total));
      const sent = host.sent;
      const dir = path.join(work, `mirror-${command}-${total}`);
      try {
        const result = command === 'mirror' ? await commands.mirror(dir) : await commands.verify();
        const written = host.sent - sent;
        const honest = fs.statSync(path.join(project, 'ledgers', `${DAY}.json`)).size;
        figures.push(
          `  ${what} ledger, ${command}: ${result.peakMb} MB; the host wrote ${written} bytes; the honest ledger has ${honest}`,
        );
        expect(result.code, result.stderr).toBe(1);
        const said = command === 'mirror' ? JSON.parse(result.stdout).problem : JSON.parse(result.stdout).problems[0];
        const refused = new RegExp(
          `^${DAY}\\.json: more than (\\d+) bytes, the most a ledger of 20 entries can hold \\(docs/FORMAT\\.md §3\\): refused before the rest was read$`,
        ).exec(said);
        expect(refused, said).not.toBeNull();
        // The bound is the honest size and a little (the numbers' longest digits, a previous day's link).
        expect(Number(refused![1]) - honest).toBeGreaterThanOrEqual(0);
        expect(Number(refused![1]) - honest).toBeLessThanOrEqual(140);
        // What the host got to write before the client hung up: the bound and the sockets' buffers.
        expect(written).toBeLessThan(32 * 1024 * 1024);
        expect(result.peakMb, `peak RSS of timeseal ${command}`).toBeLessThan(200);
        if (command === 'mirror') expect(filesUnder(dir).filter((f) => !f.startsWith('.mirror-lock'))).toEqual([]);
      } finally {
        host.answers.clear();
      }
    },
  );

  test('receipt check --archive URL against a 1 GiB ledger: refused as soon as the excess arrives, peak RSS < 200 MB', async () => {
    // A receipt for one of the day's hashes, signed by the project's TSA as `timeseal serve` signs them.
    const tsa = loadTsaKeys({ keys: keysDir(), privateKeys: path.join(project, 'data/private-keys') })!;
    const identity: TsaIdentity = {
      certificates: tsa.certificates,
      sign: (data) => crypto.sign('sha256', data, tsa.privateKey),
    };
    const hash = makeHashes('hostile-ledger', 20)[0]!;
    const request = receiptRequest(fromHex(hash));
    const at = new Date(`${DAY}T10:00:00.000Z`);
    fs.writeFileSync(
      path.join(work, 'day.tsr'),
      grantedResponse(tstInfo(request, identity, at, randomSerial()), request, identity),
    );
    host.answers.set(`/ledgers/${DAY}.json`, oversizeLedger(host, GiB));
    const sent = host.sent;
    try {
      const args = ['receipt', 'check', 'day.tsr', '--digest', hash, '--archive', `${host.url}/ledgers/`];
      const result = await measured(work, [...args, '--keys', keysDir()], {});
      figures.push(`  1 GiB ledger, receipt check: ${result.peakMb} MB; the host wrote ${host.sent - sent} bytes`);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`^timeseal: ${DAY}\\.json: more than \\d+ bytes, the most a ledger of 20 entries can hold`, 'm'),
      );
      expect(host.sent - sent).toBeLessThan(32 * 1024 * 1024);
      expect(result.peakMb, 'peak RSS of timeseal receipt check').toBeLessThan(200);
    } finally {
      host.answers.clear();
    }
  });

  test('a pull that fails while other files are still arriving leaves none of them behind (.tmp/ empty)', async () => {
    let lateServed = false;
    host.answers.set(`/ledgers/${DAY}.json.sig`, (res) => void res.writeHead(500).end('broken'));
    // The day's checkpoint answers after the failure has ended the pull.
    host.answers.set(`/ledgers/${DAY}.checkpoint`, (res, honest) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-length': honest.length }).end(honest, () => (lateServed = true));
      }, 500);
    });
    const dir = path.join(work, 'mirror-late');
    try {
      const result = await commands.mirror(dir);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`${DAY}\\.json\\.sig: HTTP 500`));
      expect(lateServed).toBe(true);
      expect(filesUnder(dir).filter((f) => !f.startsWith('.mirror-lock'))).toEqual([]);
    } finally {
      host.answers.clear();
    }
  });

  test('the honest host: mirror pull and verify --archive URL pass', async () => {
    const pulled = await commands.mirror(path.join(work, 'mirror-honest'));
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(JSON.parse(pulled.stdout)).toMatchObject({ ok: true, days: { after: 1, fetched: [DAY] } });
    expect(fs.readFileSync(path.join(work, 'mirror-honest', `${DAY}.json`))).toEqual(
      fs.readFileSync(path.join(project, 'ledgers', `${DAY}.json`)),
    );
    expect(filesUnder(path.join(work, 'mirror-honest', '.tmp'))).toEqual([]);
    const verified = await commands.verify();
    expect(verified.code, verified.stderr).toBe(0);
  });
});
