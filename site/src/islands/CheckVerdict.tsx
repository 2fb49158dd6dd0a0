// What the /verify page's receipt card (ReceiptCheck.tsx) and PDF card (PdfCheck.tsx) show alike: the tones of a
// verdict, a time in UTC, the boxed result, the note on the certificate chain's root, and a Timeseal receipt's
// promise (kept, pending, broken, or no verdict yet) in one sentence with its tone.
import type { ReactNode } from 'react';
import { formatLedgerDate } from '../lib/format.ts';
import type { PromiseResult } from '../lib/receipt-check.ts';
import { serverNow } from '../lib/server-clock.ts';

export const TSA_ROOT_URL = '/keys/timeseal-tsa-root.pem';

/** "2025-11-03 10:00:00.123 UTC" */
export const utc = (iso: string) => iso.replace('T', ' ').replace('Z', ' UTC');

export const TONES = {
  good: 'border-emerald-300 bg-emerald-50/60 dark:border-emerald-800 dark:bg-emerald-950/40',
  wait: 'border-sky-300 bg-sky-50 dark:border-sky-800 dark:bg-sky-950/40',
  bad: 'border-red-300 bg-red-50 dark:border-red-800 dark:bg-red-950/40',
  warn: 'border-amber-300 bg-amber-50 dark:border-amber-700 dark:bg-amber-950/50',
};
export type Tone = keyof typeof TONES;

/** The tone of a promise: kept good, pending waiting, broken bad, no verdict a warning. */
export function promiseTone(promise: PromiseResult | null | undefined): Tone {
  switch (promise?.state) {
    case undefined:
    case 'kept':
      return 'good';
    case 'pending':
      return 'wait';
    case 'broken':
      return 'bad';
    default:
      return 'warn';
  }
}

/** A result in its tone, announced to screen readers; `testId` and `state` for the tests. */
export function ResultBox({
  tone,
  state,
  testId,
  children,
}: {
  tone: Tone;
  state: string;
  testId: string;
  children: ReactNode;
}) {
  return (
    <div role="status" className={`mt-4 rounded-lg border p-4 ${TONES[tone]}`} data-testid={testId} data-state={state}>
      {children}
    </div>
  );
}

/** Where a token's signature and chain were checked up to: the TSA root this site publishes, or none. */
export function RootNote({ rootChecked, chain }: { rootChecked: boolean; chain?: string[] }) {
  return rootChecked ? (
    <>
      Signature and chain{chain ? ` (${chain.join(' → ')})` : ''} verified up to the{' '}
      <a className="link" href={TSA_ROOT_URL} download>
        Timeseal TSA root
      </a>{' '}
      published by this site.
    </>
  ) : (
    <>Not checked against a root: this site publishes no TSA root ({TSA_ROOT_URL}).</>
  );
}

/** The promise of a sound receipt, in one sentence (once the server's clock is known: syncServerClock). */
export function PromiseLine({ promise }: { promise: PromiseResult }) {
  const day = formatLedgerDate(promise.date);
  switch (promise.state) {
    case 'kept':
      return (
        <p data-testid="receipt-promise">
          <span className="font-semibold">Promise kept:</span> the hash is leaf #
          {promise.leafIndex.toLocaleString('en-US')} of the{' '}
          <a className="link" href={promise.ledgerUrl!} download>
            ledger of {day}
          </a>
          , recorded at {utc(promise.recordedAt)}. Your browser checked both of the ledger's signatures, ECDSA P-256 and
          ML-DSA-65.
        </p>
      );
    case 'pending': {
      const due = Date.parse(promise.dueAt) > serverNow();
      return (
        <p data-testid="receipt-promise">
          <span className="font-semibold">Pending:</span> the ledger of {day} {due ? 'will be' : 'was to be'} published
          at 00:01 UTC on {formatLedgerDate(promise.dueAt.slice(0, 10))}
          {due ? '; check again after that.' : ' and is not published yet; check again later.'}
        </p>
      );
    }
    case 'broken':
      return (
        <p data-testid="receipt-promise">
          <span className="font-semibold">This receipt is evidence of a broken promise:</span>{' '}
          {promise.reason.replace(/: the receipt is evidence of a broken promise$/, '')}.
        </p>
      );
    case 'unverified':
      return (
        <p data-testid="receipt-promise">
          <span className="font-semibold">No verdict yet:</span> the ledger of {day} is listed as published, but it
          could not be verified: {promise.reason}.
        </p>
      );
  }
}
