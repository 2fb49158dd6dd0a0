// The server's clock in the browser. Countdowns and "try again at" times are the server's, not the visitor's: a
// visitor's clock may be wrong, and a local server's may have been moved on purpose (`timeseal clock`,
// docs/OPERATIONS.md "The development clock"). Every answer of the server carries its time in the Date header
// (whole seconds); one HEAD request per page gives the lead of the server's clock over this one.

/** How far the server's clock is ahead of this one, ms (0 until known). */
let lead = 0;
let syncing: Promise<void> | null = null;

/**
 * Learns the lead from an answer's Date header. The header names the second the server was in, so the middle of
 * that second is taken, against the middle of the request here: within half a second and half the round trip.
 */
export function learnServerClock(res: Response, sentAt: number, receivedAt: number): void {
  const date = Date.parse(res.headers.get('date') ?? '');
  if (Number.isNaN(date)) return;
  lead = date + 500 - (sentAt + receivedAt) / 2;
}

/** The server's time now, ms since the epoch (this clock's until the first answer is known). */
export function serverNow(): number {
  return Date.now() + lead;
}

/** Asks the server for its time once per page (HEAD of this page); resolves when known, or when it failed. */
export function syncServerClock(): Promise<void> {
  syncing ??= (async () => {
    const sentAt = Date.now();
    try {
      const res = await fetch(location.pathname, { method: 'HEAD', cache: 'no-store', credentials: 'include' });
      learnServerClock(res, sentAt, Date.now());
    } catch {
      // Unreachable: this clock stands in for the server's.
    }
  })();
  return syncing;
}
