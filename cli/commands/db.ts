// `timeseal db check`: SQLite's quick check of the whole database file (every page and record well-formed).
// `timeseal serve` runs it at start on files up to START_CHECK_MAX_BYTES; larger ones are checked by this
// command, which reads the whole file (about 30 MB/s from a cold cache here: docs/OPERATIONS.md).
import type { Command } from 'commander';
import type { Context } from '../context.ts';
import { checkDatabase } from '../../store/db.ts';
import { output } from '../output.ts';

export function registerDb(program: Command, ctx: () => Context): void {
  const db = program.command('db').description('the database');
  db.command('check')
    .description('check every page and record of the database file (PRAGMA quick_check); exit 2 if damaged')
    .option('--json', 'machine-readable output')
    .action((opts: { json?: boolean }) => {
      const c = ctx();
      const started = performance.now();
      checkDatabase(c.db(), c.config.db);
      const seconds = Math.round(performance.now() - started) / 1000;
      output(!!opts.json).result({ ok: true, file: c.config.db, seconds }, () => [`The database ${c.config.db} passed SQLite's quick check (${seconds} s).`]);
    });
}
