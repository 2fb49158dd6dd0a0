// A real S3 store for tests: a private Ceph cluster (one monitor, one BlueStore OSD on a sparse file, one RADOS
// Gateway) from Debian's packages, started on 127.0.0.1 by scripts/ceph-rgw.sh, with an S3 user. Starting one
// takes ~15-30 s of both cores here, so the files of one test run share a cluster (cephForSuite): the first file
// that needs it starts it, detached, under a lock in the system's temporary folder named after the run's
// process (Vitest's, the parent of every worker); later files find it there; each file gets a bucket of its
// own, empty at start; the cluster ends within a second of the run's process (CEPH_RGW_UNTIL_PID), which also
// removes its folder. startCeph starts a cluster of the caller's own: stop() ends the script by its pid, which
// kills its daemons by theirs and removes the folder; should the caller die first, the kernel sends the script
// SIGTERM (parent-death signal) and its stdin closes, either of which makes it do the same.
import { spawn } from 'node:child_process';
import { CreateBucketCommand, PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll } from 'vitest';
import { TimesealError } from '../../core/errors.ts';
import { alive, withLockAsync } from '../../pipeline/lock.ts';
import { parentDeathSignal } from './servers.ts';

export interface TestCeph {
  /** The gateway's S3 endpoint, http://127.0.0.1:PORT (path-style addressing). */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A bucket made for the tests, empty at start. */
  bucket: string;
  /** The environment that points the S3 engine at this gateway (AWS_ENDPOINT_URL, AWS_REGION, the keys). */
  env: Record<string, string>;
  /** Stops every daemon and removes the cluster's folder; safe to call twice. */
  stop(): Promise<void>;
}

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/ceph-rgw.sh');
/** Starting takes ~15 s here; a slow or busy machine gets many times that before it is called a failure. */
const READY_TIMEOUT_MS = 180_000;

/** Starts the cluster; once more when a daemon lost its port to another process between the script's choice of
 * free ports and its bind. */
export async function startCeph(): Promise<TestCeph> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce();
    } catch (err) {
      if (attempt >= 3 || !/Address already in use/.test((err as Error).message)) throw err;
    }
  }
}

function startOnce(): Promise<TestCeph> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-ceph-'));
  const [command, ...args] = [...parentDeathSignal('TERM'), 'bash', SCRIPT, dir];
  const child = spawn(command!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return new Promise<TestCeph>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`Ceph RGW not ready after ${READY_TIMEOUT_MS / 1000} s:\n${stderr}`));
    }, READY_TIMEOUT_MS);
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = /^ready (.*)$/m.exec(stdout)?.[1];
      if (line === undefined) return;
      clearTimeout(timer);
      resolve({ ...readyLine(line), stop });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
      reject(new Error(`scripts/ceph-rgw.sh exited (${code ?? signal}) before the gateway was ready:\n${stderr}`));
    });
  });
}

