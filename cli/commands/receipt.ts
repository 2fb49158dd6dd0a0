// `timeseal receipt check FILE.tsr (--file F | --digest HEX) [--archive DIR|URL|s3://…] [--keys DIR|URL]`: checks a
// Timeseal receipt (an RFC 3161 token from POST /tsa or a JSON submission's `receipt`, docs/FORMAT.md §3b) — its
// signature, its chain to the TSA root (keys/timeseal-tsa-root.pem), that it is for this file or digest — and
// the promise it carries: the ledger of its day holds its ledger hash (pipeline/receipt.ts). The outcome: ok when
// kept, pending when its day is not published yet, failed when invalid or broken (its day is published without it).
// `timeseal receipt check --pdf FILE.pdf` checks every document time-stamp of a PDF the same way (receipt-pdf.ts).
// What the file given is comes from core/evidence.ts, the sniffer every reader uses: a timestamped PDF is checked
// as with --pdf, a COSE receipt (.receipt.cose) with the published receipt keys (receipt-cose.ts), and a kind this
// command does not check (a proof bundle, a client proof file, an .ots, a tlog-proof) gets one sentence naming
// the readers that do (failed); anything else is read as a .tsr.
import crypto from 'node:crypto';
import type { TimesealCommand } from '../command.ts';
import { toHex } from '../../core/encoding.ts';
import { isPdf, notCheckedHere, READERS, sniffEvidence } from '../../core/evidence.ts';
import { checkReceipt, digestLength, type ReceiptFacts } from '../../core/receipt.ts';
import { UsageError } from '../../runtime/config.ts';
import { openArchiveReader } from '../../pipeline/storage/open.ts';
import { checkPromise } from '../../pipeline/receipt.ts';
import type { Context } from '../context.ts';
import { output } from '../output.ts';
import { loadKeys } from './verify.ts';
import { readFile, tsaRootFor, VERDICT_OUTCOMES, verdictLine, type CheckOptions } from '../receipt-check.ts';

const NODE_HASH: Record<string, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

