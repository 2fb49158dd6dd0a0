// `timeseal receipt check FILE.tsr (--file F | --digest HEX) [--archive DIR|URL] [--keys DIR|URL]`: checks a
// Timeseal receipt (an RFC 3161 token from POST /tsa or a JSON submission's `receipt`, docs/FORMAT.md §3b) — its
// signature, its chain to the TSA root (keys/timeseal-tsa-root.pem), that it is for this file or digest — and
// the promise it carries: the ledger of its day holds its ledger hash (pipeline/receipt.ts). Exit 0 kept, 2
// pending (its day is not published yet), 1 invalid or broken (its day is published without it).
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Command } from 'commander';
import { fromUtf8, toHex } from '../../core/encoding.ts';
import { TimesealError } from '../../core/errors.ts';
import { checkReceipt, digestLength, type ReceiptFacts } from '../../core/receipt.ts';
import { pemCertificates } from '../../core/rfc3161.ts';
import { UsageError } from '../../runtime/config.ts';
import { PUBLIC_TSA_ROOT_PEM } from '../../runtime/keys.ts';
import { readerFor } from '../../pipeline/archive-reader.ts';
import { checkPromise, type CheckedPromise } from '../../pipeline/receipt.ts';
import type { Context } from '../context.ts';
import { output } from '../output.ts';
import { keysLocationFor, loadKeys } from './verify.ts';

const NODE_HASH: Record<string, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

interface CheckOptions {
  file?: string;
  digest?: string;
  archive?: string;
  keys?: string;
  tsaRoot?: string;
  timeout: string;
  json?: boolean;
}

export function registerReceipt(program: Command, ctx: () => Context): void {
  const receipt = program
    .command('receipt')
    .description('Timeseal receipts: RFC 3161 tokens whose hash is published in the ledger');
  receipt
    .command('check')
    .description(
      'check a receipt (.tsr) for a file or digest, and whether the ledger of its day keeps its promise (exit 0 kept, 2 pending, 1 invalid or broken)',
    )
    .argument('<receipt>', 'the receipt: a DER TimeStampResp (.tsr)')
    .option('--file <file>', "the file the receipt is for (hashed here with the receipt's algorithm)")
    .option(
      '--digest <hex>',
      'the digest the receipt is for, hexadecimal (SHA-256, SHA-384 or SHA-512, as the receipt says)',
    )
    .option('--archive <dir-or-url>', 'archive folder or URL (default: TIMESEAL_ARCHIVE)')
    .option(
      '--keys <dir-or-url>',
      'public keys folder or URL, with timeseal-tsa-root.pem (default: TIMESEAL_KEYS, or <site>/keys/ for an archive URL)',
    )
    .option('--tsa-root <file>', 'the TSA root certificate (PEM) to trust instead of the one in the keys')
    .option('--timeout <ms>', 'deadline of each HTTP request, in milliseconds', '30000')
    .option('--json', 'machine-readable output')
    .action(async (file: string, opts: CheckOptions) => {
      if ((opts.file === undefined) === (opts.digest === undefined))
        throw new UsageError("give the receipt's file (--file F) or its digest (--digest HEX), one of them");
      if (opts.digest !== undefined && !/^[0-9a-fA-F]+$/.test(opts.digest))
        throw new UsageError(`--digest must be hexadecimal, got ${JSON.stringify(opts.digest)}`);
      const timeoutMs = Number(opts.timeout);
      if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
        throw new UsageError(`--timeout must be a whole number of milliseconds, got ${JSON.stringify(opts.timeout)}`);
      const c = ctx();
      const der = readFile(file, 'receipt');
      const location = opts.archive ?? c.config.archive;
      const { keysLocation, keysFrom } = keysLocationFor(location, opts.keys, c.config.keys);
      const keysReader = readerFor(keysLocation, timeoutMs);
      const rootPem =
        opts.tsaRoot !== undefined
          ? fs.readFileSync(opts.tsaRoot, 'utf8')
          : fromUtf8(
              (await keysReader.read(PUBLIC_TSA_ROOT_PEM)) ??
                notFound(`${PUBLIC_TSA_ROOT_PEM} not found in ${keysLocation}: give the TSA root with --tsa-root FILE`),
              PUBLIC_TSA_ROOT_PEM,
            );
      const root = pemCertificates(rootPem);
      if (root.length === 0)
        throw new TimesealError('format', `no certificate in the TSA root ${opts.tsaRoot ?? PUBLIC_TSA_ROOT_PEM}`);
      const rootFrom = opts.tsaRoot ?? `${keysLocation.replace(/\/?$/, '/')}${PUBLIC_TSA_ROOT_PEM}`;
      if (keysFrom === 'archive host' && opts.tsaRoot === undefined)
        process.stderr.write(
          `timeseal: keys: taken from ${keysLocation} on the same host as the archive: pin them with --keys DIR|URL\n`,
        );
      const out = output(!!opts.json);

      let facts: ReceiptFacts;
      try {
        const unchecked = await checkReceipt(der, root);
        facts = await checkReceipt(der, root, digestFor(unchecked.imprintAlgorithm, opts));
      } catch (err) {
        process.exitCode = 1;
        const reason = (err as Error).message;
        out.result({ state: 'invalid', receipt: file, reason }, () => [
          `INVALID: ${file} is not a sound Timeseal receipt for this ${opts.file !== undefined ? 'file' : 'digest'}: ${reason}.`,
        ]);
        return;
      }
      const keys = await loadKeys(keysLocation, timeoutMs);
      const promise = await checkPromise(readerFor(location, timeoutMs), keys, facts);
      process.exitCode = promise.state === 'kept' ? 0 : promise.state === 'pending' ? 2 : 1;
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
    });
}

function verdictLine(p: CheckedPromise): string {
  switch (p.state) {
    case 'kept':
      return `KEPT: the signed ledger of ${p.date} holds it at leaf ${p.leafIndex} (recorded ${p.recordedAt}); its inclusion proof (${p.proofLength} hashes) checks against the day's signed checkpoint (tree size ${p.treeSize}).`;
    case 'pending':
      return `PENDING: ${p.reason}; check again after it is published (00:01 UTC the next day).`;
    case 'broken':
      return `BROKEN: ${p.reason}.`;
  }
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

function readFile(file: string, what: string): Uint8Array {
  try {
    return new Uint8Array(fs.readFileSync(file));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new TimesealError(
      'not-found',
      `cannot read the ${what} ${file}${code === 'ENOENT' ? ': no such file' : `: ${(err as Error).message}`}`,
    );
  }
}

function notFound(message: string): never {
  throw new TimesealError('not-found', message);
}
