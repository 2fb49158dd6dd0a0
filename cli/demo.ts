// `timeseal serve --demo` (`make start`): on an archive with no published day, publish a first
// demonstration ledger for yesterday holding a few sample hashes and the SHA-256 of the project's own sealed
// disclosure document (docs/sealed-disclosure.md), so a newcomer can search, download and verify at once.
// Production (`timeseal serve` without --demo) never calls this: it never invents ledgers.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readState } from '../pipeline/archive-state.ts';
import { buildLedgers, type DayBuild } from '../pipeline/build.ts';
import type { Context } from './context.ts';
import type { Submission } from '../store/store.ts';

export const DISCLOSURE_DOCUMENT = path.resolve(import.meta.dirname, '../docs/sealed-disclosure.md');

/** Texts whose SHA-256 hashes are the demonstration's sample submissions. */
export const SAMPLE_TEXTS = [
  'Hello, Timeseal!',
  'Timeseal demonstration: a lab notebook page',
  'Timeseal demonstration: a design draft',
  'Timeseal demonstration: a contract version',
];

const sha256Hex = (data: string | Uint8Array): string => crypto.createHash('sha256').update(data).digest('hex');

/** The demonstration's hashes: the disclosure document first, then the samples. */
export function demoHashes(): string[] {
  return [sha256Hex(fs.readFileSync(DISCLOSURE_DOCUMENT)), ...SAMPLE_TEXTS.map(sha256Hex)];
}

/** Publishes yesterday's demonstration ledger when nothing is published yet; returns null otherwise. */
export async function publishDemo(c: Context): Promise<DayBuild[] | null> {
  if (readState(c.config.archive, c.config.logOrigin).days.length > 0) return null;
  const now = c.clock();
  const yesterday = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1);
  const rows: Submission[] = demoHashes().map((hash, i) => ({
    hash,
    submittedAt: new Date(yesterday + (9 + 3 * i) * 3_600_000),
    source: 'demo',
  }));
  const store = await c.store();
  await store.submissions.enqueue(rows);
  return buildLedgers({ config: c.config, store, clock: c.clock, keys: c.signingKeys(), progress: c.progress });
}
