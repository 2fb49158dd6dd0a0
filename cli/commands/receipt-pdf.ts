// `timeseal receipt check --pdf FILE.pdf [--archive DIR|URL|s3://…] [--keys DIR|URL] [--tsa-root FILE]`: every
// document time-stamp of a timestamped PDF (docs/FORMAT.md §3c) checked as core/pdf-check.ts says — its
// ByteRange covers the file up to its update except /Contents, the token is for the digest over it and chains
// to the TSA root — and, for a Timeseal token, its promise against the archive (pipeline/receipt.ts), as
// `timeseal receipt check` judges a .tsr. Bytes after the last time-stamp are named (a DSS update is validation
// data; anything else is not covered). The outcome: ok when every time-stamp is kept (or valid, for another
// authority's), pending when one is, failed when one is invalid or broken, or when there is no time-stamp.
import zlib from 'node:zlib';
import { checkPdfTimeStamps, type PdfCheck, type PdfTimeStampCheck } from '../../core/pdf-check.ts';
import type { Outcome } from '../../core/exit-codes.ts';
import { PdfError } from '../../core/pdf-syntax.ts';
import { openArchiveReader } from '../../pipeline/storage/open.ts';
import { checkPromise, type CheckedPromise } from '../../pipeline/receipt.ts';
import type { Context } from '../context.ts';
import { output } from '../output.ts';
import { readFile, tsaRootFor, VERDICT_OUTCOMES, verdictLine, type CheckOptions } from '../receipt-check.ts';
import { loadKeys } from './verify.ts';

const inflate = async (data: Uint8Array): Promise<Uint8Array> =>
  new Uint8Array(await new Promise<Buffer>((ok, no) => zlib.inflate(data, (e, r) => (e ? no(e) : ok(r)))));

type StampVerdict = PdfTimeStampCheck & { promise: CheckedPromise | null };

export async function checkPdf(file: string, opts: CheckOptions, c: Context): Promise<Outcome> {
  const pdf = readFile(file, 'PDF');
  const { location, keysLocation, keysFrom, root, rootFrom, timeoutMs } = await tsaRootFor(opts, c);
  const out = output(!!opts.json);
  let check: PdfCheck;
  try {
    check = await checkPdfTimeStamps(pdf, { inflate, authority: root });
  } catch (err) {
    if (!(err instanceof PdfError)) throw err;
    out.result({ state: 'invalid', pdf: file, reason: err.message }, () => [`INVALID: ${file}: ${err.message}`]);
    return 'failed';
  }
  if (check.stamps.length === 0) {
    const reason = `no document time-stamp is in it (${check.otherSignatures} other signature${check.otherSignatures === 1 ? '' : 's'})`;
    out.result({ state: 'invalid', pdf: file, reason }, () => [`INVALID: ${file}: ${reason}.`]);
    return 'failed';
  }
  const keys = check.stamps.some((s) => s.receipt !== null) ? await loadKeys(keysLocation, timeoutMs) : null;
  const reader = await openArchiveReader(location, timeoutMs);
  const verdicts: StampVerdict[] = [];
  for (const s of check.stamps)
    verdicts.push({ ...s, promise: s.receipt && keys ? await checkPromise(reader, keys, s.receipt) : null });
  const state = overall(verdicts);
  const after = check.inspection.afterLastTimeStamp;
  out.result(
    {
      state,
      pdf: file,
      bytes: check.inspection.length,
      timeStamps: verdicts.map((v) => ({
        index: v.index,
        field: v.field,
        byteRange: v.byteRange,
        revisionEnd: v.revisionEnd,
        digest: v.digest,
        state: v.state === 'invalid' ? 'invalid' : (v.promise?.state ?? 'valid'),
        reason: v.reason,
        token: v.token && {
          genTime: v.token.genTime.toISOString(),
          tsa: v.token.tsaName,
          serialNumber: v.token.serialNumber,
          policy: v.token.policy,
          chain: v.token.chain,
          root: rootFrom,
          imprintAlgorithm: v.token.imprintAlgorithm,
          imprint: Buffer.from(v.token.imprint).toString('hex'),
        },
        ledger: v.receipt && { date: v.receipt.date, hash: v.receipt.ledgerHash, archive: location },
        promise: v.promise,
      })),
      otherSignatures: check.otherSignatures,
      afterLastTimeStamp: after,
      keys: { location: keysLocation, from: keysFrom },
    },
    () => [
      `${file}: ${verdicts.length} document time-stamp${verdicts.length === 1 ? '' : 's'}${check.otherSignatures ? `, ${check.otherSignatures} other signature${check.otherSignatures === 1 ? '' : 's'}` : ''}`,
      ...verdicts.flatMap((v) => stampLines(v, rootFrom)),
      ...(after ? [`  after the last time-stamp: ${after.text}.`] : []),
      `${state.toUpperCase()}: ${summary(state, verdicts)}`,
    ],
  );
  return VERDICT_OUTCOMES[state];
}

function stampLines(v: StampVerdict, rootFrom: string): string[] {
  const head = `  time-stamp ${v.index}${v.field ? ` (field "${v.field}")` : ''}: ByteRange [${v.byteRange.join(' ')}], SHA-256 ${v.digest}`;
  if (v.state === 'invalid') return [head, `    INVALID: ${v.reason}.`];
  const t = v.token!;
  const lines = [
    head,
    `    covers the file up to byte ${v.revisionEnd} except its /Contents; the token is for that digest`,
    `    time: ${t.genTime.toISOString()} (UTC), serial ${t.serialNumber}, signed by ${t.chain.join(' → ')} (chain checked to ${rootFrom})`,
  ];
  if (v.receipt === null || v.promise === null)
    return [
      ...lines,
      `    VALID: a time-stamp of another authority (policy ${t.policy}): no Timeseal ledger promise to check.`,
    ];
  return [
    ...lines,
    `    promise: the ledger of ${v.receipt.date} holds ${v.receipt.ledgerHash}`,
    `    ${verdictLine(v.promise)}`,
  ];
}

/** The worst of the time-stamps: invalid, broken, pending, then kept or valid. */
function overall(v: StampVerdict[]): 'invalid' | 'broken' | 'pending' | 'kept' | 'valid' {
  if (v.some((s) => s.state === 'invalid')) return 'invalid';
  if (v.some((s) => s.promise?.state === 'broken')) return 'broken';
  if (v.some((s) => s.promise?.state === 'pending')) return 'pending';
  return v.some((s) => s.promise?.state === 'kept') ? 'kept' : 'valid';
}

function summary(state: ReturnType<typeof overall>, v: StampVerdict[]): string {
  const n = v.length === 1 ? 'the time-stamp' : `${v.length} time-stamps`;
  switch (state) {
    case 'invalid':
      return `${v.filter((s) => s.state === 'invalid').length} of ${v.length} time-stamps do not check.`;
    case 'broken':
      return 'a time-stamp is a Timeseal receipt whose day was published without it: evidence of a broken promise.';
    case 'pending':
      return `${n} check; a day is not published yet, so its promise is still to come.`;
    case 'kept':
      return `${n} check and every Timeseal promise is kept.`;
    case 'valid':
      return `${n} check.`;
  }
}
