// The installed client (client/, `timeseal-client`), as a person gets it: `npm pack` of a copy of client/, then
// `npm install` of the tarball offline into an empty folder with the system's npm, run with the system's Node 20
// and with the project's Node 24:
// - hashing a 1 GiB file (in the system's temporary folder, removed afterwards) ÷ `sha256sum` on the same file,
//   in the same rounds (their order rotates; the file is read once before, so every reader finds it cached):
//   the program end to end (`stamp` of the file against a loopback `timeseal serve`: start-up, hashing, pinning
//   the keys, one request, its receipt checked) and the library's hashStream() alone, timed inside the process;
// - 10,000 small files: the wall time of `stamp`, the HTTP requests the server answered (its request log at
//   debug level: one record per answer) and the server's CPU time (/proc), then the same for a second run, which
//   has nothing to send;
// - start-up: `timeseal-client --help` with the system's Node 20 (the median of BENCH_STARTS runs), beside a
//   bare `node -e 0`.
// Every measurement holds /tmp/timeseal-measure.lock (flock; this file takes it for its whole run) so that no
// other benchmark measures meanwhile. Prints a Markdown section on stdout; progress on stderr.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, TIMESEAL } from './common.ts';
import { waitForUrl } from './load.ts';

const LOCK = '/tmp/timeseal-measure.lock';
if (process.env.TIMESEAL_MEASURE_LOCKED !== LOCK) {
  const r = spawnSync(
    'flock',
    [LOCK, process.execPath, ...process.execArgv, import.meta.filename, ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, TIMESEAL_MEASURE_LOCKED: LOCK } },
  );
  process.exit(r.status ?? 1);
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SMALL_FILES = Number(process.env.BENCH_SMALL_FILES ?? 10_000);
const STARTS = Number(process.env.BENCH_STARTS ?? 21);
const BIG = 2 ** 30;
const NODE20 = '/usr/bin/node';
const NODE24 = process.execPath;
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';
const TICKS = 100; // USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s
const log = (m: string) => process.stderr.write(`bench client: ${m}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number): string => `${Math.round(x).toLocaleString('en-US')} ms`;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-client-'));
let server: ChildProcess | undefined;
try {
  // The package, installed offline into an empty folder (as test/client/client.test.ts does).
  const stage = path.join(tmp, 'stage');
  fs.mkdirSync(stage);
  fs.cpSync(path.join(ROOT, 'client'), path.join(stage, 'client'), {
    recursive: true,
    filter: (src) => !/[/\\](dist|node_modules)$|\.tgz$/.test(src),
  });
  for (const dir of ['core', 'node_modules']) fs.symlinkSync(path.join(ROOT, dir), path.join(stage, dir));
  const npmEnv = {
    PATH: SYSTEM_PATH,
    HOME: tmp,
    npm_config_update_notifier: 'false',
    npm_config_cache: path.join(tmp, 'npm-cache'),
  };
  const npm = (args: string[], cwd: string): string => {
    const r = spawnSync('/usr/bin/npm', args, { cwd, env: npmEnv, encoding: 'utf8', maxBuffer: 1 << 24 });
    if (r.status !== 0) throw new Error(`npm ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  log('npm pack and install');
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], path.join(stage, 'client'))) as [
    { filename: string; size: number; unpackedSize: number },
  ];
  const app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), '{"name": "app", "private": true, "type": "module"}\n');
  npm(['install', '--offline', '--no-audit', '--no-fund', path.join(tmp, packed.filename)], app);
  const cli = path.join(app, 'node_modules/timeseal-client/dist/cli.mjs');
  const clientEnv = { PATH: SYSTEM_PATH, HOME: tmp, TIMESEAL_TRUST: path.join(tmp, 'trust.json'), LANG: 'C.UTF-8' };

  // A server on the real clock.
  const project = path.join(tmp, 'project');
  fs.mkdirSync(project);
  const serverEnv = {
    ...process.env,
    TIMESEAL_DB: path.join(project, 'data/timeseal.db'),
    TIMESEAL_ARCHIVE: path.join(project, 'ledgers'),
    TIMESEAL_KEYS: path.join(project, 'keys'),
    TIMESEAL_PRIVATE_KEYS: path.join(project, 'data/private-keys'),
    TIMESEAL_SITE: path.join(project, 'site'),
    TIMESEAL_OUTBOX: path.join(project, 'data/outbox'),
    OTS_CALENDARS: 'http://127.0.0.1:9/,http://127.0.0.1:7/',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'debug',
    HOST: '127.0.0.1',
    PORT: '0',
  };
  const keys = spawnSync(TIMESEAL, ['keys', 'init'], { cwd: project, env: serverEnv, encoding: 'utf8' });
  if (keys.status !== 0) throw new Error(`keys init: ${keys.stderr}`);
  /** HTTP answers the server logged so far (one debug record each), and a wait for the marker's (below). */
  let answered = 0;
  let onMarker: (() => void) | undefined;
  const startServer = async (): Promise<string> => {
    server = spawn(TIMESEAL, ['serve'], { cwd: project, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let partial = '';
    server.stderr!.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const record = JSON.parse(line) as { msg?: string; route?: string; status?: number };
        if (record.msg !== 'request') continue;
        if (record.status === 400 && record.route === '/api/v1/beta/timestamp') onMarker?.();
        else answered++;
      }
    });
    return waitForUrl(server);
  };
  /** The server's CPU time so far, ms. */
  const serverCpu = (): number => {
    const fields = fs.readFileSync(`/proc/${server!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS; // utime, stime (fields 14 and 15)
  };
  const stopServer = async (): Promise<void> => {
    const s = server!;
    const exited = new Promise((resolve) => s.on('exit', resolve));
    s.kill('SIGTERM');
    await exited;
    server = undefined;
  };
  const run = (node: string, args: string[], cwd: string): { wall: number; stderr: string } => {
    const t = performance.now();
    const r = spawnSync(node, [cli, ...args], { cwd, env: clientEnv, encoding: 'utf8', maxBuffer: 1 << 26 });
    const wall = performance.now() - t;
    if (r.status !== 0) throw new Error(`timeseal-client ${args.join(' ')} (${node}) exited ${r.status}: ${r.stderr}`);
    return { wall, stderr: r.stderr };
  };

  // 1. A 1 GiB file.
  const url = await startServer();
  const big = path.join(tmp, 'big.bin');
  log('writing the 1 GiB file');
  const block = crypto.randomBytes(1 << 20);
  const fd = fs.openSync(big, 'w');
  for (let i = 0; i < BIG / block.length; i++) fs.writeSync(fd, block);
  fs.closeSync(fd);
  const sha = spawnSync('sha256sum', [big], { encoding: 'utf8' }).stdout.split(' ')[0]!;
  const libraryScript = path.join(app, 'hash.mjs');
  fs.writeFileSync(
    libraryScript,
    `import fs from 'node:fs';
import { hashStream } from 'timeseal-client';
const t = performance.now();
const hash = await hashStream(fs.createReadStream(process.argv[2], { highWaterMark: 1 << 20 }));
process.stdout.write(JSON.stringify({ hash, ms: performance.now() - t }));
`,
  );
  const cases: Array<{ name: string; run: (round: number) => number }> = [
    {
      name: 'sha256sum',
      run: () => {
        const t = performance.now();
        const r = spawnSync('sha256sum', [big], { encoding: 'utf8' });
        if (!r.stdout.startsWith(sha)) throw new Error('sha256sum changed its mind');
        return performance.now() - t;
      },
    },
    ...[NODE20, NODE24].flatMap((node) => {
      const label = node === NODE20 ? 'Node 20' : 'Node 24';
      return [
        {
          name: `stamp, ${label}`,
          run: (round: number) => {
            const { wall, stderr } = run(
              node,
              [
                'stamp',
                big,
                '--server',
                url,
                '--out-dir',
                path.join(tmp, `proofs-${label.replace(' ', '')}-${round}`),
                '--json',
              ],
              tmp,
            );
            if (!/1 distinct hash\(es\) sent in 1 request/.test(stderr)) throw new Error(`stamp: ${stderr}`);
            return wall;
          },
        },
        {
          name: `library hashStream(), ${label}`,
          run: () => {
            const r = spawnSync(node, [libraryScript, big], { cwd: app, env: clientEnv, encoding: 'utf8' });
            const out = JSON.parse(r.stdout) as { hash: string; ms: number };
            if (out.hash !== sha) throw new Error(`hashStream gave ${out.hash}, sha256sum ${sha}`);
            return out.ms;
          },
        },
      ];
    }),
  ];
  const times = new Map(cases.map((c) => [c.name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length]!;
      log(`round ${round + 1}/${ROUNDS}: ${c.name}`);
      times.get(c.name)!.push(c.run(round));
    }
  }
  fs.rmSync(big);
  const base = median(times.get('sha256sum')!);

  // 2. 10,000 small files: stamp, then a second run with nothing to send.
  const docs = path.join(tmp, 'docs');
  for (let d = 0; d < SMALL_FILES / 1000; d++) fs.mkdirSync(path.join(docs, `d${d}`), { recursive: true });
  for (let i = 0; i < SMALL_FILES; i++)
    fs.writeFileSync(path.join(docs, `d${Math.floor(i / 1000)}`, `f${i}.txt`), `small file ${i}\n`);
  // A request the client never makes (a malformed submission): once its record is logged, so is every answer
  // before it (the log is read only while this process waits, not during the runs of spawnSync above).
  const logged = async (): Promise<void> => {
    const marked = new Promise<void>((resolve) => (onMarker = resolve));
    await (
      await fetch(`${url}/api/v1/beta/timestamp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"hash": "marker"}',
      })
    ).arrayBuffer();
    await marked;
  };
  const folderRun = async (label: string) => {
    await logged();
    const before = { cpu: serverCpu(), answered };
    log(`${label}: stamp of ${SMALL_FILES.toLocaleString('en-US')} files`);
    const child = spawn(NODE20, [cli, 'stamp', 'docs', '--server', url, '--json'], {
      cwd: tmp,
      env: clientEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = performance.now();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const wall = performance.now() - t;
    if (code !== 0) throw new Error(`stamp docs exited ${code}: ${stderr}`);
    const cpu = serverCpu() - before.cpu;
    await logged();
    return {
      wall,
      cpu,
      requests: answered - before.answered,
      summary: /timeseal-client: (\d+ file.*)/.exec(stderr)?.[1] ?? '',
    };
  };
  const first = await folderRun('first run');
  const second = await folderRun('second run');
  const proofs = fs.readdirSync(docs, { recursive: true }).filter((f) => String(f).endsWith('.timeseal.json')).length;
  if (proofs !== SMALL_FILES) throw new Error(`${proofs} proof files for ${SMALL_FILES} files`);

  // 3. Start-up.
  const starts = (args: string[]): number[] =>
    Array.from({ length: STARTS }, () => {
      const t = performance.now();
      const r = spawnSync(NODE20, args, { env: clientEnv, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
      return performance.now() - t;
    });
  log('start-up');
  const bare = starts(['-e', '0']);
  const help = starts([cli, '--help']);
  await stopServer();

  const node20 = spawnSync(NODE20, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const row = (name: string) => {
    const t = times.get(name)!;
    return `| ${name} | ${ms(median(t))} | ${t.map(ms).join(', ')} | ${(base / median(t)).toFixed(2)} |`;
  };
  const out = [
    '## Client (`timeseal-client`, installed)',
    '',
    `The packed client (${(packed.size / 1024).toFixed(0)} KB packed, ${(packed.unpackedSize / 1024).toFixed(0)} KB installed, no dependencies) installed offline with the system's npm; Node 20 is the system's (${node20}), Node 24 the project's (${process.version}). The server is \`timeseal serve\` (SQLite) on loopback, on the real clock.`,
    '',
    `**Hashing a 1 GiB file** (one file in ${os.tmpdir()}, cached; the median of ${ROUNDS} rounds, the cases taking turns). "÷ sha256sum" is sha256sum's time divided by the case's: above 1, faster than sha256sum (goal ≥ 0.8). \`stamp\` is the whole program: start-up, hashing (node:crypto, 1 MiB reads), pinning the server's keys, one request and its receipt checked; the library's \`hashStream()\` is timed inside the process.`,
    '',
    '| 1 GiB hashed by | time (median) | runs | ÷ sha256sum |',
    '|---|---|---|---|',
    ...cases.map((c) => row(c.name)),
    '',
    `**${SMALL_FILES.toLocaleString('en-US')} small files** in ${SMALL_FILES / 1000} folders, \`stamp docs\` with Node 20 (receipts asked for and checked, a proof file written per file):`,
    '',
    '| run | wall time | requests the server answered | server CPU | the program says |',
    '|---|---|---|---|---|',
    `| first | ${ms(first.wall)} | ${first.requests} | ${ms(first.cpu)} | ${first.summary} |`,
    `| second (nothing new) | ${ms(second.wall)} | ${second.requests} | ${ms(second.cpu)} | ${second.summary} |`,
    '',
    `The requests the server answered include the keys fetched to compare with the pinned ones (each run); the server logs every answer at debug level for the count. The second run hashes every file again, finds each proof, and asks the server once about their day (not published yet: one GET /api/proof/<hash> for all of its proofs).`,
    '',
    `**Start-up**: \`timeseal-client --help\` with Node 20, the median of ${STARTS} runs: ${ms(median(help))} (goal ≤ 150 ms); a bare \`node -e 0\` in the same run: ${ms(median(bare))}.`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  if (server !== undefined) server.kill('SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true });
}
