// `timeseal mirror pull`'s summary line (cli/commands/mirror.ts newDaysText): a few new days are listed, many
// are counted with their range; a first pull of 400 days printed all 400 dates on one line before.
import { describe, expect, it } from 'vitest';
import { newDaysText } from '../../cli/commands/mirror.ts';

const days = (n: number) =>
  Array.from({ length: n }, (_, i) => new Date(Date.UTC(2025, 0, 1) + i * 86_400_000).toISOString().slice(0, 10));

describe('mirror pull: the new days in its summary', () => {
  it.each([
    [0, ' (no new day)'],
    [1, ' (new: 2025-01-01)'],
    [5, ' (new: 2025-01-01, 2025-01-02, 2025-01-03, 2025-01-04, 2025-01-05)'],
    [6, ' (new: 6 days, 2025-01-01 to 2025-01-06)'],
    [400, ' (new: 400 days, 2025-01-01 to 2026-02-04)'],
  ])('%i new days: %s', (n, text) => {
    expect(newDaysText(days(n))).toBe(text);
  });

  it('names the range by date whatever the order the days came in', () => {
    expect(newDaysText(days(10).reverse())).toBe(' (new: 10 days, 2025-01-01 to 2025-01-10)');
  });
});
