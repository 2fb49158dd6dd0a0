// What `timeseal receipt check` shares between its two forms (a .tsr, cli/commands/receipt.ts; a timestamped PDF,
// cli/commands/receipt-pdf.ts): the options, where the archive and keys are and the TSA root to trust, the
// verdict line of a promise and its outcome, reading a file with a person's error.
import fs from 'node:fs';
import { fromUtf8 } from '../core/encoding.ts';
import { TimesealError } from '../core/errors.ts';
import type { Outcome } from '../core/exit-codes.ts';
import { pemCertificates } from '../core/rfc3161.ts';
import { UsageError } from '../runtime/config.ts';
import { PUBLIC_TSA_ROOT_PEM } from '../runtime/keys.ts';
import { readerFor } from '../pipeline/archive-reader.ts';
import type { CheckedPromise } from '../pipeline/receipt.ts';
import { keysLocationFor } from './commands/verify.ts';
import type { Context } from './context.ts';

export interface CheckOptions {
  file?: string;
  pdf?: string;
  digest?: string;
  archive?: string;
  keys?: string;
  tsaRoot?: string;
  timeout: string;
  json?: boolean;
}

/** Where the archive and keys are, and the TSA root to trust (the keys' timeseal-tsa-root.pem or --tsa-root). */
export async function tsaRootFor(opts: CheckOptions, c: Context) {
  const timeoutMs = Number(opts.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new UsageError(`--timeout must be a whole number of milliseconds, got ${JSON.stringify(opts.timeout)}`);
  // An s3:// archive is read from its bucket, as `timeseal verify` reads it (its working copy is not what readers
  // see).
  const location = opts.archive ?? c.config.archiveStore ?? c.config.archive;
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
  return { location, keysLocation, keysFrom, root, rootFrom, timeoutMs };
}

/** The outcome of a check's verdict: kept (or valid: another authority's time-stamp, no promise) ok, pending,
 * broken or invalid failed. */
export const VERDICT_OUTCOMES = {
  kept: 'ok',
  valid: 'ok',
  pending: 'pending',
  broken: 'failed',
  invalid: 'failed',
} as const satisfies Record<string, Outcome>;

export function verdictLine(p: CheckedPromise): string {
  switch (p.state) {
    case 'kept':
      return `KEPT: the signed ledger of ${p.date} holds it at leaf ${p.leafIndex} (recorded ${p.recordedAt}); its inclusion proof (${p.proofLength} hashes) checks against the day's signed checkpoint (tree size ${p.treeSize}).`;
    case 'pending':
      return `PENDING: ${p.reason}; check again after it is published (00:01 UTC the next day).`;
    case 'broken':
      return `BROKEN: ${p.reason}.`;
  }
}

export function readFile(file: string, what: string): Uint8Array {
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
