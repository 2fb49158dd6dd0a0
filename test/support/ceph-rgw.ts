// A real S3 store for tests: a private Ceph cluster (one monitor, one BlueStore OSD on a sparse file, one RADOS
// Gateway) from Debian's packages, started on 127.0.0.1 by scripts/ceph-rgw.sh as this process's children, with
// an S3 user and an empty bucket. About 15 s to start on the 2-core test machines, so a test file starts it once
// (cephForSuite). stop() ends the script by its pid, which kills its daemons by theirs and removes the folder;
// should this process die first, the kernel sends the script SIGTERM (parent-death signal) and its stdin closes,
// either of which makes it do the same.
import { spawn } from 'node:child_process';
import { PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
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
      resolve({ endpoint, accessKeyId, secretAccessKey, bucket: field('bucket'), env, stop });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
      reject(new Error(`scripts/ceph-rgw.sh exited (${code ?? signal}) before the gateway was ready:\n${stderr}`));
    });
  });
}

/** For a test file: one cluster for all its tests, started before them and stopped after them. */
export function cephForSuite(): { readonly current: TestCeph } {
  let ceph: TestCeph | undefined;
  beforeAll(async () => {
    ceph = await startCeph();
  }, READY_TIMEOUT_MS + 10_000);
  afterAll(async () => {
    await ceph?.stop();
  });
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
