// A submitted file's receipt in the drop zone (DropZone.tsx): the "Download receipt (.tsr)" link — the
// submission answer's `receipt`, base64 of a DER TimeStampResp (docs/API.md, POST /api/submit), saved as
// `<file name>.tsr` — and, folded, the OpenSSL command that checks it (docs/FORMAT.md §3b). What a receipt is,
// and the certificates, are said once above the files (DropZone.tsx), not under each.
import { useEffect, useState, type ReactElement, type ReactNode } from 'react';

/** `name` as one shell word. */
const shellWord = (name: string) => (/^[\w.+-]+$/.test(name) ? name : `'${name.replaceAll("'", `'\\''`)}'`);

export default function ReceiptOffer({
  receipt,
  name,
  hash,
  downloaded,
  onDownload,
  children,
}: {
  receipt: string;
  name: string;
  hash: string;
  downloaded: boolean;
  onDownload: () => void;
  /** Shown on the receipt's line, after the link (the drop zone's "Verify after the next ledger"). */
  children?: ReactNode;
}): ReactElement | null {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    const bytes = Uint8Array.from(atob(receipt), (c) => c.charCodeAt(0));
    const made = URL.createObjectURL(new Blob([bytes], { type: 'application/timestamp-reply' }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [receipt]);
  return (
    <div className="mt-2 flex flex-wrap items-center gap-x-3 gap-y-1 text-sm" data-testid="receipt">
      {url && (
        <a className="btn-secondary px-2 py-0.5 text-xs" href={url} download={name} onClick={onDownload}>
          Download receipt (.tsr)
        </a>
      )}
      {downloaded && (
        <span className="muted text-xs" data-testid="receipt-downloaded">
          Downloaded
        </span>
      )}
      {children}
      <details className="open:basis-full">
        <summary className="muted cursor-pointer text-xs">Check it with OpenSSL</summary>
        <code
          className="hash mt-1 block rounded bg-slate-100 px-2 py-1 select-all dark:bg-slate-800"
          data-testid="receipt-command"
        >
          openssl ts -verify -digest {hash} -in {shellWord(name)} -CAfile timeseal-tsa-root.pem -untrusted
          timeseal-tsa.pem
        </code>
      </details>
    </div>
  );
}
