// `timeseal import -` streams: an input longer than a JavaScript string can hold (0x1fffffe8 characters; reading
// it whole failed with "Cannot create a string longer than 0x1fffffe8 characters") goes through a real pipe from a
// generator process, is enqueued in full, and the real process's peak RSS (/proc/<pid>/status VmHWM) stays under
// the bound whatever the line count; a bad line at the very end, after a hundred thousand good ones have reached
// the store, enqueues nothing and the bad lines are listed (the first 20, then how many more).
// Made cheaply: a million hashes (a counter under a fixed prefix), each followed by a line of 500 blanks, which
// import skips: 630 MB in two million lines, about 10 s of CPU for the two processes together on the dev machine.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { BIN, removeTempProjects, runJson, tempProject } from './helpers.ts';

afterAll(removeTempProjects);

/** The longest string V8 makes (what the old import tried to read the input into). */
const MAX_STRING = 0x1fffffe8;
const PEAK_RSS_LIMIT_KB = 200 * 1024;

/** `node -e GENERATOR COUNT PAD BAD`: COUNT distinct hashes, each followed by a line of PAD blanks when PAD > 0,
 * then BAD lines that are not hashes; the bytes written go to stderr's last line. */
const GENERATOR = `
const [count, pad, bad] = process.argv.slice(1).map(Number);
const prefix = 'c0'.repeat(28);
const per = 65 + (pad > 0 ? pad + 1 : 0);
const LINES = 1024;
const buf = Buffer.alloc(LINES * per, ' ');
for (let k = 0; k < LINES; k++) {
  buf.write(prefix, k * per, 'latin1');
  buf[k * per + 64] = 10;
  if (pad > 0) buf[k * per + per - 1] = 10;
}
const hex = Buffer.from('0123456789abcdef');
let i = 0;
let bytes = 0;
function more() {
  while (i < count) {
    const m = Math.min(LINES, count - i);
    for (let k = 0; k < m; k++, i++) {
      let v = i;
      for (let d = 63; d >= 56; d--) { buf[k * per + d] = hex[v & 15]; v >>>= 4; }
    }
    bytes += m * per;
    if (!process.stdout.write(Buffer.from(buf.subarray(0, m * per)))) return void process.stdout.once('drain', more);
  }
  let tail = '';
  for (let b = 0; b < bad; b++) tail += 'not-a-hash-' + b + '\\n';
  bytes += tail.length;
  process.stdout.end(tail, () => process.stderr.write(String(bytes)));
}
more();
`;

interface Imported {
  code: number | null;
  stdout: string;
  stderr: string;
  generated: number;
  peakKb: number;
}

/** The generator piped into the real `timeseal import - --json`; VmHWM of the import's process polled while it
 * runs (cli/bin/timeseal execs Node, so the pid is Node's). */
async function importGenerated(dir: string, count: number, pad: number, bad: number): Promise<Imported> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TIMESEAL_') && k !== 'NODE_OPTIONS') env[k] = v;
  env.PATH = `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  env.TIMESEAL_NOW = '2025-11-02T10:00:00Z';
  const gen = spawn(process.execPath, ['-e', GENERATOR, String(count), String(pad), String(bad)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const cli = spawn(BIN, ['import', '-', '--json'], { cwd: dir, env, stdio: [gen.stdout, 'pipe', 'pipe'] });
  let generatedText = '';
  gen.stderr.setEncoding('utf8').on('data', (s: string) => (generatedText += s));
  let stdout = '';
  let stderr = '';
  cli.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  cli.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  let peakKb = 0;
  const poll = (): void => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${cli.pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // gone
    }
  };
  const timer = setInterval(poll, 20);
  const [code] = await Promise.all([
    new Promise<number | null>((resolve) => cli.on('exit', (c) => resolve(c))),
    // Its stderr's end, not 'close': the generator's stdout is the import's stdin, never read here.
    new Promise<void>((resolve) => gen.stderr.on('end', () => resolve())),
  ]);
  clearInterval(timer);
  return { code, stdout, stderr, generated: Number(generatedText), peakKb };
}

test(
  'a million hashes in 630 MB through a pipe: all enqueued, the import under 200 MB of RSS',
  { timeout: 600_000 },
  async () => {
    const dir = tempProject('import-big');
    const r = await importGenerated(dir, 1_000_000, 500, 0);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.generated).toBeGreaterThan(MAX_STRING);
    expect(JSON.parse(r.stdout)).toMatchObject({ enqueued: 1_000_000, ledger_date: '2025-11-02' });
    expect(r.peakKb).toBeGreaterThan(0);
    expect(r.peakKb).toBeLessThan(PEAK_RSS_LIMIT_KB);
    expect(runJson(dir, ['status']).json.queue_size).toBe(1_000_000);
  },
);

test(
  'bad lines at the very end, after 100,000 good ones reached the store: nothing enqueued, the first 20 listed and the rest counted',
  { timeout: 300_000 },
  async () => {
    const dir = tempProject('import-bad-end');
    const r = await importGenerated(dir, 100_000, 0, 25);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('25 invalid lines; nothing was enqueued');
    const listed = r.stderr.match(/line \d+: "not-a-hash-\d+" is not a SHA-256 hash/g) ?? [];
    expect(listed).toHaveLength(20);
    expect(listed[0]).toBe('line 100001: "not-a-hash-0" is not a SHA-256 hash');
    expect(r.stderr).toContain('… and 5 more invalid lines');
    expect(runJson(dir, ['status']).json.queue_size).toBe(0);
  },
);
