// What every command needs, created once and only when used: configuration, clock, the store (and the SQLite
// handle, for what is SQLite's own: `timeseal db check`, the start-up check, the build's queue reading), keys.
import { clockFromEnv, devClockPath, type Clock } from '../runtime/clock.ts';
import { loadConfig, type Config } from '../runtime/config.ts';
import { openDatabase, type DB } from '../store/sqlite/db.ts';
import { openStore } from '../store/index.ts';
import type { Store } from '../store/store.ts';
import { loadPublicKeys, loadSigningKeys, type PublicKeys, type SigningKeys } from '../runtime/keys.ts';

export interface Context {
  config: Config;
  clock: Clock;
  db(): DB;
  /** The configured store (store/index.ts openStore): on SQLite it shares `db()`'s connection. Whoever uses it
   * for writes one by one closes it (`timeseal serve`: the app does). */
  store(): Promise<Store>;
  signingKeys(): SigningKeys;
  publicKeys(): PublicKeys;
  /** Progress for a person: stderr, and only on a terminal. */
  progress(message: string): void;
  /** Closes the store (a PostgreSQL pool would otherwise keep the process alive) and the SQLite handle. */
  close(): Promise<void>;
}

export function createContext(env: NodeJS.ProcessEnv = process.env): Context {
  const config = loadConfig(env);
  // The development clock (`timeseal clock`) beside the database, honoured on a local origin only.
  const clock = clockFromEnv(env, { devClock: devClockPath(config), origin: config.origin });
  let db: DB | undefined;
  let store: Promise<Store> | undefined;
  return {
    config,
    clock,
    db: () => (db ??= openDatabase(config.db)),
    store: () =>
      (store ??= config.databaseUrl
        ? openStore({ db: config.db, databaseUrl: config.databaseUrl, poolSize: config.databasePool })
        : openStore({ db: config.db, sqlite: (db ??= openDatabase(config.db)) })),
    signingKeys: () => loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys }),
    publicKeys: () => loadPublicKeys(config.keys),
    progress: (message) => {
      if (process.stderr.isTTY) process.stderr.write(`${message}\n`);
    },
    close: async () => {
      try {
        if (store !== undefined) await (await store.catch(() => undefined))?.close();
      } finally {
        db?.close();
      }
    },
  };
}