export function registerReceipt(program: TimesealCommand, ctx: () => Context): void {
  const receipt = program
    .command('receipt')
    .description('Timeseal receipts: RFC 3161 tokens whose hash is published in the ledger');
  receipt
    .command('check')
    .description(
      'check a receipt (.tsr) for a file or digest, and whether the ledger of its day keeps its promise (exit 0 kept, 2 pending, 1 invalid or broken)',
    )
    .argument(
      '[receipt]',
      'the receipt: a DER TimeStampResp (.tsr), a COSE receipt (.receipt.cose) or a timestamped PDF',
    )
    .option(
      '--pdf <file>',
      'check every document time-stamp of a timestamped PDF instead of a receipt (its ByteRanges, tokens and promises)',
    )
    .option('--file <file>', "the file the receipt is for (hashed here with the receipt's algorithm)")
    .option(
      '--digest <hex>',
      'the digest the receipt is for, hexadecimal (SHA-256, SHA-384 or SHA-512, as the receipt says)',
    )
    .option('--archive <dir-or-url>', 'archive folder, URL or s3://BUCKET/PREFIX (default: TIMESEAL_ARCHIVE)')
    .option(
      '--keys <dir-or-url>',
      'public keys folder or URL, with timeseal-tsa-root.pem (default: TIMESEAL_KEYS, or <site>/keys/ for an archive URL)',
    )
    .option('--tsa-root <file>', 'the TSA root certificate (PEM) to trust instead of the one in the keys')
    .option('--timeout <ms>', 'deadline of each HTTP request, in milliseconds', '30000')
    .option('--json', 'machine-readable output')
    .act(async (file: string | undefined, opts: CheckOptions) => {
      if (opts.pdf !== undefined) {
        if (file !== undefined || opts.file !== undefined || opts.digest !== undefined)
          throw new UsageError('--pdf FILE checks the time-stamps inside the PDF: give no receipt, --file or --digest');
        const { checkPdf } = await import('./receipt-pdf.ts');
        return checkPdf(opts.pdf, opts, ctx());
      }
      if (file === undefined) throw new UsageError('give the receipt (.tsr), or --pdf FILE.pdf');
      const bytes = readFile(file, 'receipt');
      const kind = sniffEvidence(bytes, file);
      // A PDF without a time-stamp given alone is checked as --pdf would: it says so, not that a --file is missing.
      if (kind === null && isPdf(bytes) && opts.file === undefined && opts.digest === undefined) {
        const { checkPdf } = await import('./receipt-pdf.ts');
        return checkPdf(file, opts, ctx());
      }
      if (kind === 'timestamped-pdf') {
        if (opts.file !== undefined || opts.digest !== undefined)
          throw new UsageError(
            `${file} is a timestamped PDF: its time-stamps are inside it; give no --file or --digest`,
          );
        const { checkPdf } = await import('./receipt-pdf.ts');
        return checkPdf(file, opts, ctx());
      }
      if (kind === 'transparent-statement') {
        const { checkTransparentStatement } = await import('./receipt-cose.ts');
        return checkTransparentStatement(file, opts, ctx());
      }
      if (kind !== null && kind !== 'receipt' && !READERS[kind].includes('cli')) {
        const reason = notCheckedHere(kind, 'cli');
        output(!!opts.json).result({ state: 'not-checked', receipt: file, kind, reason }, () => [reason]);
        return 'failed';
      }
      if ((opts.file === undefined) === (opts.digest === undefined))
        throw new UsageError("give the receipt's file (--file F) or its digest (--digest HEX), one of them");
      if (opts.digest !== undefined && !/^[0-9a-fA-F]+$/.test(opts.digest))
        throw new UsageError(`--digest must be hexadecimal, got ${JSON.stringify(opts.digest)}`);
      if (kind === 'cose-receipt') {
        const { checkCoseReceipt } = await import('./receipt-cose.ts');
        return checkCoseReceipt(file, opts, ctx());
      }
      const c = ctx();
      const der = readFile(file, 'receipt');
      const { location, keysLocation, keysFrom, root, rootFrom, timeoutMs } = await tsaRootFor(opts, c);
      const out = output(!!opts.json);

      let facts: ReceiptFacts;
      try {
        const unchecked = await checkReceipt(der, root);
        facts = await checkReceipt(der, root, digestFor(unchecked.imprintAlgorithm, opts));
      } catch (err) {
        const reason = (err as Error).message;
        out.result({ state: 'invalid', receipt: file, reason }, () => [
          `INVALID: ${file} is not a sound Timeseal receipt for this ${opts.file !== undefined ? 'file' : 'digest'}: ${reason}.`,
        ]);
        return 'failed';
      }
      const keys = await loadKeys(keysLocation, timeoutMs);
      const promise = await checkPromise(await openArchiveReader(location, timeoutMs), keys, facts);
      out.result(
        {
          state: promise.state,
          receipt: file,
          token: {
            genTime: facts.genTime.toISOString(),
            tsa: facts.tsaName,
            serialNumber: facts.serialNumber,
            chain: facts.chain,
            root: rootFrom,
            imprintAlgorithm: facts.imprintAlgorithm,
            imprint: toHex(facts.imprint),
          },
          ledger: { date: facts.date, hash: facts.ledgerHash, archive: location },
          promise,
          keys: { location: keysLocation, from: keysFrom },
        },
        () => [
          `${file}: a Timeseal receipt for ${facts.imprintAlgorithm} ${toHex(facts.imprint)}`,
          `  time: ${facts.genTime.toISOString()} (UTC), serial ${facts.serialNumber}`,
          `  signed by: ${facts.chain.join(' → ')} (chain checked to ${rootFrom})`,
          `  promise: the ledger of ${facts.date} holds ${facts.ledgerHash}`,
          verdictLine(promise),
        ],
      );
      return VERDICT_OUTCOMES[promise.state];
    });
}

/** The digest to hold the receipt to: the file's, made with the receipt's algorithm, or the one given. */
function digestFor(algorithm: string, opts: CheckOptions): Uint8Array {
  if (opts.file !== undefined)
    return new Uint8Array(crypto.createHash(NODE_HASH[algorithm]!).update(readFile(opts.file, 'file')).digest());
  const hex = opts.digest!.toLowerCase();
  if (hex.length !== 2 * digestLength(algorithm))
    throw new Error(
      `the receipt is for a ${algorithm} digest (${2 * digestLength(algorithm)} hexadecimal characters); --digest has ${hex.length}`,
    );
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
