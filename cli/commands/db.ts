// `timeseal db check`: SQLite's quick check of the whole database file (every page and record well-formed).
// `timeseal serve` runs it at start on files up to START_CHECK_MAX_BYTES; larger ones are checked by this
// command, which reads the whole file (about 30 MB/s from a cold cache here: docs/OPERATIONS.md).
import type { TimesealCommand } from '../command.ts';
import type { Context } from '../context.ts';
import { checkDatabase, MIGRATIONS as SQLITE_MIGRATIONS } from '../../store/sqlite/db.ts';
import { copySqliteToPostgres } from '../../store/postgres/copy.ts';
import { migratePostgres } from '../../store/postgres/migrations.ts';
import { UsageError } from '../../runtime/config.ts';
import { output } from '../output.ts';

export function registerDb(program: TimesealCommand, ctx: () => Context): void {
  const db = program.command('db').description('the database');
  db.command('check')
    .description('check every page and record of the database file (PRAGMA quick_check); exit 1 if damaged')
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const c = ctx();
      const started = performance.now();
      checkDatabase(c.db(), c.config.db);
      const seconds = Math.round(performance.now() - started) / 1000;
      output(!!opts.json).result({ ok: true, file: c.config.db, seconds }, () => [
        `The database ${c.config.db} passed SQLite's quick check (${seconds} s).`,
      ]);
      return 'ok';
    });

  // `timeseal db migrate` and `timeseal db copy`: PostgreSQL's own (store/postgres/).
  db.command('migrate')
    .description(
      'apply the pending schema migrations of the configured database (TIMESEAL_DATABASE_URL, else the SQLite file TIMESEAL_DB)',
    )
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const c = ctx();
      const url = c.config.databaseUrl;
      if (url) {
        const { applied, version } = await migratePostgres(url);
        output(!!opts.json).result({ ok: true, engine: 'postgres', applied, version }, () => [
          applied.length === 0
            ? `The PostgreSQL database is at schema version ${version}: nothing to apply.`
            : `Applied migration${applied.length > 1 ? 's' : ''} ${applied.join(', ')} to the PostgreSQL database: schema version ${version}.`,
        ]);
        return 'ok';
      }
      c.db();
      output(!!opts.json).result(
        { ok: true, engine: 'sqlite', file: c.config.db, version: SQLITE_MIGRATIONS.length },
        () => [`The SQLite database ${c.config.db} is at schema version ${SQLITE_MIGRATIONS.length}.`],
      );
      return 'ok';
    });
  db.command('copy')
    .description(
      'copy every row of the SQLite database (TIMESEAL_DB) into a new, empty PostgreSQL database; stop the service first',
    )
    .requiredOption('--to <url>', 'the PostgreSQL database: postgres://… or postgresql://…')
    .option('--json', 'machine-readable output')
    .act(async (opts: { to: string; json?: boolean }) => {
      if (!/^postgres(?:ql)?:\/\//.test(opts.to))
        throw new UsageError('--to must be a postgres:// or postgresql:// URL');
      const c = ctx();
      const { rows } = await copySqliteToPostgres(c.db(), opts.to, (m) => c.progress(m));
      const total = Object.values(rows).reduce((a, b) => a + b, 0);
      output(!!opts.json).result({ ok: true, from: c.config.db, rows }, () => [
        `Copied ${total} rows from ${c.config.db} into PostgreSQL (${Object.entries(rows)
          .map(([t, n]) => `${t} ${n}`)
          .join(', ')}).`,
        'Set TIMESEAL_DATABASE_URL to that database to use it.',
      ]);
      return 'ok';
    });
}
