// How a run of the command line ends: the outcome of a failure, and the cancellation every command listens to
// (Ctrl-C). Each command returns an outcome (core/exit-codes.ts: ok, failed, pending, not found, usage,
// temporary), and main() alone turns it into the exit code. Temporary is for stamp and upgrade: the server could
// not be reached, the connection broke, or it answered 429 or 5xx; what it acknowledged is saved, and running the
// same command again continues. With several files the worst wins (worstOutcome).
import { setMaxListeners } from 'node:events';
import type { Outcome } from '../../../core/exit-codes.ts';
import { isTemporary, TimesealClientError } from '../errors.ts';

/** Aborted by Ctrl-C: every request, wait and hashing of the run stops. */
export const controller = new AbortController();
// Every request in flight listens to it (pinning fetches a dozen key files at once): no leak warning for that.
setMaxListeners(0, controller.signal);
process.once('SIGINT', () => controller.abort(new Error('interrupted')));

/** The outcome of a failure: bad usage, not found, temporary (not when the user interrupted the run), or failed. */
export function outcomeOfError(err: unknown): Outcome {
  if (!(err instanceof TimesealClientError)) return 'failed';
  if (err.code === 'usage') return 'usage';
  if (err.code === 'not-found') return 'not-found';
  return isTemporary(err) && !controller.signal.aborted ? 'temporary' : 'failed';
}
