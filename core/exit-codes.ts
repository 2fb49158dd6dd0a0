// The one exit-code vocabulary of both command lines, `timeseal` (cli/) and `timeseal-client` (client/): a
// command's action ends with an outcome, and only each program's main() turns it into the process's exit code,
// with this table. 64 and 75 are sysexits.h's EX_USAGE and EX_TEMPFAIL; 2 and 3 are our own.

/** How a command ended. */
export type Outcome = 'ok' | 'failed' | 'pending' | 'not-found' | 'usage' | 'temporary';

/** The exit code of each outcome. */
export const EXIT_CODES = {
  /** Done; for a check: complete, every layer checked. */
  ok: 0,
  /** Failed, or what was checked is invalid (a bad signature, a broken promise, a damaged file). */
  failed: 1,
  /** Valid so far: something is still to come (a day not published yet, an anchor not in Bitcoin yet). */
  pending: 2,
  /** What was named is not there: no such file, no proof file, a hash in no published ledger. */
  'not-found': 3,
  /** Bad usage: an unknown command or option, a bad option value or setting (sysexits.h EX_USAGE). */
  usage: 64,
  /** A temporary failure: the server could not be reached or failed; running the same command again continues
   * (sysexits.h EX_TEMPFAIL). */
  temporary: 75,
} as const satisfies Record<Outcome, number>;

export type ExitCode = (typeof EXIT_CODES)[Outcome];

export const exitCodeOf = (outcome: Outcome): ExitCode => EXIT_CODES[outcome];

/** From the worst to the best: the outcome of a run over many files is the first of these that one file had. */
const WORST_FIRST: readonly Outcome[] = ['usage', 'failed', 'temporary', 'not-found', 'pending', 'ok'];

/** The outcome of many: usage, then failed, temporary, not found, pending; ok when there are none. */
export const worstOutcome = (outcomes: readonly Outcome[]): Outcome =>
  WORST_FIRST.find((o) => outcomes.includes(o)) ?? 'ok';

/** The exit status when the reader of the output goes away (`… | head -1`): 128 + SIGPIPE (13), what a shell
 * reports for a tool a closed pipe ended. Node ignores SIGPIPE, so the program ends itself with this status. */
export const CLOSED_OUTPUT_STATUS = 141;

interface OutputStream {
  on(event: 'error', listener: (err: Error & { code?: string }) => void): unknown;
}

/**
 * Ends the program quietly with CLOSED_OUTPUT_STATUS when the reader of one of `streams` (stdout, stderr) has gone
 * away (EPIPE), as a Unix tool does, instead of Node's crash on the unhandled error with its stack trace; any other
 * error of a stream is thrown as before.
 */
export function endWhenOutputCloses(streams: OutputStream[], exit: (status: number) => void): void {
  for (const stream of streams)
    stream.on('error', (err) => {
      if (err.code !== 'EPIPE') throw err;
      exit(CLOSED_OUTPUT_STATUS);
    });
}
