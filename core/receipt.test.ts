// judgePromise (core/receipt.ts): kept, pending and broken from a day's ledger, or from its absence.
import { describe, expect, test } from 'vitest';
import { judgePromise, digestLength } from './receipt.ts';

const h = (c: string): string => c.repeat(64);
const genTime = new Date('2025-11-02T12:00:00.250Z');
const facts = { ledgerHash: h('b'), date: '2025-11-02', genTime };
const ledger = (entries: Array<[string, string]>) => ({
  date: '2025-11-02',
  firstIndex: 10,
  entries: entries.map(([hash, submittedAt]) => ({ hash, submittedAt })),
});

describe('judgePromise', () => {
  test('kept: the entry at its leaf index (first index + position), at or before genTime', () => {
    expect(
      judgePromise(
        facts,
        ledger([
          [h('a'), '2025-11-02T01:00:00.000Z'],
          [h('b'), '2025-11-02T12:00:00.250Z'],
          [h('c'), '2025-11-02T13:00:00.000Z'],
        ]),
        '2025-11-02',
      ),
    ).toEqual({ state: 'kept', date: '2025-11-02', leafIndex: 11, recordedAt: '2025-11-02T12:00:00.250Z' });
    // Submitted earlier the same day too: one leaf with the earliest time.
    expect(judgePromise(facts, ledger([[h('b'), '2025-11-02T08:00:00.000Z']]), '2025-11-03')).toMatchObject({
      state: 'kept',
      leafIndex: 10,
    });
  });

  test('broken: absent from the published ledger, or recorded after genTime', () => {
    expect(
      judgePromise(
        facts,
        ledger([
          [h('a'), '2025-11-02T01:00:00.000Z'],
          [h('c'), '2025-11-02T13:00:00.000Z'],
        ]),
        '2025-11-02',
      ),
    ).toMatchObject({
      state: 'broken',
      reason: expect.stringMatching(/does not hold b{64}: the receipt is evidence of a broken promise/),
    });
    expect(judgePromise(facts, ledger([]), '2025-11-02')).toMatchObject({ state: 'broken' });
    expect(judgePromise(facts, ledger([[h('b'), '2025-11-02T12:00:00.251Z']]), '2025-11-02')).toMatchObject({
      state: 'broken',
      reason: expect.stringMatching(/after the receipt's time/),
    });
  });

  test('no ledger of the day: pending until that day or a later one is published, then broken', () => {
    expect(judgePromise(facts, null, null)).toMatchObject({ state: 'pending' });
    expect(judgePromise(facts, null, '2025-11-01')).toMatchObject({
      state: 'pending',
      reason: expect.stringMatching(/published through 2025-11-01/),
    });
    expect(judgePromise(facts, null, '2025-11-05')).toMatchObject({
      state: 'broken',
      reason: expect.stringMatching(/no ledger of 2025-11-02 is published, yet later days are/),
    });
  });

  test("a ledger of another day is a caller's mistake", () => {
    expect(() => judgePromise(facts, { ...ledger([]), date: '2025-11-03' }, '2025-11-03')).toThrow(
      /not the receipt's day/,
    );
  });

  test('digest lengths', () => {
    expect([digestLength('SHA-256'), digestLength('SHA-384'), digestLength('SHA-512')]).toEqual([32, 48, 64]);
  });
});
