// Time left to the next ledger generation at 00:01 UTC (docs/OPERATIONS.md §1), ticking each second.
import { useEffect, useState } from 'react';
import { formatCountdown, msUntilNextLedger } from '../lib/format.ts';

export default function Countdown({ className = '' }: { className?: string }) {
  // null until mounted: the static HTML cannot know the visitor's time (and must match the first render).
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const id = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(id);
  }, []);
  return (
    <span className={`font-mono tabular-nums ${className}`} data-testid="countdown" role="timer" aria-live="off">
      {now === null ? '--:--:--' : formatCountdown(msUntilNextLedger(now))}
    </span>
  );
}
