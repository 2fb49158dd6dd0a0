// The Store contract (store/store.ts): every guarantee an engine must keep, as vitest blocks. Each engine's test
// calls `storeContract` (store/test/sqlite.test.ts; store/test/postgres.test.ts). Engine-neutral: no SQL here,
// only the Store interface; concurrency is Promise.all on one store, or on two stores opened on the same
// database (`makeStore` called twice must give two stores on ONE database, as two processes would).
import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { collectDay } from '../day-columns.ts';
import {
  DayClosedError,
  dayRowCount,
  dayRows,
  RECEIPTS_PER_DAY,
  UniqueViolationError,
  type Store,
  type Submission,
  type SubscriptionFields,
} from '../store.ts';

export interface OpenedStore {
  store: Store;
  close(): Promise<void>;
}

const hex = (): string => crypto.randomBytes(32).toString('hex');
const CAPS = { freePerDay: 2, standardPerMonth: 500 };
const NOW = new Date('2026-03-10T12:00:00.000Z');

async function drain(store: Store, date: string, batchRows?: number): Promise<Array<readonly [string, string]>> {
  const rows: Array<readonly [string, string]> = [];
  for await (const batch of store.submissions.readDay(date, batchRows === undefined ? {} : { batchRows }))
    rows.push(...dayRows(batch));
  return rows;
}

async function newUser(store: Store, name = `u${crypto.randomBytes(4).toString('hex')}`): Promise<string> {
  const id = crypto.randomUUID();
  await store.users.create({
    id,
    username: name,
    email: `${name}@example.com`,
    passwordHash: 'hash',
    newsletter: false,
    createdAt: NOW,
    verification: { tokenHash: hex(), expires: new Date(NOW.getTime() + 86_400_000) },
  });
  return id;
}

const fields = (over: Partial<SubscriptionFields> = {}): SubscriptionFields => ({
  customerId: 'cus_1',
  subscriptionId: 'sub_1',
  priceId: 'price_m',
  status: 'active',
  periodStart: NOW.toISOString(),
  periodEnd: new Date(NOW.getTime() + 30 * 86_400_000).toISOString(),
  cancelAtPeriodEnd: false,
  ...over,
});

/**
 * Defines the contract's tests. `makeStore` opens a store on a fresh or the current test database: within one
 * test, every call must open the SAME database (the first call of a test may create it).
 */
