// A submitted file's receipt in the drop zone (DropZone.tsx): the "Download receipt (.tsr)" link — the
// submission answer's `receipt`, base64 of a DER TimeStampResp (docs/API.md, POST /api/submit), saved as
// `<file name>.tsr` — what it is, and the OpenSSL command that checks it (docs/FORMAT.md §3b).
import { useEffect, useState, type ReactElement } from 'react';

/** `name` as one shell word. */
const shellWord = (name: string) => (/^[\w.+-]+$/.test(name) ? name : `'${name.replaceAll("'", `'\\''`)}'`);

export default function ReceiptOffer({
  receipt,
  name,
  hash,
}: {
  receipt: string;
  name: string;
  hash: string;
}): ReactElement | null {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    const bytes = Uint8Array.from(atob(receipt), (c) => c.charCodeAt(0));
    const made = URL.createObjectURL(new Blob([bytes], { type: 'application/timestamp-reply' }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [receipt]);
  const key = (file: string) => (
    <a className="link" href={`/keys/${file}`} download>
      {file}
    </a>
  );
  return (
    <div className="mt-3 text-sm" data-testid="receipt">
      {url && (
        <a className="btn-secondary px-3 py-1" href={url} download={name}>
          Download receipt (.tsr)
        </a>
      )}
      <p className="muted mt-2 text-xs">
        An RFC 3161 time-stamp token, signed now by Timeseal's time-stamp authority; the hash is also published in
        today's public ledger. Check it with {key('timeseal-tsa-root.pem')} and {key('timeseal-tsa.pem')}:
      </p>
      <code
        className="hash mt-1 block rounded bg-slate-100 px-2 py-1 select-all dark:bg-slate-800"
        data-testid="receipt-command"
      >
        openssl ts -verify -digest {hash} -in {shellWord(name)} -CAfile timeseal-tsa-root.pem -untrusted
        timeseal-tsa.pem
      </code>
    </div>
  );
}
