// A day's files (docs/FORMAT.md §3–§4): the ledger and its detached signatures, the signature metadata, the
// day's checkpoint with the witnesses' .cosignatures lines, the RFC 3161 tokens, the chain to the previous day,
// and whether the document is listed.
import {
  dayCheckpointPath,
  ecdsaSignaturePath,
  ledgerPath,
  mldsaSignaturePath,
  signaturesMetaPath,
} from '../../../../core/archive.ts';
import { verifyDayFiles } from '../../../../core/day.ts';
import { concatBytes } from '../../../../core/encoding.ts';
import { parseNote } from '../../../../core/note.ts';
import { ecdsaVerify } from '../../../../core/sig.ts';
import type { ClassifiedInput } from '../inputs.ts';
import { witnessReadyLines } from './checkpoint.ts';
import { mldsaVerify, muOf, sha256Of, tokenChecks, type Context } from './context.ts';
import { attempt, fail, info, NO_ECDSA, NO_MLDSA, ok, pending, short, type Check, type Section } from './report.ts';

export interface Day {
  date: string;
  ledger?: Context['ledgers'][number];
  ecdsa?: ClassifiedInput;
  mldsa?: ClassifiedInput;
  meta?: ClassifiedInput;
  checkpoint?: ClassifiedInput;
  tokens?: ClassifiedInput[];
  /** The witnesses' lines of the day's checkpoint (YYYY-MM-DD.cosignatures), checked as part of it. */
  cosignatures?: ClassifiedInput;
}

export function daySection(ctx: Context, day: Day, days: Map<string, Day>): Section {
  const { date } = day;
  const title = `Ledger ${date}`;
  const checks: Check[] = [];
  const ledgerBytes = day.ledger?.input.bytes;
  if (!ledgerBytes) {
    return {
      title,
      checks: [pending('Ledger file', `${ledgerPath(date)} is missing: add it to check its signatures`)],
    };
  }
  const { ecdsa, mldsa } = ctx.keys;
  const sigCheck = (
    label: string,
    file: ClassifiedInput | undefined,
    path: string,
    key: Uint8Array | undefined,
    missingKey: string,
    verify: (m: Uint8Array, s: Uint8Array, k: Uint8Array) => boolean,
  ): Check => {
    if (!file) return pending(label, `${path} is missing`);
    if (!key) return pending(label, missingKey);
    return verify(ledgerBytes, file.bytes, key)
      ? ok(label, [`${file.name} over ${day.ledger!.input.name}`])
      : fail(label, `${file.name}: signature does not verify`);
  };
  checks.push(sigCheck('ECDSA P-256 signature', day.ecdsa, ecdsaSignaturePath(date), ecdsa, NO_ECDSA, ecdsaVerify));
  checks.push(sigCheck('ML-DSA-65 signature', day.mldsa, mldsaSignaturePath(date), mldsa, NO_MLDSA, mldsaVerify));
  const missing = [
    day.ecdsa ? '' : ecdsaSignaturePath(date),
    day.mldsa ? '' : mldsaSignaturePath(date),
    day.meta ? '' : signaturesMetaPath(date),
    day.checkpoint ? '' : dayCheckpointPath(date),
  ].filter(Boolean);
  const wholeLabel = "Ledger format, signature metadata and the day's checkpoint";
  if (missing.length > 0) checks.push(pending(wholeLabel, `missing ${missing.join(', ')}`));
  else if (!ecdsa || !mldsa) checks.push(pending(wholeLabel, !ecdsa ? NO_ECDSA : NO_MLDSA));
  else {
    checks.push(
      attempt(wholeLabel, () => {
        const v = verifyDayFiles(
          date,
          {
            ledger: ledgerBytes,
            ecdsaSignature: day.ecdsa!.bytes,
            mldsaSignature: day.mldsa!.bytes,
            signaturesMeta: day.meta!.bytes,
            checkpoint: day.checkpoint!.bytes,
          },
          { ecdsa, mldsa },
          { hasher: sha256Of, mu: muOf },
        );
        ctx.verified.set(date, v.ledger);
        return [
          `${v.ledger.entries.length} hashes, leaves ${v.ledger.firstIndex}–${v.ledger.treeSize - 1}`,
          `Root ${v.ledger.root}`,
          `Ledger SHA-256 ${v.sha256}`,
        ];
      }),
    );
    const origin = day.ledger?.ledger?.origin;
    const cosigned = day.cosignatures
      ? concatBytes(day.checkpoint!.bytes, day.cosignatures.bytes)
      : day.checkpoint!.bytes;
    if (day.cosignatures)
      checks.push(attempt(`Cosignature lines ${day.cosignatures.name}`, () => void parseNote(cosigned)));
    if (origin !== undefined) checks.push(...witnessReadyLines(cosigned, origin, ctx));
  }
  checks.push(
    ...tokenChecks(
      ctx,
      (day.tokens ?? []).map((t) => ({ name: t.name, der: t.bytes })),
      day.ledger!.sha256,
    ),
  );
  const ledger = day.ledger?.ledger;
  if (ledger) {
    if (ledger.previous === null) checks.push(info('Chain to the previous day', 'this is the first day of the log'));
    else {
      const prev = days.get(ledger.previous.date)?.ledger;
      if (!prev) {
        checks.push(
          info(
            'Chain to the previous day',
            `names ${ledgerPath(ledger.previous.date)} with SHA-256 ${short(ledger.previous.sha256)}; add that file to check the chain`,
          ),
        );
      } else {
        checks.push(
          prev.sha256 === ledger.previous.sha256
            ? ok('Chain to the previous day', [`${prev.input.name} has the SHA-256 this ledger names: ${prev.sha256}`])
            : fail(
                'Chain to the previous day',
                `${prev.input.name} has SHA-256 ${prev.sha256}, but this ledger names ${ledger.previous.sha256}`,
              ),
        );
      }
    }
    const doc = ctx.inputs.document;
    if (doc) {
      const i = ledger.entries.findIndex((e) => e.hash === doc.hash);
      checks.push(
        i >= 0
          ? info(
              'Your document in this ledger',
              `listed: submitted ${ledger.entries[i]!.submittedAt}, leaf ${ledger.firstIndex + i}`,
            )
          : info('Your document in this ledger', 'not listed in this day'),
      );
    }
  }
  return { title, checks };
}