export function storeContract(
  name: string,
  makeStore: () => Promise<OpenedStore>,
  options: { newDatabase: () => Promise<void> | void },
): void {
  describe(`Store contract: ${name}`, () => {
    const opened: OpenedStore[] = [];
    const open = async (): Promise<Store> => {
      const o = await makeStore();
      opened.push(o);
      return o.store;
    };
    const fresh = async (): Promise<Store> => {
      await options.newDatabase();
      return open();
    };
    afterEach(async () => {
      for (const o of opened.splice(0).reverse()) await o.close();
    });

    describe('submissions', () => {
      it('write resolves once the row is stored; a day streams back every row in arrival order', async () => {
        const store = await fresh();
        const rows = Array.from({ length: 25 }, (_, i) => ({
          hash: hex(),
          submittedAt: new Date(NOW.getTime() + i),
          source: 'api_beta' as const,
        }));
        await Promise.all(rows.map((r) => store.submissions.write(r)));
        const other = await open();
        const read = await drain(other, '2026-03-10', 7);
        expect(new Set(read.map((r) => r[0]))).toEqual(new Set(rows.map((r) => r.hash)));
        expect(read).toHaveLength(25);
      });

      it('enqueue stores all rows or none; dates and queueSize see them', async () => {
        const store = await fresh();
        const day1 = [0, 1, 2].map((i) => ({
          hash: hex(),
          submittedAt: new Date(`2026-03-0${i + 1}T10:00:00.000Z`),
          source: 'import' as const,
        }));
        await store.submissions.enqueue(day1);
        await expect(
          store.submissions.enqueue([
            { hash: hex(), submittedAt: NOW, source: 'import' },
            { hash: 'not hex', submittedAt: NOW, source: 'import' },
          ]),
        ).rejects.toThrow();
        expect(await store.submissions.queueSize('')).toBe(3);
        expect(await store.submissions.queueSize('2026-03-01')).toBe(2);
        expect(await store.submissions.dates('', '2026-03-03')).toEqual(['2026-03-01', '2026-03-02']);
        expect(await store.submissions.dates('2026-03-01', '2026-12-31')).toEqual(['2026-03-02', '2026-03-03']);
        expect(await drain(store, '2026-03-10')).toEqual([]);
      });

      it('enqueueStream stores every batch in order: unseen and not blocking others until its source ends; a source that throws after several batches stores nothing and its error comes back as it is', async () => {
        const store = await fresh();
        const other = await open();
        const batches = Array.from({ length: 5 }, (_, b) =>
          Array.from({ length: 100 }, (_, i) => ({
            hash: hex(),
            submittedAt: new Date(NOW.getTime() + b * 100 + i),
            source: 'import' as const,
          })),
        );
        let reached!: () => void;
        const midway = new Promise<void>((r) => (reached = r));
        let resume!: () => void;
        const gate = new Promise<void>((r) => (resume = r));
        async function* source(fail?: Error): AsyncGenerator<readonly Submission[]> {
          for (const [b, batch] of batches.entries()) {
            if (b === 3) {
              reached();
              await gate;
            }
            yield batch;
          }
          if (fail) throw fail;
        }
        const done = store.submissions.enqueueStream(source());
        await midway;
        // Three batches are in the store's hands: no reader sees them, and another store's write is not held up.
        const lone = hex();
        await other.submissions.write({ hash: lone, submittedAt: NOW, source: 'api_beta' });
        expect(await drain(other, '2026-03-10')).toEqual([[lone, NOW.toISOString()]]);
        resume();
        expect(await done).toBe(500);
        // In their order (where the other write falls among them is the engine's: ids are given at insert time).
        const read = (await drain(other, '2026-03-10', 64)).map((r) => r[0]);
        expect(read.filter((h) => h !== lone)).toEqual(batches.flat().map((r) => r.hash));

        const boom = new Error('line 501: not a hash');
        const failed = await store.submissions
          .enqueueStream(
            (async function* () {
              for (const batch of batches) yield batch.map((r) => ({ ...r, hash: hex() }));
              throw boom;
            })(),
          )
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        expect(failed).toBe(boom);
        expect(await store.submissions.queueSize('')).toBe(501);

        await store.submissions.closeThrough('2026-03-10');
        await expect(
          store.submissions.enqueueStream(
            (async function* () {
              yield [{ hash: hex(), submittedAt: new Date('2026-03-11T00:00:00.000Z'), source: 'import' as const }];
              yield [{ hash: hex(), submittedAt: NOW, source: 'import' as const }];
            })(),
          ),
        ).rejects.toBeInstanceOf(DayClosedError);
        expect(await store.submissions.queueSize('')).toBe(501);
      });

      it('queued: the earliest submission of a hash on each date after the last published one', async () => {
        const store = await fresh();
        const a = hex();
        await store.submissions.enqueue([
          { hash: a, submittedAt: new Date('2026-03-01T10:00:00.000Z'), source: 'import' },
          { hash: a, submittedAt: new Date('2026-03-02T23:00:00.000Z'), source: 'import' },
          { hash: a, submittedAt: new Date('2026-03-02T08:00:00.000Z'), source: 'import' },
          { hash: hex(), submittedAt: new Date('2026-03-03T08:00:00.000Z'), source: 'import' },
        ]);
        await store.submissions.write({
          hash: a,
          submittedAt: new Date('2026-03-04T00:00:00.001Z'),
          source: 'api_beta',
        });
        expect(await store.submissions.queued(a, '')).toEqual([
          { date: '2026-03-01', submittedAt: new Date('2026-03-01T10:00:00.000Z') },
          { date: '2026-03-02', submittedAt: new Date('2026-03-02T08:00:00.000Z') },
          { date: '2026-03-04', submittedAt: new Date('2026-03-04T00:00:00.001Z') },
        ]);
        expect((await store.submissions.queued(a, '2026-03-02')).map((q) => q.date)).toEqual(['2026-03-04']);
        expect(await store.submissions.queued(hex(), '')).toEqual([]);
      });

      it('submittedOn: which of the hashes have a row on the day, by any path, each with its earliest time there; seen from another store', async () => {
        const store = await fresh();
        const [a, b, c, d, e] = [hex(), hex(), hex(), hex(), hex()];
        await store.submissions.enqueue([
          { hash: a, submittedAt: new Date('2026-03-10T10:00:00.000Z'), source: 'import' },
          { hash: a, submittedAt: new Date('2026-03-10T08:00:00.000Z'), source: 'api_beta' },
          { hash: b, submittedAt: new Date('2026-03-09T23:59:59.999Z'), source: 'api_beta' },
          { hash: b, submittedAt: new Date('2026-03-11T00:00:00.000Z'), source: 'api_beta' },
        ]);
        await store.submissions.write({
          hash: c,
          submittedAt: new Date('2026-03-10T00:00:00.000Z'),
          source: 'api_beta',
        });
        expect(
          (
            await store.limits.submit({
              submission: { hash: d, submittedAt: NOW },
              clientKey: '192.0.2.30',
              caps: CAPS,
            })
          ).allowed,
        ).toBe(true);
        const other = await open();
        expect(await other.submissions.submittedOn('2026-03-10', [e, d, c, b, a, a])).toEqual(
          new Map([
            [d, NOW],
            [c, new Date('2026-03-10T00:00:00.000Z')],
            [a, new Date('2026-03-10T08:00:00.000Z')],
          ]),
        );
        expect(await other.submissions.submittedOn('2026-03-09', [a, b])).toEqual(
          new Map([[b, new Date('2026-03-09T23:59:59.999Z')]]),
        );
        expect(await other.submissions.submittedOn('2026-03-10', [])).toEqual(new Map());
        // A thousand hashes in one call (no limit on the list), among them the day's.
        const many = [...Array.from({ length: 998 }, hex), a, d];
        expect([...(await store.submissions.submittedOn('2026-03-10', many)).keys()].sort()).toEqual([a, d].sort());
      });

      it('readDay streams in batches, in order, equal to what was stored, and collects into sorted columns', async () => {
        const store = await fresh();
        const a = hex();
        const rows = [
          { hash: a, submittedAt: new Date('2026-03-10T05:00:00.000Z'), source: 'import' as const },
          ...Array.from({ length: 40 }, (_, i) => ({
            hash: hex(),
            submittedAt: new Date(NOW.getTime() + i * 1000),
            source: 'import' as const,
          })),
          { hash: a, submittedAt: new Date('2026-03-10T01:00:00.000Z'), source: 'import' as const },
        ];
        await store.submissions.enqueue(rows);
        await store.submissions.enqueue([
          { hash: hex(), submittedAt: new Date('2026-03-11T00:00:00.000Z'), source: 'import' },
        ]);
        const batches: number[] = [];
        const read: Array<readonly [string, string]> = [];
        for await (const batch of store.submissions.readDay('2026-03-10', { batchRows: 16 })) {
          expect(batch.total).toBe(42);
          batches.push(dayRowCount(batch));
          read.push(...dayRows(batch));
        }
        expect(batches).toEqual([16, 16, 10]);
        expect(read).toEqual(rows.map((r) => [r.hash, r.submittedAt.toISOString()]));
        const columns = await collectDay(store.submissions.readDay('2026-03-10', { batchRows: 5 }), '2026-03-10');
        expect(columns.count).toBe(41);
        const hashes = Array.from({ length: columns.count }, (_, i) =>
          Buffer.from(columns.hashes.subarray(32 * i, 32 * i + 32)).toString('hex'),
        );
        expect(hashes).toEqual([...hashes].sort());
        expect(columns.ms[hashes.indexOf(a)]).toBe(Date.parse('2026-03-10T01:00:00.000Z'));
      });

      it('readDay is one snapshot: rows committed while the stream is read are not yielded', async () => {
        const store = await fresh();
        await store.submissions.enqueue(
          Array.from({ length: 10 }, (_, i) => ({
            hash: hex(),
            submittedAt: new Date(NOW.getTime() + i),
            source: 'import' as const,
          })),
        );
        const other = await open();
        let seen = 0;
        for await (const batch of store.submissions.readDay('2026-03-10', { batchRows: 3 })) {
          seen += dayRowCount(batch);
          await other.submissions.enqueue([{ hash: hex(), submittedAt: NOW, source: 'import' }]);
        }
        expect(seen).toBe(10);
        expect((await drain(store, '2026-03-10')).length).toBe(14);
      });
    });

    describe('closed days', () => {
      it('closeThrough refuses every later insert of a closed day by write, enqueue and limits.submit, storing and counting nothing; later days go on; it never moves back', async () => {
        const store = await fresh();
        expect(await store.submissions.closedThrough()).toBe('');
        const before = { hash: hex(), submittedAt: new Date('2026-03-09T23:59:59.999Z'), source: 'api_beta' as const };
        await store.submissions.write(before);
        await store.submissions.closeThrough('2026-03-09');
        expect(await store.submissions.closedThrough()).toBe('2026-03-09');
        const late = (ms: number): Submission => ({
          hash: hex(),
          submittedAt: new Date(Date.parse('2026-03-09T23:59:59.000Z') + ms),
          source: 'api_beta',
        });
        const refused = await store.submissions.write(late(1)).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(refused).toBeInstanceOf(DayClosedError);
        expect((refused as DayClosedError).date).toBe('2026-03-09');
        // An earlier day is closed too.
        await expect(
          store.submissions.write({ ...late(0), submittedAt: new Date('2026-03-01T10:00:00.000Z') }),
        ).rejects.toBeInstanceOf(DayClosedError);
        // Rows of one group commit fail alone: the open day's rows written at the same time are stored.
        const open10 = Array.from({ length: 5 }, (_, i) => ({
          hash: hex(),
          submittedAt: new Date(NOW.getTime() + i),
          source: 'api_beta' as const,
        }));
        const mixed = await Promise.allSettled([
          ...open10.map((r) => store.submissions.write(r)),
          store.submissions.write(late(2)),
          store.submissions.write(late(3)),
        ]);
        expect(mixed.map((r) => r.status)).toEqual([
          'fulfilled',
          'fulfilled',
          'fulfilled',
          'fulfilled',
          'fulfilled',
          'rejected',
          'rejected',
        ]);
        // enqueue: all or none.
        await expect(
          store.submissions.enqueue([
            { ...late(4), source: 'import' },
            { hash: hex(), submittedAt: NOW, source: 'import' },
          ]),
        ).rejects.toBeInstanceOf(DayClosedError);
        // limits.submit: refused before it counts (the free tier's count of the day stays 0).
        await expect(
          store.limits.submit({
            submission: { hash: hex(), submittedAt: late(5).submittedAt },
            clientKey: '192.0.2.9',
            caps: CAPS,
          }),
        ).rejects.toBeInstanceOf(DayClosedError);
        expect(await store.limits.dailyUsed('192.0.2.9', '2026-03-09')).toBe(0);
        const userId = await newUser(store);
        await store.stripeEvents.apply(
          { id: `evt_${hex()}`, type: 'customer.subscription.updated', created: 1, receivedAt: NOW },
          { kind: 'checkout', userId, fields: fields() },
        );
        await expect(
          store.limits.submit({
            submission: { hash: hex(), submittedAt: late(6).submittedAt },
            clientKey: '192.0.2.9',
            userId,
            caps: CAPS,
          }),
        ).rejects.toBeInstanceOf(DayClosedError);
        expect(await store.limits.monthlyUsed(userId, '2026-03')).toBe(0);
        expect(await store.history.list(userId)).toEqual([]);
        expect(
          (
            await store.limits.submit({
              submission: { hash: hex(), submittedAt: NOW },
              clientKey: '192.0.2.9',
              userId,
              caps: CAPS,
            })
          ).allowed,
        ).toBe(true);
        // Only the rows acknowledged before the close are in the closed day.
        expect((await drain(store, '2026-03-09')).map((r) => r[0])).toEqual([before.hash]);
        expect(await drain(store, '2026-03-10')).toHaveLength(6);
        // Never back: an earlier day changes nothing; a later one moves on, from another store too.
        await store.submissions.closeThrough('2026-03-01');
        expect(await store.submissions.closedThrough()).toBe('2026-03-09');
        const other = await open();
        await other.submissions.closeThrough('2026-03-10');
        expect(await store.submissions.closedThrough()).toBe('2026-03-10');
        await expect(
          store.submissions.write({ hash: hex(), submittedAt: NOW, source: 'api_beta' }),
        ).rejects.toBeInstanceOf(DayClosedError);
        await store.submissions.write({
          hash: hex(),
          submittedAt: new Date('2026-03-11T00:00:00.000Z'),
          source: 'api_beta',
        });
      });

      it('submissions racing builds around midnight from two stores, with random delays: every acknowledged row is in its day as read after the close, every refused one is not', async () => {
        const a = await fresh();
        const b = await open();
        const builder = await open();
        const days = ['2026-03-10', '2026-03-11', '2026-03-12'];
        const acknowledged = new Map<string, string>();
        const refused = new Map<string, string>();
        const built = new Map<string, Set<string>>();
        const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
        const rand = (n: number) => crypto.randomInt(n);
        let building = true;
        // Writers whose clocks lag: each writes rows of the day being closed (and of the next) until the builds end.
        const writer = async (store: Store, w: number): Promise<void> => {
          for (let i = 0; building; i++) {
            const day = days[Math.min(days.length - 1, Math.max(0, built.size - (i % 2)))]!;
            const row: Submission = {
              hash: hex(),
              submittedAt: new Date(`${day}T23:59:${String(w).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}Z`),
              source: w % 2 ? 'api_beta' : 'web',
            };
            const wrote =
              w % 3 === 2
                ? store.limits
                    .submit({
                      submission: row,
                      clientKey: `198.51.100.${w}-${i}`,
                      caps: { freePerDay: 1000, standardPerMonth: 1000 },
                    })
                    .then(() => undefined)
                : store.submissions.write(row);
            await wrote.then(
              () => acknowledged.set(row.hash, day),
              (err: unknown) => {
                expect(err).toBeInstanceOf(DayClosedError);
                refused.set(row.hash, day);
              },
            );
            if (rand(3) === 0) await pause(rand(3));
          }
        };
        const builds = (async () => {
          for (const day of days) {
            await pause(5 + rand(25));
            await builder.submissions.closeThrough(day);
            built.set(day, new Set((await drain(builder, day)).map((r) => r[0])));
          }
          building = false;
        })();
        await Promise.all([builds, ...Array.from({ length: 6 }, (_, w) => writer(w % 2 ? a : b, w))]);
        let acknowledgedClosed = 0;
        for (const [hash, day] of acknowledged) {
          expect(built.get(day)?.has(hash) ?? false, `acknowledged ${hash} of ${day}`).toBe(true);
          acknowledgedClosed++;
        }
        for (const [hash, day] of refused) expect(built.get(day)?.has(hash) ?? false).toBe(false);
        // Each built day holds only rows that were acknowledged.
        for (const [day, hashes] of built) for (const hash of hashes) expect(acknowledged.get(hash)).toBe(day);
        expect(acknowledgedClosed).toBeGreaterThan(0);
        expect(refused.size).toBeGreaterThan(0);
      });
    });

    describe('limits', () => {
      it('the free tier admits exactly 2 per address and UTC day under concurrent calls from two stores', async () => {
        const a = await fresh();
        const b = await open();
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? a : b).limits.submit({
              submission: { hash: hex(), submittedAt: NOW },
              clientKey: '192.0.2.1',
              caps: CAPS,
            }),
          ),
        );
        expect(results.filter((r) => r.allowed)).toHaveLength(2);
        expect(
          results
            .filter((r) => r.allowed)
            .map((r) => (r.allowed ? r.count : 0))
            .sort(),
        ).toEqual([1, 2]);
        expect(results.every((r) => r.tier === 'free')).toBe(true);
        expect(await a.limits.dailyUsed('192.0.2.1', '2026-03-10')).toBe(2);
        expect(await a.submissions.queueSize('')).toBe(2);
        // Another address, another day: counted apart.
        expect(
          (await a.limits.submit({ submission: { hash: hex(), submittedAt: NOW }, clientKey: '192.0.2.2', caps: CAPS }))
            .allowed,
        ).toBe(true);
        expect(
          (
            await a.limits.submit({
              submission: { hash: hex(), submittedAt: new Date('2026-03-11T00:00:00.000Z') },
              clientKey: '192.0.2.1',
              caps: CAPS,
            })
          ).allowed,
        ).toBe(true);
      });

      it('a paying user admits exactly standardPerMonth a month under concurrency, with history; a non-paying one is free tier', async () => {
        // A cap of 100 with 120 racing calls: the same guarantee as the Standard plan's 500, in a fifth of the
        // transactions (each waits for the month's count row, so 520 of them outlasted the pool's 10 s connect
        // time-out on a loaded machine).
        const caps = { ...CAPS, standardPerMonth: 100 };
        const a = await fresh();
        const b = await open();
        const user = await newUser(a);
        expect(
          (
            await a.limits.submit({
              submission: { hash: hex(), submittedAt: NOW },
              clientKey: '192.0.2.9',
              userId: user,
              caps,
            })
          ).tier,
        ).toBe('free');
        await a.stripeEvents.apply(
          { id: 'evt_pay', type: 'customer.subscription.created', created: 1, receivedAt: NOW },
          { kind: 'subscription', userIdHint: user, fields: fields() },
        );
        expect(await a.subscriptions.isPaying(user)).toBe(true);
        const results = await Promise.all(
          Array.from({ length: 120 }, (_, i) =>
            (i % 2 ? a : b).limits.submit({
              submission: { hash: hex(), submittedAt: new Date(NOW.getTime() + i), fileName: `f${i}` },
              clientKey: '192.0.2.9',
              userId: user,
              caps,
            }),
          ),
        );
        expect(results.filter((r) => r.allowed)).toHaveLength(100);
        expect(results.every((r) => r.tier === 'standard')).toBe(true);
        expect(await a.limits.monthlyUsed(user, '2026-03')).toBe(100);
        const history = await b.history.list(user);
        expect(history).toHaveLength(100);
        expect(history[0]!.submittedAt >= history[1]!.submittedAt).toBe(true);
        expect(await a.history.get(history[0]!.id, user)).toEqual(history[0]);
        expect(await a.history.get(history[0]!.id, 'someone else')).toBeUndefined();
      });

      it('countWindow caps a window exactly under concurrency and prunes earlier windows', async () => {
        const a = await fresh();
        const b = await open();
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 ? a : b).limits.countWindow('198.51.100.1', 'beta-api:2026-03-10T12:00:00.000Z/minute', 3, {
              from: 'beta-api:',
              before: 'beta-api:2026-03-10T12:00:00.000Z',
            }),
          ),
        );
        expect(results.filter((r) => r !== undefined).sort()).toEqual([1, 2, 3]);
        expect(
          await a.limits.countWindow('198.51.100.1', 'beta-api:2026-03-10T12:01:00.000Z/minute', 3, {
            from: 'beta-api:',
            before: 'beta-api:2026-03-10T12:01:00.000Z',
          }),
        ).toBe(1);
        expect(await a.limits.dailyUsed('198.51.100.1', 'beta-api:2026-03-10T12:00:00.000Z/minute')).toBe(0);
      });

      it('countWindow counts an amount: exact under concurrency, never past max; an amount over max is refused even in a new window; prunes only when it creates the count', async () => {
        const a = await fresh();
        const b = await open();
        const w = (minute: number) => `beta-api:2026-03-10T12:0${minute}:00.000Z`;
        const count = (store: Store, minute: number, max: number, amount?: number) =>
          store.limits.countWindow(
            '198.51.100.2',
            `${w(minute)}/minute`,
            max,
            { from: 'beta-api:', before: w(minute) },
            amount,
          );
        // 8 concurrent calls of 3 against a cap of 10: exactly three pass (9), none of the others counts.
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => count(i % 2 ? a : b, 0, 10, 3)));
        expect(results.filter((r) => r !== undefined).sort()).toEqual([3, 6, 9]);
        expect(await a.limits.dailyUsed('198.51.100.2', `${w(0)}/minute`)).toBe(9);
        expect(await count(a, 0, 10, 2)).toBeUndefined();
        expect(await count(b, 0, 10)).toBe(10);
        expect(await count(a, 0, 10, 1)).toBeUndefined();
        // More than the cap at once: refused, nothing counted, and the earlier window is not pruned.
        expect(await count(a, 1, 10, 11)).toBeUndefined();
        expect(await a.limits.dailyUsed('198.51.100.2', `${w(1)}/minute`)).toBe(0);
        expect(await a.limits.dailyUsed('198.51.100.2', `${w(0)}/minute`)).toBe(10);
        // The call that creates the window's count (with any amount) prunes the earlier windows; later ones do not.
        expect(await count(b, 1, 10, 10)).toBe(10);
        expect(await a.limits.dailyUsed('198.51.100.2', `${w(0)}/minute`)).toBe(0);
        // A bad amount rejects and counts nothing.
        for (const bad of [0, -1, 1.5, Number.NaN])
          await expect(count(a, 2, 10, bad)).rejects.toBeInstanceOf(RangeError);
        expect(await a.limits.dailyUsed('198.51.100.2', `${w(2)}/minute`)).toBe(0);
        expect(await count(a, 2, 10)).toBe(1);
      });
    });

    describe('statements', () => {
      const statement = (n = 200): Uint8Array => new Uint8Array(crypto.randomBytes(n));
      it('register stores the statement and its submission row together; get and forDay read them back from another store, one per entry, in entry order', async () => {
        const a = await fresh();
        const b = await open();
        const [x, y] = [hex(), hex()].sort();
        const bx = statement();
        const by = statement(300);
        await a.statements.register({ entry: y!, bytes: by, registeredAt: new Date('2026-03-10T12:00:02.000Z') });
        await b.statements.register({ entry: x!, bytes: bx, registeredAt: new Date('2026-03-10T12:00:01.000Z') });
        await a.statements.register({ entry: x!, bytes: bx, registeredAt: new Date('2026-03-10T12:00:00.500Z') });
        await a.statements.register({ entry: x!, bytes: bx, registeredAt: new Date('2026-03-11T00:00:00.000Z') });
        expect(await b.statements.get(x!)).toEqual(bx);
        expect(await b.statements.get(hex())).toBeUndefined();
        expect(await b.statements.forDay('2026-03-10')).toEqual([
          { entry: x, bytes: bx, registeredAt: new Date('2026-03-10T12:00:00.500Z') },
          { entry: y, bytes: by, registeredAt: new Date('2026-03-10T12:00:02.000Z') },
        ]);
        expect((await b.statements.forDay('2026-03-11')).map((r) => r.entry)).toEqual([x]);
        expect(await b.statements.forDay('2026-03-09')).toEqual([]);
        // Each registration is a submission row of its day, as every other path's.
        expect(await b.submissions.queued(x!, '')).toEqual([
          { date: '2026-03-10', submittedAt: new Date('2026-03-10T12:00:00.500Z') },
          { date: '2026-03-11', submittedAt: new Date('2026-03-11T00:00:00.000Z') },
        ]);
        expect((await drain(b, '2026-03-10')).map(([h]) => h).sort()).toEqual([x, x, y].sort());
      });

      it('a closed day refuses a registration with DayClosedError, storing neither the statement nor its row; an empty statement is refused', async () => {
        const store = await fresh();
        await store.submissions.closeThrough('2026-03-10');
        const entry = hex();
        await expect(
          store.statements.register({ entry, bytes: statement(), registeredAt: new Date('2026-03-10T23:59:59.999Z') }),
        ).rejects.toBeInstanceOf(DayClosedError);
        expect(await store.statements.get(entry)).toBeUndefined();
        expect(await store.submissions.queued(entry, '')).toEqual([]);
        await expect(
          store.statements.register({
            entry,
            bytes: new Uint8Array(0),
            registeredAt: new Date('2026-03-11T00:00:00.000Z'),
          }),
        ).rejects.toThrow(/empty/);
        expect(await store.submissions.queued(entry, '')).toEqual([]);
      });

      it('registrations made at once (one group commit) are each stored with its row, and one of a closed day fails alone', async () => {
        const store = await fresh();
        await store.submissions.closeThrough('2026-03-10');
        const today = Array.from({ length: 20 }, () => ({
          entry: hex(),
          bytes: statement(),
          registeredAt: new Date('2026-03-11T08:00:00.000Z'),
        }));
        const late = { entry: hex(), bytes: statement(), registeredAt: new Date('2026-03-10T23:59:59.000Z') };
        const results = await Promise.allSettled([
          ...today.slice(0, 10).map((s) => store.statements.register(s)),
          store.statements.register(late),
          ...today.slice(10).map((s) => store.statements.register(s)),
        ]);
        expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
        expect((results[10] as PromiseRejectedResult).reason).toBeInstanceOf(DayClosedError);
        expect(await store.statements.get(late.entry)).toBeUndefined();
        expect(await store.submissions.queued(late.entry, '')).toEqual([]);
        const other = await open();
        for (const s of today) {
          expect(await other.statements.get(s.entry)).toEqual(s.bytes);
          expect(await other.submissions.queued(s.entry, '')).toEqual([
            { date: '2026-03-11', submittedAt: s.registeredAt },
          ]);
        }
      });
    });

    describe('receipts', () => {
      const der = (n = 64): Uint8Array => new Uint8Array(crypto.randomBytes(n));
      const payingUser = async (store: Store): Promise<string> => {
        const user = await newUser(store);
        const id = hex();
        await store.stripeEvents.apply(
          { id: `evt_${id}`, type: 'customer.subscription.created', created: 1, receivedAt: NOW },
          {
            kind: 'subscription',
            userIdHint: user,
            fields: fields({ subscriptionId: `sub_${id}`, customerId: `cus_${id}` }),
          },
        );
        expect(await store.subscriptions.isPaying(user)).toBe(true);
        return user;
      };

      it('limits.submit stores the receipt with its submission on both tiers; forDay reads them back byte for byte, by UTC day, earliest first, at most RECEIPTS_PER_DAY, from another store', async () => {
        const a = await fresh();
        const b = await open();
        const user = await payingUser(a);
        const h = hex();
        const at = (iso: string) => new Date(iso);
        const r = Array.from({ length: 6 }, (_, i) => der(40 + i));
        const submit = (store: Store, time: string, clientKey: string, receipt?: Uint8Array, userId?: string) =>
          store.limits.submit({
            submission: { hash: h, submittedAt: at(time) },
            clientKey,
            caps: CAPS,
            ...(receipt ? { receipt } : {}),
            ...(userId ? { userId } : {}),
          });
        // Stored in another order than their times; one without a receipt; the day's edges.
        expect((await submit(a, '2026-03-10T12:00:02.000Z', '192.0.2.1', r[2])).allowed).toBe(true);
        expect((await submit(b, '2026-03-10T12:00:01.000Z', '192.0.2.2', r[1])).allowed).toBe(true);
        expect((await submit(a, '2026-03-10T12:00:00.500Z', '192.0.2.3')).allowed).toBe(true);
        expect(await submit(b, '2026-03-10T12:00:03.000Z', '192.0.2.4', r[3], user)).toMatchObject({
          allowed: true,
          tier: 'standard',
        });
        expect((await submit(a, '2026-03-10T00:00:00.000Z', '192.0.2.5', r[0])).allowed).toBe(true);
        expect((await submit(a, '2026-03-10T23:59:59.999Z', '192.0.2.5', r[4])).allowed).toBe(true);
        expect((await submit(b, '2026-03-11T00:00:00.000Z', '192.0.2.5', r[5])).allowed).toBe(true);
        expect(await b.receipts.forDay(h, '2026-03-10')).toEqual([r[0], r[1], r[2], r[3], r[4]]);
        expect(await a.receipts.forDay(h, '2026-03-11')).toEqual([r[5]]);
        expect(await a.receipts.forDay(h, '2026-03-09')).toEqual([]);
        expect(await a.receipts.forDay(hex(), '2026-03-10')).toEqual([]);
        const [first] = await a.receipts.forDay(h, '2026-03-10');
        expect(first).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(first!).equals(Buffer.from(r[0]!))).toBe(true);
        // At most RECEIPTS_PER_DAY, the earliest; equal times in the order stored.
        const g = hex();
        const many = Array.from({ length: RECEIPTS_PER_DAY + 3 }, () => der());
        for (const [i, receipt] of many.entries()) {
          const time = i < 2 ? '2026-03-10T18:00:00.000Z' : '2026-03-10T09:00:00.000Z';
          expect(
            (
              await a.limits.submit({
                submission: { hash: g, submittedAt: at(time) },
                clientKey: `198.51.100.${i}`,
                caps: CAPS,
                receipt,
              })
            ).allowed,
          ).toBe(true);
        }
        expect(await b.receipts.forDay(g, '2026-03-10')).toEqual(
          [...many.slice(2), ...many.slice(0, 2)].slice(0, RECEIPTS_PER_DAY),
        );
      });

      it('nothing is stored when the limit refuses or the day is closed; a receipt is rolled back with its row, and its row with it', async () => {
        const store = await fresh();
        const caps = { freePerDay: 2, standardPerMonth: 1 };
        const h = hex();
        const kept = [der(), der()];
        for (const receipt of [...kept, der()])
          await store.limits.submit({
            submission: { hash: h, submittedAt: NOW },
            clientKey: '192.0.2.7',
            caps,
            receipt,
          });
        expect(await store.limits.dailyUsed('192.0.2.7', '2026-03-10')).toBe(2);
        expect(await store.receipts.forDay(h, '2026-03-10')).toEqual(kept);
        // A paying user over the monthly quota.
        const user = await payingUser(store);
        const p = hex();
        const paid = der();
        expect(
          (
            await store.limits.submit({
              submission: { hash: p, submittedAt: NOW },
              clientKey: '192.0.2.8',
              userId: user,
              caps,
              receipt: paid,
            })
          ).allowed,
        ).toBe(true);
        expect(
          await store.limits.submit({
            submission: { hash: p, submittedAt: NOW },
            clientKey: '192.0.2.8',
            userId: user,
            caps,
            receipt: der(),
          }),
        ).toEqual({ allowed: false, tier: 'standard' });
        expect(await store.receipts.forDay(p, '2026-03-10')).toEqual([paid]);
        // A closed day.
        await store.submissions.closeThrough('2026-03-09');
        const late = hex();
        await expect(
          store.limits.submit({
            submission: { hash: late, submittedAt: new Date('2026-03-09T23:59:59.999Z') },
            clientKey: '192.0.2.9',
            caps,
            receipt: der(),
          }),
        ).rejects.toBeInstanceOf(DayClosedError);
        await expect(
          store.limits.submit({
            submission: { hash: late, submittedAt: new Date('2026-03-09T23:59:59.999Z') },
            clientKey: '192.0.2.9',
            userId: user,
            caps: CAPS,
            receipt: der(),
          }),
        ).rejects.toBeInstanceOf(DayClosedError);
        expect(await store.receipts.forDay(late, '2026-03-09')).toEqual([]);
        // A receipt that cannot be stored (empty) takes its submission and its count with it, on both tiers.
        const empty = hex();
        await expect(
          store.limits.submit({
            submission: { hash: empty, submittedAt: NOW },
            clientKey: '192.0.2.10',
            caps,
            receipt: new Uint8Array(0),
          }),
        ).rejects.toThrow();
        await expect(
          store.limits.submit({
            submission: { hash: empty, submittedAt: NOW },
            clientKey: '192.0.2.10',
            userId: await payingUser(store),
            caps,
            receipt: new Uint8Array(0),
          }),
        ).rejects.toThrow();
        expect(await store.limits.dailyUsed('192.0.2.10', '2026-03-10')).toBe(0);
        // A submission that cannot be stored (not a hash) stores no receipt and counts nothing.
        await expect(
          store.limits.submit({
            submission: { hash: 'not hex', submittedAt: NOW },
            clientKey: '192.0.2.11',
            caps,
            receipt: der(),
          }),
        ).rejects.toThrow();
        expect(await store.limits.dailyUsed('192.0.2.11', '2026-03-10')).toBe(0);
        expect(await store.receipts.forDay(empty, '2026-03-10')).toEqual([]);
        const day = (await drain(store, '2026-03-10')).map((row) => row[0]);
        expect(day.filter((x) => x === empty)).toEqual([]);
        expect(day.filter((x) => x === h)).toHaveLength(2);
        expect(day.filter((x) => x === p)).toHaveLength(1);
        // The store still writes: nothing was left half done.
        expect(
          (
            await store.limits.submit({
              submission: { hash: empty, submittedAt: NOW },
              clientKey: '192.0.2.10',
              caps,
              receipt: kept[0],
            })
          ).allowed,
        ).toBe(true);
        expect(await store.receipts.forDay(empty, '2026-03-10')).toEqual([kept[0]]);
      });
    });

    describe('throttle', () => {
      const W = 60_000;
      it('attempt admits exactly max under concurrency from two stores, then blocks until the window passes', async () => {
        const a = await fresh();
        const b = await open();
        const k = { scope: 'login', key: 'account:x' };
        const t = NOW.getTime();
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 ? a : b).throttle.attempt([{ ...k, max: 5, windowMs: W }], [{ ...k, windowMs: W }], t),
          ),
        );
        expect(results.filter((r) => r !== undefined)).toHaveLength(5);
        expect(await a.throttle.count(k, W, t)).toBe(5);
        expect(await a.throttle.attempt([{ ...k, max: 5, windowMs: W }], [{ ...k, windowMs: W }], t + W)).toBeDefined();
      });

      it('unlessSeen spares a known key; change withdraws, clears and records in one step', async () => {
        const store = await fresh();
        const t = NOW.getTime();
        const addr = { scope: 'login-address', key: 'ip:1' };
        const known = { scope: 'login-known', key: 'account:x|ip:1' };
        await store.throttle.record([{ ...addr, windowMs: W }], t);
        const guard = { ...addr, max: 1, windowMs: W, unlessSeen: { ...known, windowMs: 10 * W } };
        expect(await store.throttle.attempt([guard], [], t)).toBeUndefined();
        await store.throttle.change({ record: [{ ...known, windowMs: 10 * W }], nowMs: t });
        const mark = await store.throttle.attempt([guard], [{ ...addr, windowMs: W }], t);
        expect(mark).toBeDefined();
        expect(await store.throttle.count(addr, W, t)).toBe(2);
        await store.throttle.change({ withdraw: [mark!], clear: [known], nowMs: t });
        expect(await store.throttle.count(addr, W, t)).toBe(1);
        expect(await store.throttle.count(known, 10 * W, t)).toBe(0);
      });
    });

    describe('users, sessions, tokens', () => {
      it('usernames are unique whatever their case, e-mails exactly', async () => {
        const store = await fresh();
        await newUser(store, 'alice');
        await expect(newUser(store, 'ALICE')).rejects.toBeInstanceOf(UniqueViolationError);
        const id = crypto.randomUUID();
        const dup = store.users.create({
          id,
          username: 'bob',
          email: 'alice@example.com',
          passwordHash: 'h',
          newsletter: true,
          createdAt: NOW,
          verification: { tokenHash: hex(), expires: NOW },
        });
        await expect(dup).rejects.toMatchObject({ field: 'email' });
        expect(await store.users.get(id)).toBeUndefined();
        expect((await store.users.forLogin('Alice'))?.passwordHash).toBe('hash');
        expect((await store.users.forLogin('ALICE@example.com'))?.passwordHash).toBe('hash');
        expect(await store.users.byEmail('alice@example.com')).toMatchObject({ username: 'alice' });
      });

      it('a verification token is single use under concurrency and not after it expires', async () => {
        const a = await fresh();
        const b = await open();
        const user = await newUser(a);
        const token = hex();
        await a.users.setVerification(user, token, new Date(NOW.getTime() + 1000));
        expect(await a.users.verifyEmail(token, new Date(NOW.getTime() + 1000))).toBe(false);
        const results = await Promise.all([a, b, a, b].map((s) => s.users.verifyEmail(token, NOW)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect((await a.users.get(user))?.emailVerified).toBe(true);
      });

      it('a resend keeps the token it replaced as replaced until the address is verified', async () => {
        const store = await fresh();
        const user = await newUser(store);
        const [first, second, third] = [hex(), hex(), hex()];
        const later = new Date(NOW.getTime() + 86_400_000);
        await store.users.setVerification(user, first, later);
        expect(await store.users.replacedVerification(first)).toBe(false); // the current one
        await store.users.setVerification(user, second, later);
        expect(await store.users.replacedVerification(first)).toBe(true);
        expect(await store.users.verifyEmail(first, NOW)).toBe(false);
        await store.users.setVerification(user, third, later);
        expect(await store.users.replacedVerification(second)).toBe(true); // the last one replaced
        expect(await store.users.replacedVerification(first)).toBe(false); // older: only expired, as far as known
        expect(await store.users.replacedVerification(hex())).toBe(false);
        expect(await store.users.verifyEmail(third, NOW)).toBe(true);
        expect(await store.users.replacedVerification(second)).toBe(false); // verified: nothing to say of it
      });

      it('a reset token is single use under concurrency and deletes every session of the user', async () => {
        const a = await fresh();
        const b = await open();
        const user = await newUser(a);
        const token = hex();
        await a.users.setReset(user, token, new Date(NOW.getTime() + 1000));
        expect(await a.users.forReset(token, NOW)).toBe(user);
        expect(await a.users.forReset(token, new Date(NOW.getTime() + 1000))).toBeUndefined();
        const session = hex();
        await a.sessions.create(session, user, NOW, new Date(NOW.getTime() + 1000));
        const results = await Promise.all([a, b, a, b].map((s, i) => s.users.resetPassword(user, token, `new${i}`)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await a.sessions.user(session, NOW)).toBeUndefined();
        expect(await a.users.forReset(token, NOW)).toBeUndefined();
      });

      it('a session is honoured until it expires, then pruned; destroy and destroyUser end it', async () => {
        const store = await fresh();
        const user = await newUser(store, 'carol');
        const [s1, s2] = [hex(), hex()];
        await store.sessions.create(s1, user, NOW, new Date(NOW.getTime() + 1000));
        await store.sessions.create(s2, user, NOW, new Date(NOW.getTime() + 5000));
        expect(await store.sessions.user(s1, NOW)).toEqual({
          id: user,
          username: 'carol',
          email: 'carol@example.com',
          emailVerified: false,
        });
        expect(await store.sessions.user(s1, new Date(NOW.getTime() + 1000))).toBeUndefined();
        await store.sessions.prune(new Date(NOW.getTime() + 1000));
        await store.sessions.destroy(s2);
        expect(await store.sessions.user(s2, NOW)).toBeUndefined();
        await store.sessions.create(s1, user, NOW, new Date(NOW.getTime() + 1000));
        await store.sessions.destroyUser(user);
        expect(await store.sessions.user(s1, NOW)).toBeUndefined();
      });
    });

    describe('Stripe', () => {
      it('an event id is applied at most once, also when delivered concurrently to two stores', async () => {
        const a = await fresh();
        const b = await open();
        const user = await newUser(a);
        const event = { id: 'evt_1', type: 'customer.subscription.created', created: 100, receivedAt: NOW };
        const outcomes = await Promise.all(
          [a, b, a, b].map((s) =>
            s.stripeEvents.apply(event, { kind: 'subscription', userIdHint: user, fields: fields() }),
          ),
        );
        expect(outcomes.filter((o) => o !== undefined)).toHaveLength(1);
        expect(await a.stripeEvents.seen('evt_1')).toBe(true);
        expect(await a.stripeEvents.seen('evt_2')).toBe(false);
        expect(await a.subscriptions.get(user)).toMatchObject({
          status: 'active',
          customerId: 'cus_1',
          priceId: 'price_m',
          cancelAtPeriodEnd: false,
        });
      });

      it('keeps the newest event: an older one is ignored, a canceled subscription stays canceled, payment failures mark past_due', async () => {
        const store = await fresh();
        const user = await newUser(store);
        const apply = (id: string, created: number, f: Partial<SubscriptionFields>) =>
          store.stripeEvents.apply(
            { id, type: 'customer.subscription.updated', created, receivedAt: NOW },
            { kind: 'subscription', userIdHint: user, fields: fields(f) },
          );
        await apply('e1', 200, { status: 'active' });
        expect(await apply('e0', 100, { status: 'incomplete' })).toMatch(/^ignored: older/);
        expect(
          await store.stripeEvents.apply(
            { id: 'e2', type: 'invoice.payment_failed', created: 300, receivedAt: NOW },
            { kind: 'payment-failed', customerId: 'cus_1' },
          ),
        ).toMatch(/past_due$/);
        expect((await store.subscriptions.get(user))?.status).toBe('past_due');
        await apply('e3', 400, { status: 'canceled' });
        expect(await apply('e4', 500, { status: 'active' })).toMatch(/is canceled$/);
        expect(await store.subscriptions.isPaying(user)).toBe(false);
        expect(
          await store.stripeEvents.apply(
            { id: 'e5', type: 'x', created: 1, receivedAt: NOW },
            { kind: 'none', outcome: 'ignored: x' },
          ),
        ).toBe('ignored: x');
      });

      it('setCustomer keeps the first customer recorded', async () => {
        const store = await fresh();
        const user = await newUser(store);
        expect(await store.subscriptions.setCustomer(user, 'cus_a')).toBe('cus_a');
        expect(await store.subscriptions.setCustomer(user, 'cus_b')).toBe('cus_a');
        expect(await store.subscriptions.get(user)).toMatchObject({ status: 'inactive', customerId: 'cus_a' });
        expect(await store.subscriptions.isPaying(user)).toBe(false);
      });
    });

    describe('forms', () => {
      it('the waitlist keeps one entry per e-mail under concurrency; contact messages get ids and deliveries', async () => {
        const a = await fresh();
        const b = await open();
        const entry = { name: 'N', email: 'w@example.com', message: 'hello', createdAt: NOW };
        const results = await Promise.all([a, b, a, b].map((s) => s.forms.joinWaitlist(entry)));
        expect(results.filter(Boolean)).toHaveLength(1);
        const id = await a.forms.addContact({
          name: 'Name',
          email: 'c@example.com',
          subject: 'general',
          message: 'a message of some length',
          createdAt: NOW,
        });
        expect(typeof id).toBe('number');
        await a.forms.setContactDelivery(id, 'outbox:x.eml');
      });
    });

    describe('lease', () => {
      it('one holder at a time: the other is refused until expiry, the holder renews, a release frees it', async () => {
        const first = await fresh();
        const second = await open();
        const t = NOW.getTime();
        const both = await Promise.all([
          first.lease.acquire('schedule', 'A', 90_000, t),
          second.lease.acquire('schedule', 'B', 90_000, t),
        ]);
        // Sent at once: either may win (on PostgreSQL whichever commits first), never both.
        expect(both.filter(Boolean)).toHaveLength(1);
        // From here `a` names the store whose holder won, `b` the other; holder names follow.
        const [a, b, A, B] = both[0] ? [first, second, 'A', 'B'] : [second, first, 'B', 'A'];
        expect(await b.lease.acquire('schedule', B, 90_000, t + 89_999)).toBe(false);
        // Renewal by the holder moves the expiry.
        expect(await a.lease.acquire('schedule', A, 90_000, t + 60_000)).toBe(true);
        expect(await b.lease.acquire('schedule', B, 90_000, t + 120_000)).toBe(false);
        // Expired: the other takes it over, and the old holder is then refused.
        expect(await b.lease.acquire('schedule', B, 90_000, t + 150_001)).toBe(true);
        expect(await a.lease.acquire('schedule', A, 90_000, t + 150_002)).toBe(false);
        // Another lease name is independent.
        expect(await a.lease.acquire('other', A, 90_000, t + 150_002)).toBe(true);
        // Only the holder's release frees it; then it is free at once.
        await a.lease.release('schedule', A);
        expect(await a.lease.acquire('schedule', A, 90_000, t + 150_003)).toBe(false);
        await b.lease.release('schedule', B);
        expect(await a.lease.acquire('schedule', A, 90_000, t + 150_004)).toBe(true);
      });

      it('concurrent acquisitions of a free or expired lease admit exactly one', async () => {
        const a = await fresh();
        const b = await open();
        const t = NOW.getTime();
        const first = await Promise.all(
          ['A', 'B', 'C', 'D'].map((h, i) => (i % 2 ? b : a).lease.acquire('schedule', h, 1_000, t)),
        );
        expect(first.filter(Boolean)).toHaveLength(1);
        const later = await Promise.all(
          ['E', 'F', 'G', 'H'].map((h, i) => (i % 2 ? b : a).lease.acquire('schedule', h, 1_000, t + 5_000)),
        );
        expect(later.filter(Boolean)).toHaveLength(1);
      });
    });

    it('a closed store refuses further calls', async () => {
      const store = await fresh();
      await store.close();
      await expect(store.submissions.queueSize('')).rejects.toThrow(/closed/);
    });
  });
}
