// Benchmark of the archive on object storage: one day of 1,000,000 hashes built by `timeseal ledger build` into a
// folder, and the same hashes with the same keys into an s3:// archive on a private Ceph RADOS Gateway on loopback
// (scripts/ceph-rgw.sh: one monitor, one BlueStore OSD on a sparse file, one gateway). The S3 build writes its
// working copy exactly as the folder build writes the folder, then publishes every object (create-only PUTs, the
// mutable objects compare-and-swapped): the ratio of the two builds is the price of the store (goal ≤ 3). The
// two builds alternate, twice, because this machine's speed drifts from minute to minute; the bytes of every
// object in the bucket are compared with the folder's files.
// Prints a Markdown section. Usage: node bench/archive-s3.bench.ts [--hashes 1000000] [--rounds 2]
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openArchiveStore } from '../pipeline/storage/open.ts';
import { openDatabase } from '../store/sqlite/db.ts';
import { mb, ROOT, run, timed } from './common.ts';

const { values } = parseArgs({
  options: { hashes: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '2' } },
});
const perDay = Number(values.hashes);
const rounds = Number(values.rounds);
const DAY = '2025-11-02';
const BUILD_AT = { TIMESEAL_NOW: '2025-11-03T00:01:00Z' };

interface Gateway {
  env: Record<string, string>;
  bucket: string;
  /** The process ids of the cluster's daemons (the script's children). */
  daemons: number[];
  stop(): Promise<void>;
}

/** scripts/ceph-rgw.sh in a temporary folder, until stop() (it also stops when this process's pipe closes). */
function startGateway(): Promise<Gateway> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-ceph-'));
  const child = spawn('bash', [path.join(ROOT, 'scripts/ceph-rgw.sh'), dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = /^ready (.*)$/m.exec(stdout)?.[1];
      if (line === undefined) return;
      const f = new Map(line.split(' ').map((kv) => kv.split('=', 2) as [string, string]));
      resolve({
        env: {
          AWS_ENDPOINT_URL: f.get('endpoint')!,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: f.get('access_key')!,
          AWS_SECRET_ACCESS_KEY: f.get('secret_key')!,
        },
        bucket: f.get('bucket')!,
        daemons: spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter((pid) => pid !== '' && /^(ceph-|radosgw)/.test(fs.readFileSync(`/proc/${pid}/comm`, 'utf8')))
          .map(Number),
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
          fs.rmSync(dir, { recursive: true, force: true });
        },
      });
    });
    child.once('exit', (code) =>
      reject(new Error(`scripts/ceph-rgw.sh exited (${code}) before it was ready:\n${stderr}`)),
    );
  });
}

/** `count` random hashes (fixed by `seed`), spread over the day. */
function hashes(count: number, seed: string): Array<[string, string]> {
  const base = Date.parse(`${DAY}T00:00:00.000Z`);
  const out: Array<[string, string]> = [];
  let state = crypto.createHash('sha256').update(seed).digest();
  for (let i = 0; i < count; i++) {
    state = crypto.createHash('sha256').update(state).digest();
    out.push([state.toString('hex'), new Date(base + Math.floor((i / count) * 86_399_000)).toISOString()]);
  }
  return out;
}

/** A project with the keys of `keysFrom` and `rows` queued straight into SQLite (the import is not measured). */
function project(keysFrom: string, rows: Array<[string, string]>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-s3-'));
  for (const sub of ['keys', 'data/private-keys'])
    fs.cpSync(path.join(keysFrom, sub), path.join(dir, sub), { recursive: true });
  run(['status'], dir); // creates the database
  const db = openDatabase(path.join(dir, 'data/timeseal.db'));
  const insert = db.prepare(
    "INSERT INTO submissions (hash, submitted_at, ledger_date, source) VALUES (?, ?, ?, 'import')",
  );
  db.transaction(() => {
    for (const [hash, at] of rows) insert.run(hash, at, DAY);
  })();
  db.close();
  return dir;
}

/** CPU seconds (user + system) each daemon of the gateway's cluster has used so far, by name. */
function daemonCpu(gateway: Gateway): Record<string, number> {
  const out: Record<string, number> = {};
  for (const pid of gateway.daemons) {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out[stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))] = (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks (USER_HZ: 100 on Linux)
  }
  return out;
}

