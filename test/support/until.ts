// Waiting for something a test cannot be told of (a log line, a file, a server's answer): Vitest's vi.waitFor asks
// `check` every `interval` ms until it gives a value, and after `ms` fails with a sentence naming what never came.
import { vi } from 'vitest';

/**
 * The first value of `check` that is neither undefined nor false (a boolean check gives true), asked every
 * `interval` ms (default 50); after `ms` ms it throws "timed out after MS ms waiting for WHAT". An error `check`
 * throws is not a "not yet": it fails the wait at once.
 */
export async function until<T>(
  what: string,
  ms: number,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  interval = 50,
): Promise<T> {
  const notYet = new Error(`timed out after ${ms} ms waiting for ${what}`);
  let failure: unknown;
  const value = await vi.waitFor(
    async () => {
      let v: T | undefined | false;
      try {
        v = await check();
      } catch (err) {
        failure = err;
        return undefined;
      }
      if (v === undefined || v === false) throw notYet;
      return v;
    },
    { timeout: ms, interval },
  );
  if (failure !== undefined) throw failure;
  return value as T;
}

/** The address a `timeseal serve` prints on stdout (`Timeseal listening on URL`) once `stdout()` holds it; after
 * `ms` ms the failure shows `log()` (what the server said). */
export function listeningUrl(stdout: () => string, ms: number, log: () => string = stdout): Promise<string> {
  return until('"Timeseal listening on …"', ms, () => /Timeseal listening on (http:\/\/\S+)/.exec(stdout())?.[1]).catch(
    (err: Error) => {
      throw new Error(`${err.message}:\n${log()}`);
    },
  );
}
