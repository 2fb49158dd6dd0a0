// Helpers for the black-box tests of the `timeseal` CLI: temp project folders, running a command with its own
// environment, folder and stdin (in the CLI host, test/support/cli-host.ts, or as the executable cli/bin/timeseal
// where a process is the point), hash files, whole-tree digests, and an
// RFC 6962 Merkle implementation written here on node:crypto only, independent of core/, so the tests check
// the archive against the standard rather than against the code that wrote it.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { timesealAsync, timesealSync } from '../support/cli-host.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(ROOT, 'cli/bin/timeseal');
/** The folder of the Node running the tests (the Makefile's: .tools/ when the machine's own is older than 24.8). */
export const NODE_BIN = path.dirname(process.execPath);

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
}

const projects: string[] = [];

/** A fresh, empty project folder (the CLI's working directory). Removed by removeTempProjects(). */
export function tempProject(label = 'project'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `timeseal-cli-${label}-`));
  projects.push(dir);
  return dir;
}

export function removeTempProjects(): void {
  for (const dir of projects.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** The environment of a CLI run: ours without any TIMESEAL_* setting, plus the test's own. */
function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TIMESEAL_') && k !== 'NODE_OPTIONS') env[k] = v;
  env.PATH = `${NODE_BIN}:${process.env.PATH ?? ''}`;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Runs `timeseal <args>` in `cwd` and waits for it: in this process's CLI host when it may (test/support/cli-host.ts),
 *  else the executable. */
export function run(cwd: string, args: string[], options: RunOptions = {}): RunResult {
  const r = timesealSync(args, { cwd, env: cliEnv(options.env), input: options.input ?? '' });
  if (r.error) throw r.error;
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Runs with --json and parses stdout, which must be exactly one JSON document. */
export function runJson<T = any>(
  cwd: string,
  args: string[],
  options: RunOptions = {},
): { result: RunResult; json: T } {
  const result = run(cwd, [...args, '--json'], options);
  let json: T;
  try {
    json = JSON.parse(result.stdout) as T;
  } catch (err) {
    throw new Error(
      `timeseal ${args.join(' ')} --json: stdout is not one JSON document (exit ${result.code}):\n${result.stdout}\n${result.stderr}`,
      { cause: err },
    );
  }
  return { result, json };
}

/** Runs `timeseal <args>` in `cwd` without blocking this thread (servers of this process answer the command): in the
 *  CLI host when it may (test/support/cli-host.ts), else the executable. */
export async function runAsync(cwd: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const input = options.input === undefined ? undefined : options.input.toString();
  const r = await timesealAsync(args, { cwd, env: cliEnv(options.env), ...(input === undefined ? {} : { input }) });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `timeseal <args>` as a process without waiting; `exited` resolves when the process is gone. */
export function start(
  cwd: string,
  args: string[],
  options: RunOptions = {},
): { child: ChildProcess; exited: Promise<RunResult> } {
  const child = spawn(BIN, args, { cwd, env: cliEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, exited };
}

export function sha256Hex(data: string | Uint8Array): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** `count` distinct hashes: SHA-256 of "<label>-<i>". */
export function makeHashes(label: string, count: number, from = 0): string[] {
  const out: string[] = [];
  for (let i = from; i < from + count; i++) out.push(sha256Hex(`${label}-${i}`));
  return out;
}

/** Writes lines (hashes or any text) to `dir/name`, one a line; returns the file's path. */
export function writeHashFile(dir: string, name: string, lines: string[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, lines.length === 0 ? '' : `${lines.join('\n')}\n`);
  return file;
}

/** relative path -> SHA-256 of every file under `dir` (sorted by path). */
export function treeDigest(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), sha256Hex(fs.readFileSync(p)));
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The differences between two tree digests, for readable assertion messages ([] when equal). */
export function treeDiff(expected: Map<string, string>, actual: Map<string, string>): string[] {
  const diffs: string[] = [];
  for (const [p, h] of expected) {
    if (!actual.has(p)) diffs.push(`missing: ${p}`);
    else if (actual.get(p) !== h) diffs.push(`differs: ${p}`);
  }
  for (const p of actual.keys()) if (!expected.has(p)) diffs.push(`extra: ${p}`);
  return diffs;
}

/** XORs one byte of a file (the middle byte unless `at` is given). */
export function flipByte(file: string, at?: number): void {
  const b = fs.readFileSync(file);
  const i = at ?? b.length >> 1;
  b[i] = b[i]! ^ 0x01;
  fs.writeFileSync(file, b);
}

// ---- RFC 6962 §2.1 Merkle tree hash, audit paths (§2.1.1) and RFC 9162 §2.1.3.2 inclusion verification ----

const h = (...parts: Uint8Array[]): Buffer => {
  const c = crypto.createHash('sha256');
  for (const p of parts) c.update(p);
  return c.digest();
};

/** RFC 6962: leaf hash = SHA-256(0x00 || entry). */
export const rfcLeafHash = (entry: Uint8Array): Buffer => h(Buffer.of(0), entry);
/** RFC 6962: node hash = SHA-256(0x01 || left || right). */
export const rfcNodeHash = (left: Uint8Array, right: Uint8Array): Buffer => h(Buffer.of(1), left, right);

/** Largest power of two strictly less than n (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[n]) over leaf hashes (already hashed with 0x00). */
export function rfcRoot(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return h();
  if (leaves.length === 1) return leaves[0]!;
  const k = split(leaves.length);
  return rfcNodeHash(rfcRoot(leaves.slice(0, k)), rfcRoot(leaves.slice(k)));
}

/** PATH(m, D[n]) of RFC 6962 §2.1.1, leaf hashes given. */
export function rfcPath(m: number, leaves: Buffer[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k
    ? [...rfcPath(m, leaves.slice(0, k)), rfcRoot(leaves.slice(k))]
    : [...rfcPath(m - k, leaves.slice(k)), rfcRoot(leaves.slice(0, k))];
}

/** RFC 9162 §2.1.3.2: does `path` lead from `leaf` at `index` in a tree of `size` to `root`? */
export function rfcVerifyInclusion(index: number, size: number, leaf: Buffer, path: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = rfcNodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = rfcNodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

// ---- C2SP tlog-checkpoint / signed-note parsing (text only; signature checks are in the tests) ----

export interface ParsedCheckpoint {
  /** The signed text: the body lines, each ending in a newline. */
  text: string;
  origin: string;
  size: number;
  root: Buffer;
  signatures: Array<{ name: string; keyId: Buffer; signature: Buffer }>;
}

export function parseCheckpoint(note: string): ParsedCheckpoint {
  const sep = note.indexOf('\n\n');
  if (sep < 0) throw new Error('checkpoint: no blank line between text and signatures');
  const text = note.slice(0, sep + 1);
  const body = text.split('\n').slice(0, -1);
  if (body.length < 3) throw new Error(`checkpoint: ${body.length} body lines, expected at least 3`);
  const [origin, sizeLine, rootLine] = body as [string, string, string];
  if (!/^(0|[1-9][0-9]*)$/.test(sizeLine)) throw new Error(`checkpoint: bad size line ${JSON.stringify(sizeLine)}`);
  const root = Buffer.from(rootLine, 'base64');
  if (root.length !== 32 || root.toString('base64') !== rootLine)
    throw new Error(`checkpoint: bad root line ${JSON.stringify(rootLine)}`);
  const sigLines = note.slice(sep + 2).split('\n');
  if (sigLines.at(-1) !== '') throw new Error('checkpoint: does not end with a newline');
  const signatures = sigLines.slice(0, -1).map((line) => {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) throw new Error(`checkpoint: bad signature line ${JSON.stringify(line.slice(0, 60))}`);
    const raw = Buffer.from(m[2]!, 'base64');
    return { name: m[1]!, keyId: raw.subarray(0, 4), signature: raw.subarray(4) };
  });
  return { text, origin, size: Number(sizeLine), root, signatures };
}

/** The bytes of a PEM's base64 body. */
export function pemDer(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A project holding a copy of a fixture: its archive, public keys and (test) signing keys. */
export function fixtureProject(FIXTURE: string): string {
  const dir = tempProject('upgrade');
  fs.cpSync(path.join(FIXTURE, 'ledgers'), path.join(dir, 'ledgers'), { recursive: true });
  fs.cpSync(path.join(FIXTURE, 'keys'), path.join(dir, 'keys'), { recursive: true });
  const privateKeys = path.join(dir, 'data/private-keys');
  fs.mkdirSync(privateKeys, { recursive: true });
  fs.copyFileSync(path.join(FIXTURE, 'signing/ecdsa.pkcs8.pem'), path.join(privateKeys, 'ecdsa_private.pem'));
  fs.copyFileSync(path.join(FIXTURE, 'signing/mldsa.pkcs8.pem'), path.join(privateKeys, 'dilithium_private.pem'));
  for (const f of fs.readdirSync(privateKeys)) fs.chmodSync(path.join(privateKeys, f), 0o600);
  return dir;
}
