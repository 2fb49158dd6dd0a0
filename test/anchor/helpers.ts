// Helpers for the anchoring tests: temp projects, the `timeseal` CLI run asynchronously (the loopback servers
// live in the test process, so a blocking run would starve them), and the reference
// implementation (Debian's python3-opentimestamps) reading .ots files.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { timesealAsync } from '../support/cli-host.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
/** The folder of the Node running the tests (the Makefile's: .tools/ when the machine's own is older than 24.8). */
const NODE_BIN = path.dirname(process.execPath);
export const OTS_VECTORS = path.join(ROOT, 'test/vectors/ots');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const made: string[] = [];
export function tempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `timeseal-anchor-${label}-`));
  made.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** Environment for the CLI: ours minus TIMESEAL_*, OTS_* and BITCOIN_* settings, plus `extra`. */
export function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(TIMESEAL_|OTS_|BITCOIN_)/.test(k) && k !== 'NODE_OPTIONS') env[k] = v;
  env.PATH = `${NODE_BIN}:${process.env.PATH ?? ''}`;
  return { ...env, ...extra };
}

/** Runs `timeseal args` without blocking this thread (the stand-ins of this process answer it): in the CLI host
 *  when it may (test/support/cli-host.ts), else the executable. */
export async function cli(cwd: string, args: string[], env: Record<string, string>, input = ''): Promise<CliResult> {
  const r = await timesealAsync(args, { cwd, env: cliEnv(env), input });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export async function cliJson<T = any>(
  cwd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ r: CliResult; json: T }> {
  const r = await cli(cwd, [...args, '--json'], env);
  try {
    return { r, json: JSON.parse(r.stdout) as T };
  } catch {
    throw new Error(
      `timeseal ${args.join(' ')} --json (exit ${r.code}): stdout is not JSON:\n${r.stdout}\n${r.stderr}`,
    );
  }
}

export interface ReferenceReading {
  file_hash_op: string;
  digest: string;
  /** [kind, uri or height, message hex], sorted. */
  attestations: Array<[string, string | number, string]>;
}

const PYTHON_READER = `
import json, sys
from opentimestamps.core.serialize import StreamDeserializationContext
from opentimestamps.core.timestamp import DetachedTimestampFile
from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
out = []
for name in sys.argv[1:]:
    with open(name, 'rb') as fd:
        d = DetachedTimestampFile.deserialize(StreamDeserializationContext(fd))
    atts = []
    for msg, att in d.timestamp.all_attestations():
        if isinstance(att, BitcoinBlockHeaderAttestation):
            atts.append(['bitcoin', att.height, msg.hex()])
        elif isinstance(att, PendingAttestation):
            atts.append(['pending', att.uri, msg.hex()])
        else:
            atts.append(['unknown', '', msg.hex()])
    atts.sort(key=lambda a: (a[0], str(a[1]), a[2]))
    out.append({'file_hash_op': d.file_hash_op.TAG_NAME, 'digest': d.file_digest.hex(), 'attestations': atts})
print(json.dumps(out))
`;

/** Reads .ots files with python-opentimestamps (DetachedTimestampFile.deserialize, all_attestations()). */
export function referenceRead(files: string[]): ReferenceReading[] {
  const r = spawnSync('/usr/bin/python3', ['-c', PYTHON_READER, ...files], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python3-opentimestamps failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as ReferenceReading[];
}
