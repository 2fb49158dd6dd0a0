// What every command needs, created once and only when used: configuration, clock, database, keys.
import { clockFromEnv, type Clock } from '../runtime/clock.ts';
import { loadConfig, type Config } from '../runtime/config.ts';
import { openDatabase, type DB } from '../store/db.ts';
import { loadPublicKeys, loadSigningKeys, type PublicKeys, type SigningKeys } from '../runtime/keys.ts';

export interface Context {
  config: Config;
  clock: Clock;
  db(): DB;
  signingKeys(): SigningKeys;
  publicKeys(): PublicKeys;
  /** Progress for a person: stderr, and only on a terminal. */
  progress(message: string): void;
  close(): void;
}

export function createContext(env: NodeJS.ProcessEnv = process.env): Context {
  const config = loadConfig(env);
  const clock = clockFromEnv(env);
  let db: DB | undefined;
  return {
    config,
    clock,
    db: () => (db ??= openDatabase(config.db)),
    signingKeys: () => loadSigningKeys({ keys: config.keys, privateKeys: config.privateKeys }),
    publicKeys: () => loadPublicKeys(config.keys),
    progress: (message) => {
      if (process.stderr.isTTY) process.stderr.write(`${message}\n`);
    },
    close: () => db?.close(),
  };
}
