// Releasing the offline verifier (site/offline-verifier/README.md): the built page is listed with its SHA-256 in the archive's
// mutable file `offline-verifier.json`, so people can check the copy they hold, and its SHA-256 is enqueued as
// an ordinary submission, so each release is itself timestamped in the next daily ledger (and anchored to
// Bitcoin with it). Idempotent: releasing the same bytes again changes nothing and enqueues nothing.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { VERIFIER_ARCHIVE_PATH } from '../core/archive.ts';
import { FormatError } from '../core/errors.ts';
import { utcDate } from '../core/ledger.ts';
import type { Store } from '../store/store.ts';
import { writeMutable } from './files.ts';

export const VERIFIER_RELEASES_FORMAT = 'timeseal-offline-verifier/1';

export interface VerifierRelease {
  version: string;
  sha256: string;
  size: number;
  /** When its SHA-256 was enqueued; it appears in the ledger of `ledger_date`. */
  submitted_at: string;
  ledger_date: string;
}

export interface VerifierReleases {
  format: typeof VERIFIER_RELEASES_FORMAT;
  file: string;
  releases: VerifierRelease[];
}

export interface ReleaseOptions {
  /** The built page, e.g. dist/site/offline-verifier.html. */
  file: string;
  /** The archive folder (TIMESEAL_ARCHIVE). */
  archive: string;
  store: Store;
  now: Date;
}

/** The version the page declares in <meta name="generator" content="Timeseal offline verifier X">. */
export function verifierVersion(html: string): string {
  const m = /<meta name="generator" content="Timeseal offline verifier ([0-9A-Za-z.+-]+)">/.exec(html);
  if (!m)
    throw new FormatError(
      'offline verifier',
      'no <meta name="generator" content="Timeseal offline verifier VERSION"> in the page',
    );
  return m[1]!;
}

export function readVerifierReleases(archive: string): VerifierReleases {
  const file = path.join(archive, VERIFIER_ARCHIVE_PATH);
  if (!fs.existsSync(file)) return { format: VERIFIER_RELEASES_FORMAT, file: 'offline-verifier.html', releases: [] };
  const value = JSON.parse(fs.readFileSync(file, 'utf8')) as VerifierReleases;
  if (value.format !== VERIFIER_RELEASES_FORMAT || !Array.isArray(value.releases)) {
    throw new FormatError(VERIFIER_ARCHIVE_PATH, `expected format "${VERIFIER_RELEASES_FORMAT}" with a releases list`);
  }
  return value;
}

/**
 * Lists the built verifier in `archive/offline-verifier.json` and enqueues its SHA-256 (source "import", file
 * name "offline-verifier.html <version>"). Returns the release and whether it was new.
 */
export async function releaseVerifier(options: ReleaseOptions): Promise<{ release: VerifierRelease; added: boolean }> {
  const bytes = fs.readFileSync(options.file);
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  const version = verifierVersion(bytes.toString('utf8'));
  const current = readVerifierReleases(options.archive);
  const existing = current.releases.find((r) => r.sha256 === sha256);
  if (existing) return { release: existing, added: false };
  const release: VerifierRelease = {
    version,
    sha256,
    size: bytes.length,
    submitted_at: options.now.toISOString(),
    ledger_date: utcDate(options.now),
  };
  // Enqueue first: a listed release is always one whose hash is committed to the queue.
  await options.store.submissions.enqueue([
    { hash: sha256, submittedAt: options.now, fileName: `offline-verifier.html ${version}`, source: 'import' },
  ]);
  const next: VerifierReleases = { ...current, releases: [...current.releases, release] };
  writeMutable(options.archive, VERIFIER_ARCHIVE_PATH, `${JSON.stringify(next, null, 2)}\n`);
  return { release, added: true };
}
