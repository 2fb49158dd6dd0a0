// `timeseal mirror pull <URL> <DIR> [--keys DIR|URL] [--timeout MS] [--full]`: a verified, incremental copy of a
// public Timeseal archive in a folder (pipeline/mirror.ts). A pull checks what came after the mirror's last
// checkpoint; --full checks the whole mirror again as it extends it, and fetches any published file missing from
// it (removed by hand, lost with a disk). The log's keys are pinned: the first pull takes them from
// --keys (required then) and keeps them in <DIR>/keys/; every later pull checks against those, and a --keys that
// names other identity keys is refused. The witness policy and TSA chain follow --keys when it is given again.
import fs from 'node:fs';
import path from 'node:path';
import type { TimesealCommand } from '../command.ts';
import { UsageError } from '../../runtime/config.ts';
import { readerFor } from '../../pipeline/archive-reader.ts';
import {
  checkSameIdentity,
  hasPinnedKeys,
  MIRROR_KEYS_DIR,
  MirrorError,
  pullMirror,
  readKeyFiles,
  type MirrorReport,
} from '../../pipeline/mirror.ts';
import type { Context } from '../context.ts';
import { formatBytes, output } from '../output.ts';
import { loadKeys } from './verify.ts';

interface PullOptions {
  keys?: string;
  timeout: string;
  full?: boolean;
  json?: boolean;
}

/** The days a pull fetched, for the summary line: each of a few, or their count and range (a first pull of 400
 *  days is one short line, not 400 dates). */
export function newDaysText(dates: readonly string[]): string {
  if (dates.length === 0) return ' (no new day)';
  if (dates.length <= 5) return ` (new: ${dates.join(', ')})`;
  const sorted = [...dates].sort();
  return ` (new: ${dates.length} days, ${sorted[0]} to ${sorted.at(-1)})`;
}

export function registerMirror(program: TimesealCommand, _ctx: () => Context): void {
  const mirror = program.command('mirror').description('keep a verified copy of a public Timeseal archive');
  mirror
    .command('pull')
    .description(
      'fetch what is new in the archive at URL (its /ledgers/ address) into the folder DIR, verify it, then commit whole days',
    )
    .argument('<url>', 'the archive, e.g. https://timeseal.example/ledgers/')
    .argument('<dir>', 'the mirror folder (created on the first pull)')
    .option('--keys <dir-or-url>', "the log's public keys: required on the first pull, then pinned in <dir>/keys/")
    .option('--timeout <ms>', 'deadline of each HTTP request, in milliseconds', '30000')
    .option(
      '--full',
      'check the whole mirror again, not only what came after its last checkpoint, and fetch any file it lacks',
    )
    .option('--json', 'machine-readable output')
    .act(async (url: string, dir: string, opts: PullOptions) => {
      const timeoutMs = Number(opts.timeout);
      if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
        throw new UsageError(`--timeout must be a whole number of milliseconds, got ${JSON.stringify(opts.timeout)}`);
      if (!/^https?:\/\//.test(url))
        throw new UsageError(`the archive must be an http(s) URL, got ${JSON.stringify(url)}`);
      if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a folder`);
      const pinnedDir = path.join(dir, MIRROR_KEYS_DIR);
      const pinned = hasPinnedKeys(dir);
      if (!pinned && opts.keys === undefined)
        throw new UsageError(
          `the first pull into ${dir} needs the log's public keys: --keys DIR|URL (from a source you trust, not only the archive's host)`,
        );
      const keys = await loadKeys(pinned ? pinnedDir : opts.keys!, timeoutMs);
      const keyFiles = opts.keys === undefined ? new Map() : await readKeyFiles(readerFor(opts.keys, timeoutMs));
      if (pinned && opts.keys !== undefined)
        checkSameIdentity(await readKeyFiles(readerFor(pinnedDir)), keyFiles, opts.keys);
      const progress = process.stderr.isTTY ? (line: string) => process.stderr.write(`${line}\n`) : undefined;
      const out = output(!!opts.json);
      let report: MirrorReport;
      try {
        report = await pullMirror({
          remote: readerFor(url, timeoutMs),
          dir,
          keys,
          keyFiles,
          full: !!opts.full,
          ...(progress ? { progress } : {}),
        });
      } catch (err) {
        if (!(err instanceof MirrorError) || !opts.json) throw err;
        out.result({ ok: false, remote: url, dir, problem: err.message }, () => []);
        process.stderr.write(`timeseal: ${err.message}\n`);
        return 'failed';
      }
      out.result(report, () => [
        `OK: ${report.dir} mirrors ${report.remote} — ${report.days.after} day${report.days.after === 1 ? '' : 's'}, tree size ${report.treeSize.after}` +
          newDaysText(report.days.fetched) +
          `; ${report.files} file${report.files === 1 ? '' : 's'} written, ${formatBytes(report.bytes)} in ${report.requests} request${report.requests === 1 ? '' : 's'}.`,
        ...report.notes.map((n) => `  note: ${n}`),
      ]);
      return 'ok';
    });
}
