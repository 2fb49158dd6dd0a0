// `timeseal clock [set <instant> | next-day | reset]`: the development clock (runtime/clock.ts; docs/OPERATIONS.md,
// "The development clock"). It moves the clock of the whole local installation at once: a running `timeseal
// serve` (its submissions, its schedule, the Date header of its answers, from which the client and the site take
// their times) within a second, and every later `timeseal` command. Refused on a public origin, and refused when
// the moved clock would be on or before the last published day (the server would then refuse every submission).
import fs from 'node:fs';
import type { TimesealCommand } from '../command.ts';
import { TimesealError } from '../../core/errors.ts';
import { utcDate } from '../../core/ledger.ts';
import { clockBehindArchive, clockBehindText, readLastPublishedDay } from '../../runtime/clock-guard.ts';
import { devClockPath, devClockRefusal, parseInstant, readDevClock, writeDevClock } from '../../runtime/clock.ts';
import { isLoopbackOrigin, loadConfig, type Config } from '../../runtime/config.ts';
import { setting } from '../../runtime/settings.ts';
import { output } from '../output.ts';

interface ClockState {
  now: string;
  source: 'system' | 'development' | 'TIMESEAL_NOW';
  /** The development clock's lead over the system clock, ms (0 without one). */
  aheadMs: number;
  file: string;
}

function stateOf(config: Config): ClockState {
  const file = devClockPath(config);
  const fixed = setting(process.env, 'TIMESEAL_NOW');
  const offset = readDevClock(file);
  if (fixed !== undefined)
    return {
      now: new Date(parseInstant(fixed, 'TIMESEAL_NOW')).toISOString(),
      source: 'TIMESEAL_NOW',
      aheadMs: 0,
      file,
    };
  return {
    now: new Date(Date.now() + (offset ?? 0)).toISOString(),
    source: offset === null ? 'system' : 'development',
    aheadMs: offset ?? 0,
    file,
  };
}

/** "1 d 2 h 3 min ahead of" / "5 min behind" the system clock. */
function lead(ms: number): string {
  const abs = Math.abs(Math.round(ms / 60_000));
  const d = Math.floor(abs / 1440);
  const h = Math.floor((abs % 1440) / 60);
  const m = abs % 60;
  const parts = [d ? `${d} d` : '', h ? `${h} h` : '', m || (!d && !h) ? `${m} min` : ''].filter(Boolean);
  return `${parts.join(' ')} ${ms >= 0 ? 'ahead of' : 'behind'} the system clock`;
}

function lines(s: ClockState): string[] {
  const said =
    s.source === 'development'
      ? `${s.now} (the development clock, ${lead(s.aheadMs)}; ${s.file}; timeseal clock reset goes back)`
      : s.source === 'TIMESEAL_NOW'
        ? `${s.now} (TIMESEAL_NOW, fixed for this command; a server started without it follows the development clock)`
        : `${s.now} (the system clock)`;
  return [`Clock: ${said}`];
}

/** Writes the development clock so that it shows `to` now, after the checks every move shares. */
function move(config: Config, to: number): ClockState {
  if (!isLoopbackOrigin(config.origin)) throw devClockRefusal(devClockPath(config), config.origin);
  const last = readLastPublishedDay(config.archive);
  const day = utcDate(new Date(to));
  if (clockBehindArchive(day, last))
    throw new TimesealError(
      'conflict',
      `the ${clockBehindText(day, last)}: a server on it would refuse every submission, and no day on or before ${last} can be published again. The clock was not moved.`,
    );
  writeDevClock(devClockPath(config), new Date(to));
  return stateOf(config);
}

export function registerClock(program: TimesealCommand): void {
  const clock = program
    .command('clock')
    .description('show the clock; move the development clock of this local installation (set, next-day, reset)')
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const s = stateOf(loadConfig(process.env));
      output(!!opts.json).result(s, () => lines(s));
      return 'ok';
    });
  clock
    .command('set <instant>')
    .description('the development clock shows <instant> (ISO-8601 with its zone) now, and ticks on from there')
    .option('--json', 'machine-readable output')
    .act(async (instant: string, opts: { json?: boolean }) => {
      const s = move(loadConfig(process.env), parseInstant(instant, 'the instant'));
      output(!!opts.json).result(s, () => lines(s));
      return 'ok';
    });
  clock
    .command('next-day')
    .description(
      'move the development clock to 00:01 UTC of the day after its own: the day it was on is finished (timeseal ledger build publishes it)',
    )
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const config = loadConfig(process.env);
      const today = utcDate(new Date(stateOf(config).now));
      const s = move(config, Date.parse(`${today}T00:01:00.000Z`) + 86_400_000);
      output(!!opts.json).result({ ...s, finished: today }, () => [
        ...lines(s),
        `The day ${today} is finished: timeseal ledger build publishes it (a running server's schedule would at its next build, hourly at :01).`,
      ]);
      return 'ok';
    });
  clock
    .command('reset')
    .description('back to the system clock (removes the development clock)')
    .option('--json', 'machine-readable output')
    .act(async (opts: { json?: boolean }) => {
      const config = loadConfig(process.env);
      const file = devClockPath(config);
      const last = readLastPublishedDay(config.archive);
      const today = utcDate(new Date());
      if (fs.existsSync(file) && isLoopbackOrigin(config.origin) && clockBehindArchive(today, last))
        throw new TimesealError(
          'conflict',
          `the system clock's day (${today}) is not after the last published ledger (${last}): a server on it would refuse every submission until ${last} has passed. The development clock was kept (remove ${file} to go back anyway).`,
        );
      fs.rmSync(file, { force: true });
      const s = stateOf(config);
      output(!!opts.json).result(s, () => lines(s));
      return 'ok';
    });
}
