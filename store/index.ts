// Choosing the storage engine (store/README.md): TIMESEAL_DATABASE_URL (postgres://…) selects PostgreSQL, otherwise
// SQLite on the file TIMESEAL_DB (the embedded default: `make start` needs nothing else). The PostgreSQL engine
// (and `pg`) is loaded only when it is chosen: every CLI run on SQLite starts without it.
import { UsageError } from '../runtime/config.ts';
import type { DB } from './sqlite/db.ts';
import { openSqliteStore } from './sqlite/engine.ts';
import type { Store } from './store.ts';

export * from './store.ts';

export interface StoreOptions {
  /** The SQLite file (Config.db). */
  db: string;
  /** Config.databaseUrl: postgres://… or postgresql://… selects the PostgreSQL engine. */
  databaseUrl?: string;
  /** PostgreSQL only: connections in the pool (Config.databasePool, TIMESEAL_DATABASE_POOL; default 10). */
  poolSize?: number;
  /** SQLite only: an already open connection to `db` to use as the main one (the caller closes it). */
  sqlite?: DB;
}

/** Opens the configured store (migrations applied). */
export async function openStore(options: StoreOptions): Promise<Store> {
  const url = options.databaseUrl;
  if (url !== undefined && url !== '') {
    if (!/^postgres(?:ql)?:\/\//.test(url))
      throw new UsageError('TIMESEAL_DATABASE_URL must be a postgres:// or postgresql:// URL');
    const { openPostgresStore } = await import('./postgres/engine.ts');
    return openPostgresStore(url, options.poolSize !== undefined ? { poolSize: options.poolSize } : {});
  }
  return openSqliteStore(options.db, options.sqlite ? { db: options.sqlite } : {});
}
