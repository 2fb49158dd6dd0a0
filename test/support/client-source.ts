// timeseal-client from its source (client/src/cli/bin.ts) under the test's Node, in a folder of the test's, with
// that folder as HOME and `trust.json` in it as the trust store: what a person runs, without packing it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const CLIENT = path.resolve(import.meta.dirname, '../../client/src/cli/bin.ts');

export function clientFromSource(cwd: string, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLIENT, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, TIMESEAL_TRUST: path.join(cwd, 'trust.json') },
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
