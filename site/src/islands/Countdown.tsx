// Time left to the next ledger generation at 00:01 UTC (docs/OPERATIONS.md §1) by the server's clock
// (lib/server-clock.ts), ticking each second.
import { useEffect, useState } from 'react';
import { formatCountdown, msUntilNextLedger } from '../lib/format.ts';
import { serverNow, syncServerClock } from '../lib/server-clock.ts';

export default function Countdown({ className = '' }: { className?: string }) {
  // null until the server's time is known: the static HTML cannot know it (and must match the first render).
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    let id: ReturnType<typeof setInterval> | undefined;
    let live = true;
    void syncServerClock().then(() => {
      if (!live) return;
      setNow(serverNow());
      id = setInterval(() => setNow(serverNow()), 1000);
    });
    return () => {
      live = false;
      clearInterval(id);
    };
  }, []);
  return (
    <span className={`font-mono tabular-nums ${className}`} data-testid="countdown" role="timer" aria-live="off">
      {now === null ? '--:--:--' : formatCountdown(msUntilNextLedger(now))}
    </span>
  );
}
