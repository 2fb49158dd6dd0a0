// A command's peak memory, as the kernel counted it: the command runs under GNU time (`/usr/bin/time -f %M`, the
// maximum resident set size of the process in KiB, written to a file of its own so that the command's output is
// left as it is), asynchronously, so that a server the command talks to may run in the test's process.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface MeasuredRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Peak RSS in MB (MiB, rounded). */
  peakMb: number;
}

/** `command args` in `cwd` with exactly `env`, under GNU time: its exit code, output and peak RSS. */
export async function measurePeakRss(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<MeasuredRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-peak-rss-'));
  const report = path.join(dir, 'rss');
  try {
    const child = spawn('/usr/bin/time', ['-o', report, '-f', '%M', command, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    // GNU time writes "Command exited with non-zero status N" before the figure.
    const kb = Number(fs.readFileSync(report, 'utf8').trim().split('\n').at(-1));
    if (!Number.isFinite(kb) || kb <= 0) throw new Error(`GNU time gave no peak RSS for ${command}: ${stderr}`);
    return { code, stdout, stderr, peakMb: Math.round(kb / 1024) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
