// The launcher of `timeseal` commands that `timeseal serve`'s schedule runs as child processes (pipeline/schedule.ts
// CommandLauncher: the daily build): this executable's own entry point, on this Node.
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { CommandLauncher } from '../pipeline/schedule.ts';

/** Runs `timeseal ARGS` in a child process with this one's environment (and `env` added) and folder; resolves to
 * its --json output, rejects with the last line it wrote on stderr. */
export const launchTimeseal: CommandLauncher = (args, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', path.join(import.meta.dirname, 'cli.ts'), ...args],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) {
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error(`timeseal ${args.join(' ')}: output is not JSON`));
        }
      } else {
        reject(new Error(stderr.trim().split('\n').at(-1) || `timeseal ${args.join(' ')} exited with ${code}`));
      }
    });
  });