const sha = (bytes: Uint8Array): string => crypto.createHash('sha256').update(bytes).digest('hex');

const keys = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-bench-keys-'));
run(['keys', 'init'], keys);
const gateway = await startGateway();
const rows: Array<{
  round: number;
  folder: number;
  s3: number;
  cluster: Record<string, number>;
  objects: number;
  bytes: number;
  same: boolean;
}> = [];
try {
  for (let round = 1; round <= rounds; round++) {
    const day = hashes(perDay, `round ${round}`);
    const folderProject = project(keys, day);
    const s3Project = project(keys, day);
    const prefix = `round-${round}`;
    const s3Env = { ...gateway.env, TIMESEAL_ARCHIVE: `s3://${gateway.bucket}/${prefix}`, ...BUILD_AT };
    // Alternate which goes first, so that a drift of the machine's speed does not favour one.
    let folder = 0;
    let s3 = 0;
    let cluster: Record<string, number> = {};
    for (const which of round % 2 === 1 ? ['folder', 's3'] : ['s3', 'folder']) {
      if (which === 'folder') folder = timed(['ledger', 'build', '--json'], folderProject, BUILD_AT).seconds;
      else {
        const before = daemonCpu(gateway);
        s3 = timed(['ledger', 'build', '--json'], s3Project, s3Env).seconds;
        cluster = Object.fromEntries(
          Object.entries(daemonCpu(gateway)).map(([name, cpu]) => [name, cpu - before[name]!]),
        );
      }
    }
    // Every published object, byte for byte, against the folder build's files.
    const ledgers = path.join(folderProject, 'ledgers');
    const store = await openArchiveStore(`s3://${gateway.bucket}/${prefix}`, gateway.env);
    const listed = await store.list('');
    const files = fs.readdirSync(ledgers, { recursive: true, withFileTypes: true }).filter(
      (e) =>
        e.isFile() &&
        !path
          .relative(ledgers, path.join(e.parentPath, e.name))
          .split('/')
          .some((name) => name.startsWith('.')),
    );
    let same = listed.length === files.length;
    let bytes = 0;
    // Read back 16 at a time (one at a time took minutes for a day's 7,843 objects).
    let next = 0;
    const reader = async (): Promise<void> => {
      while (next < listed.length) {
        const rel = listed[next++]!;
        const object = (await store.read(rel))!;
        bytes += object.length;
        const file = path.join(ledgers, rel);
        if (!fs.existsSync(file) || sha(object) !== sha(fs.readFileSync(file))) same = false;
      }
    };
    await Promise.all(Array.from({ length: 16 }, reader));
    rows.push({ round, folder, s3, cluster, objects: listed.length, bytes, same });
    for (const dir of [folderProject, s3Project]) fs.rmSync(dir, { recursive: true, force: true });
  }
} finally {
  await gateway.stop();
  fs.rmSync(keys, { recursive: true, force: true });
}

const n = (x: number) => x.toLocaleString('en-US');
const lines = [
  '## The archive on object storage (bench/archive-s3.bench.ts)',
  '',
  `One day of ${n(perDay)} hashes, \`timeseal ledger build\` into a folder and, with the same hashes and keys, into \`s3://\` on a private Ceph RADOS Gateway on loopback (scripts/ceph-rgw.sh: one monitor, one BlueStore OSD on a sparse file, one gateway with 4 threads, on the same ${os.cpus().length} cores as the build). The S3 build writes its working copy as the folder build writes the folder, then publishes every object (create-only PUTs, 16 at a time; the mutable ones compare-and-swapped). The two alternate which runs first.`,
  '',
  '| round | folder | s3:// (build + publish) | ratio (goal ≤ 3) | the cluster’s CPU meanwhile | objects | bytes | every object = the folder’s file |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.round} | ${r.folder.toFixed(2)} s | ${r.s3.toFixed(2)} s | ${(r.s3 / r.folder).toFixed(2)} | ${Object.entries(
        r.cluster,
      )
        .map(([name, cpu]) => `${name} ${cpu.toFixed(1)} s`)
        .join(', ')} | ${n(r.objects)} | ${mb(r.bytes)} | ${r.same ? 'yes' : '**no**'} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
if (rows.some((r) => !r.same)) process.exitCode = 1;
