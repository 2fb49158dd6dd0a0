// A dropped PDF's "Timestamp this PDF" in the drop zone (DropZone.tsx loads this chunk only for a PDF): the PDF
// is time-stamped on this device by lib/pdf-stamp.ts (loaded on the click), only the digest over its ByteRange
// is sent to POST /tsa, and the result is offered as `<name>.timestamped.pdf`. A PDF that cannot be stamped
// gets one sentence saying why; nothing is sent for it.
import { useEffect, useState, type ReactElement } from 'react';
import type { StampOutcome, StampStep } from '../lib/pdf-stamp.ts';

const STEPS: Record<StampStep, string> = {
  reading: 'Reading the PDF...',
  preparing: 'Adding the time-stamp field...',
  asking: 'Asking the time-stamp authority...',
  completing: 'Writing the time-stamp into the PDF...',
};

/** "2025-11-03 10:00:00.123 UTC" */
const utc = (iso: string) => iso.replace('T', ' ').replace('Z', ' UTC');

export default function PdfStamp({ file }: { file: File }): ReactElement | null {
  const [step, setStep] = useState<StampStep | null>(null);
  const [outcome, setOutcome] = useState<StampOutcome | null>(null);
  const [url, setUrl] = useState<string>();

  useEffect(() => {
    if (outcome?.kind !== 'stamped') return;
    const made = URL.createObjectURL(new Blob([outcome.bytes as Uint8Array<ArrayBuffer>], { type: 'application/pdf' }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [outcome]);

  const run = async () => {
    setOutcome(null);
    setStep('reading');
    const done = await import('../lib/pdf-stamp.ts').then(
      ({ stampPdfFile }) => stampPdfFile(file, setStep),
      (): StampOutcome => ({ kind: 'failed', reason: 'the PDF time-stamping code could not be loaded' }),
    );
    setStep(null);
    setOutcome(done);
  };

  return (
    <div className="mt-3 text-sm" data-testid="pdf-stamp" data-state={outcome?.kind ?? (step ? 'working' : 'offer')}>
      {!outcome && (
        <div className="flex flex-wrap items-center gap-2">
          <button type="button" className="btn-secondary px-3 py-1" disabled={step !== null} onClick={() => void run()}>
            Timestamp this PDF
          </button>
          <span className="muted text-xs" data-testid="pdf-stamp-note">
            {step ? STEPS[step] : 'Adds a document time-stamp inside the PDF, on this device: only a digest is sent.'}
          </span>
        </div>
      )}
      {outcome?.kind === 'refused' && (
        <p className="field-error" data-testid="pdf-stamp-refused">
          {outcome.reason}
        </p>
      )}
      {outcome?.kind === 'failed' && (
        <div className="flex flex-wrap items-center gap-2">
          <p className="field-error" data-testid="pdf-stamp-failed">
            The PDF was not time-stamped: {outcome.reason}.
          </p>
          <button type="button" className="btn-ghost px-2 py-1 text-xs" onClick={() => void run()}>
            Try again
          </button>
        </div>
      )}
      {outcome?.kind === 'stamped' && (
        <div
          className="rounded-lg border border-emerald-300 bg-emerald-50/60 p-3 dark:border-emerald-800 dark:bg-emerald-950/40"
          data-testid="pdf-stamp-result"
        >
          {url && (
            <a className="btn-primary px-3 py-1" href={url} download={outcome.name}>
              Download timestamped PDF
            </a>
          )}
          <p className="mt-2 text-sm">
            <span className="font-medium break-all" data-testid="pdf-stamp-name">
              {outcome.name}
            </span>
            : time-stamped{' '}
            <time dateTime={outcome.genTime} data-testid="pdf-stamp-time">
              {utc(outcome.genTime)}
            </time>
            .
          </p>
          <p className="muted mt-1 text-xs">
            A document time-stamp (RFC 3161, PAdES) signed by Timeseal's time-stamp authority is now inside the PDF; its
            original bytes are unchanged, so earlier signatures stay valid. The digest below goes into the public ledger
            of {outcome.ledgerDate}. Check the PDF on the{' '}
            <a className="link" href="/verify">
              Verify
            </a>{' '}
            page.
          </p>
          <code className="hash mt-1 block rounded bg-slate-100 px-2 py-1 dark:bg-slate-800" data-testid="pdf-digest">
            {outcome.digest}
          </code>
        </div>
      )}
    </div>
  );
}
