// The development clock (runtime/clock.ts): the file `timeseal clock` writes moves the clock of every process
// that reads it, a running one at its next look; refused on a public origin; TIMESEAL_NOW wins over it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { clockFromEnv, devClockPath, readDevClock, writeDevClock } from './clock.ts';
import { isLoopbackOrigin } from './config.ts';

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-clock-'));
  file = devClockPath({ db: path.join(dir, 'data/timeseal.db') });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const near = (a: Date, b: number) => expect(Math.abs(a.getTime() - b)).toBeLessThan(2000);

describe('the development clock', () => {
  test('beside the database; without its file the system clock', () => {
    expect(file).toBe(path.join(dir, 'data/dev-clock.json'));
    const clock = clockFromEnv({}, { devClock: file, origin: 'http://localhost:8080', recheckMs: 0 });
    near(clock(), Date.now());
    expect(clock.development).toBe(true);
    expect(readDevClock(file)).toBeNull();
  });

  test('a running clock follows the file at its next look, ticking on from the time it was set', () => {
    const clock = clockFromEnv({}, { devClock: file, origin: 'http://localhost:8080', recheckMs: 0 });
    writeDevClock(file, new Date('2030-01-02T00:01:00.000Z'));
    near(clock(), Date.parse('2030-01-02T00:01:00.000Z'));
    // Set five seconds ago (by the system clock): five seconds later now.
    writeDevClock(file, new Date('2030-01-03T00:01:00.000Z'), new Date(Date.now() - 5000));
    near(clock(), Date.parse('2030-01-03T00:01:05.000Z'));
    fs.rmSync(file);
    near(clock(), Date.now());
  });

  test('looked at again only after recheckMs', () => {
    writeDevClock(file, new Date('2030-01-02T00:01:00.000Z'));
    const clock = clockFromEnv({}, { devClock: file, origin: 'http://127.0.0.1:9', recheckMs: 3_600_000 });
    writeDevClock(file, new Date('2031-01-02T00:01:00.000Z'));
    near(clock(), Date.parse('2030-01-02T00:01:00.000Z'));
  });

  test('refused on a public origin, ignored there without a file; TIMESEAL_NOW wins over it', () => {
    expect(clockFromEnv({}, { devClock: file, origin: 'https://timeseal.example' }).development).toBeUndefined();
    writeDevClock(file, new Date('2030-01-02T00:01:00.000Z'));
    expect(() => clockFromEnv({}, { devClock: file, origin: 'https://timeseal.example' })).toThrow(
      `${file} (timeseal clock) moves the clock of a local development server only (TIMESEAL_ORIGIN unset or on localhost); this one is https://timeseal.example: remove the file (timeseal clock reset)`,
    );
    const fixed = clockFromEnv(
      { TIMESEAL_NOW: '2025-11-02T10:00:00Z' },
      { devClock: file, origin: 'https://x.example' },
    );
    expect(fixed().toISOString()).toBe('2025-11-02T10:00:00.000Z');
  });

  test('a damaged file is a usage error that says what to do', () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"clock": "tomorrow"}');
    expect(() => clockFromEnv({}, { devClock: file })).toThrow(/must hold \{"clock": ISO, "at": ISO\}/);
    fs.writeFileSync(file, '{"clock": "2030-01-02T00:01", "at": "2030-01-02T00:01:00Z"}');
    expect(() => clockFromEnv({}, { devClock: file })).toThrow(
      /clock is not an ISO-8601 instant: 2030-01-02T00:01 \(write it with its zone/,
    );
  });
});

test.each([
  ['http://localhost:8080', true],
  ['http://127.0.0.1:4000', true],
  ['http://[::1]:8080', true],
  ['localhost', true],
  ['https://timeseal.example', false],
  ['http://localhost.example.com', false],
  ['http://10.0.0.1:8080', false],
])('isLoopbackOrigin(%s) = %s', (origin, local) => expect(isLoopbackOrigin(origin)).toBe(local));
