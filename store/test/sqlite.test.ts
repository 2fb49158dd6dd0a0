// The Store contract (contract.ts) on the SQLite engine, on disk: each test gets a new database file, and the
// stores of one test (two when it tests concurrency) are separate connections to that file, as two processes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { openStore } from '../index.ts';
import { storeContract } from './contract.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-store-'));
let n = 0;
let file = '';
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

storeContract(
  'SQLite',
  async () => {
    const store = await openStore({ db: file });
    return { store, close: () => store.close() };
  },
  { newDatabase: () => void (file = path.join(dir, `db-${++n}`, 'timeseal.db')) },
);
