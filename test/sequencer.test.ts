// The order the test files run in (test/support/sequencer.ts): files without a measured time first, larger
// first; then the longest measured first. And the durations list read leniently: a missing or bad file is none.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { longestFirst, readDurations } from './support/sequencer.ts';

test('unknown files first (larger first), then by measured time, longest first', () => {
  const durations = new Map([
    ['a.test.ts', 5],
    ['b.test.ts', 50],
    ['c.test.ts', 0.5],
  ]);
  const sizes: Record<string, number> = {
    'a.test.ts': 900,
    'b.test.ts': 10,
    'c.test.ts': 5000,
    'new-small.test.ts': 100,
    'new-big.test.ts': 800,
  };
  expect(longestFirst(Object.keys(sizes), durations, (f) => sizes[f]!)).toEqual([
    'new-big.test.ts',
    'new-small.test.ts',
    'b.test.ts',
    'a.test.ts',
    'c.test.ts',
  ]);
});

test('the durations list: numbers kept, anything else dropped; a missing or broken file is an empty list', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-durations-'));
  try {
    const file = path.join(dir, 'durations.json');
    fs.writeFileSync(file, JSON.stringify({ 'x.test.ts': 12.5, 'y.test.ts': 'slow', 'z.test.ts': -1 }));
    expect([...readDurations(file)]).toEqual([['x.test.ts', 12.5]]);
    fs.writeFileSync(file, '{ not json');
    expect(readDurations(file).size).toBe(0);
    expect(readDurations(path.join(dir, 'absent.json')).size).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
