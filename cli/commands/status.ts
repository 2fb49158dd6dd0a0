// `timeseal status`: queue size, last published day, tree size, and whether the clock is behind the archive;
// `--disk` adds the archive's files and bytes. That needs a walk of every file (millions at 100 M hashes,
// minutes), so an operator's routine check does not pay for it (nothing routine grows with the
// archive: docs/ARCHITECTURE.md, "How the parts grow").
import fs from 'node:fs';
import path from 'node:path';
import type { TimesealCommand } from '../command.ts';
import { utcDate } from '../../core/ledger.ts';
import { readState } from '../../pipeline/archive-state.ts';
import { clockBehindArchive, clockBehindText } from '../../runtime/clock-guard.ts';
import type { Context } from '../context.ts';
import { formatBytes, output } from '../output.ts';

function folderSize(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string): void => {
    for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        files++;
        bytes += fs.statSync(p).size;
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

export function registerStatus(program: TimesealCommand, ctx: () => Context): void {
  program
    .command('status')
    .description("queue size, last published day, tree size (--disk: the archive's files and bytes)")
    .option('--json', 'machine-readable output')
    .option('--disk', "also count the archive's files and bytes (walks every file: slow on a large archive)")
    .act(async (opts: { json?: boolean; disk?: boolean }) => {
      const c = ctx();
      const { days } = readState(c.config.archive, c.config.logOrigin);
      const last = days.at(-1) ?? null;
      const queued = await (await c.store()).submissions.queueSize(last?.date ?? '');
      const size = opts.disk ? folderSize(c.config.archive) : undefined;
      const now = c.clock();
      // The server refuses submissions (503) while this holds (runtime/clock-guard.ts).
      const behind = clockBehindArchive(utcDate(now), last?.date ?? '');
      const data = {
        queue_size: queued,
        last_published_day: last?.date ?? null,
        published_days: days.length,
        tree_size: last?.treeSize ?? 0,
        archive: { path: c.config.archive, ...(size ? { files: size.files, bytes: size.bytes } : {}) },
        now: now.toISOString(),
        clock_behind_archive: behind,
      };
      output(!!opts.json).result(data, () => [
        `Queue: ${queued} submission${queued === 1 ? '' : 's'} waiting for the next ledger`,
        `Last published day: ${last?.date ?? 'none yet'} (${days.length} day${days.length === 1 ? '' : 's'}, tree size ${data.tree_size})`,
        size
          ? `Archive: ${c.config.archive}, ${size.files} files, ${formatBytes(size.bytes)}`
          : `Archive: ${c.config.archive} (timeseal status --disk counts its files)`,
        ...(behind
          ? [
              `Clock behind the archive: the ${clockBehindText(utcDate(now), last!.date)}; submissions are refused and nothing can be published until the clock is corrected.`,
            ]
          : []),
      ]);
      return 'ok';
    });
}