/** What scripts/ceph-rgw.sh prints once the gateway answers: `ready endpoint=… access_key=… secret_key=… bucket=…`. */
function readyLine(line: string): Omit<TestCeph, 'stop'> {
  const fields = new Map(line.split(' ').map((kv) => kv.split('=', 2) as [string, string]));
  const field = (name: string): string => {
    const value = fields.get(name);
    if (value === undefined) throw new Error(`scripts/ceph-rgw.sh printed no ${name}: ${line}`);
    return value;
  };
  const endpoint = field('endpoint');
  const accessKeyId = field('access_key');
  const secretAccessKey = field('secret_key');
  const env = {
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: accessKeyId,
    AWS_SECRET_ACCESS_KEY: secretAccessKey,
  };
  return { endpoint, accessKeyId, secretAccessKey, bucket: field('bucket'), env };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The cluster of this test run (see the module comment): found, or started and waited for. */
async function runCluster(): Promise<Omit<TestCeph, 'stop'>> {
  const runPid = process.ppid;
  const dir = path.join(os.tmpdir(), `timeseal-ceph-run-${runPid}`);
  // Beside the folder, not in it: a start removes what an earlier cluster of the same id left in the folder.
  const lock = `${dir}.lock`;
  const started = Date.now();
  for (;;) {
    try {
      return await withLockAsync(lock, () => findOrStart(dir, runPid), 'test file starting the Ceph cluster');
    } catch (err) {
      // Another file of the run holds the lock while it starts the cluster: wait for it, then find it.
      if (!(err instanceof TimesealError && err.code === 'busy') || Date.now() - started > READY_TIMEOUT_MS) throw err;
      await sleep(250);
    }
  }
}

async function findOrStart(dir: string, runPid: number): Promise<Omit<TestCeph, 'stop'>> {
  const state = path.join(dir, 'cluster.json');
  if (fs.existsSync(state)) {
    const found = JSON.parse(fs.readFileSync(state, 'utf8')) as { pid: number; line: string };
    if (alive(found.pid)) return readyLine(found.line);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'ready.out');
  const child = spawn('bash', [SCRIPT, dir], {
    detached: true,
    stdio: ['ignore', fs.openSync(out, 'w'), fs.openSync(`${out}.err`, 'w')],
    env: { ...process.env, CEPH_RGW_UNTIL_PID: String(runPid) },
  });
  child.unref();
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const line = /^ready (.*)$/m.exec(fs.readFileSync(out, 'utf8'))?.[1];
    if (line !== undefined) {
      fs.writeFileSync(state, JSON.stringify({ pid: child.pid, line }));
      return readyLine(line);
    }
    if (child.exitCode !== null || child.signalCode !== null || !alive(child.pid!))
      throw new Error(
        `scripts/ceph-rgw.sh exited before the gateway was ready:\n${fs.readFileSync(`${out}.err`, 'utf8')}`,
      );
    if (Date.now() > deadline) {
      process.kill(child.pid!, 'SIGTERM');
      throw new Error(
        `Ceph RGW not ready after ${READY_TIMEOUT_MS / 1000} s:\n${fs.readFileSync(`${out}.err`, 'utf8')}`,
      );
    }
    await sleep(200);
  }
}

let buckets = 0;

/** For a test file: the run's cluster (started by the first file that needs it) and a new, empty bucket of its
 * own. stop() leaves both: the cluster ends with the run. */
export function cephForSuite(): { readonly current: TestCeph } {
  let ceph: TestCeph | undefined;
  beforeAll(async () => {
    const cluster = await runCluster();
    const bucket = `t${process.pid}-${++buckets}`;
    await cephClient({ ...cluster, stop: async () => {} }).send(new CreateBucketCommand({ Bucket: bucket }));
    ceph = { ...cluster, bucket, stop: async () => {} };
  }, READY_TIMEOUT_MS + 10_000);
  return {
    get current(): TestCeph {
      if (ceph === undefined)
        throw new Error('cephForSuite: the cluster is started in beforeAll; read it inside a test');
      return ceph;
    },
  };
}

/** An SDK client with the cluster's keys (path-style, as the archive store's). */
export function cephClient(ceph: TestCeph): S3Client {
  return new S3Client({
    endpoint: ceph.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ceph.accessKeyId, secretAccessKey: ceph.secretAccessKey },
  });
}

/** Makes the test bucket readable by anyone, as behind a CDN (ListBucket too: without it a missing object is
 * answered 403, not 404); returns the public URL of the archive under `prefix`. */
export async function publicArchiveUrl(ceph: TestCeph, prefix: string): Promise<string> {
  const policy = {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: '*',
        Action: ['s3:GetObject', 's3:ListBucket'],
        Resource: [`arn:aws:s3:::${ceph.bucket}`, `arn:aws:s3:::${ceph.bucket}/*`],
      },
    ],
  };
  await cephClient(ceph).send(new PutBucketPolicyCommand({ Bucket: ceph.bucket, Policy: JSON.stringify(policy) }));
  return `${ceph.endpoint}/${ceph.bucket}/${prefix}/`;
}
