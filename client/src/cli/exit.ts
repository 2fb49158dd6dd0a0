// How a run of the command line ends: its exit code, and the cancellation every command listens to (Ctrl-C).
// Exit codes: 0 complete (or done), 2 pending (valid so far), 1 invalid or error (bad usage too), 3 not found,
// 75 temporary (stamp and upgrade: the server could not be reached, the connection broke, or it answered 429 or
// 5xx; what it acknowledged is saved, and running the same command again continues). With several files the
// worst wins: 1, then 75, then 3, then 2.
import { setMaxListeners } from 'node:events';

/** 75 is sysexits.h's EX_TEMPFAIL: a temporary failure, the user is invited to try again. */
export type Exit = 0 | 1 | 2 | 3 | 75;
export const TEMPORARY = 75;
/** The exit code of many results: 1 before 75 before 3 before 2 before 0. */
export const worst = (codes: Exit[]): Exit => ([1, TEMPORARY, 3, 2] as const).find((c) => codes.includes(c)) ?? 0;

/** Aborted by Ctrl-C: every request, wait and hashing of the run stops. */
export const controller = new AbortController();
// Every request in flight listens to it (pinning fetches a dozen key files at once): no leak warning for that.
setMaxListeners(0, controller.signal);
process.once('SIGINT', () => controller.abort(new Error('interrupted')));
