// `timeseal import` when the store stops half-way through its copy (SQLite's slices, store/store.ts
// PartlyStoredError): the error says how many of the lines were enqueued, for which day, and that importing them
// again enqueues them again, with what stopped it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TimesealCommand } from '../../cli/command.ts';
import type { Context } from '../../cli/context.ts';
import { DayClosedError, PartlyStoredError, type Submission } from '../../store/store.ts';
import { registerImport } from '../../cli/commands/import.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-import-partial-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('a copy stopped after 2 of 3 lines: exits with the count, the day, the cause and the remedy', async () => {
  const file = path.join(dir, 'hashes.txt');
  fs.writeFileSync(file, ['aa', 'bb', 'cc'].map((b) => `${b.repeat(32)}\n`).join(''));
  const read: string[] = [];
  const ctx = {
    clock: () => new Date('2025-11-02T23:59:59.000Z'),
    config: { archive: path.join(dir, 'ledgers'), logOrigin: 'example.org/log' },
    store: async () => ({
      submissions: {
        async enqueueStream(batches: AsyncIterable<readonly Submission[]>): Promise<number> {
          for await (const batch of batches) read.push(...batch.map((r) => r.hash));
          throw new PartlyStoredError(2, read.length, new DayClosedError('2025-11-02'));
        },
      },
    }),
  } as unknown as Context;
  const program = new TimesealCommand('timeseal').exitOverride();
  registerImport(program, () => ctx);
  const failed = await program.run(['import', file]).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(read).toHaveLength(3);
  expect((failed as Error).message).toBe(
    "the import stopped after 2 of 3 hashes were enqueued for the ledger of 2025-11-02 (the first 2 hash lines): the day 2025-11-02 is closed: its ledger is built from the rows stored before. Importing the same lines again enqueues them all again; a hash enqueued twice on a day is in that day's ledger once, at its earliest time.",
  );
});
