// An archive of many published days, written fast: what a day-by-day build would leave for the paths a reader of
// recent days takes, without thousands of builds (a real build of a tiny day takes ~0.1–0.3 s here: 3,650 of
// them would take longer than the whole suite). days.json lists every day (consecutive dates, 1–5 entries a
// day, first_index chained), ots_status.json and block_info.json cover every day as the anchoring step writes
// them; the newest `signed` days also get their real files — the ledger, both detached signatures, the
// signatures metadata and the day checkpoint, signed with the archive's keys (core/ functions the build uses),
// consistent with their days.json records. Older days have no files: a reader that opened one would fail, which
// is the point — the paths under test must not touch them. Keys: runtime/keys.ts initKeys without a log origin
// (ECDSA P-256 and ML-DSA-65 checkpoint lines only).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  BLOCK_INFO_PATH,
  DAYS_PATH,
  dayCheckpointPath,
  ecdsaSignaturePath,
  encodeDays,
  ledgerPath,
  mldsaSignaturePath,
  OTS_STATUS_PATH,
  signaturesMetaPath,
  type DayRecord,
} from '../../core/archive.ts';
import { signCheckpoint } from '../../core/checkpoint.ts';
import { encodeSignaturesMeta, keyFingerprints } from '../../core/day.ts';
import { fromHex, toHex } from '../../core/encoding.ts';
import { encodeLedger } from '../../core/ledger.ts';
import { ecdsaNoteSigner, mldsaNoteSigner } from '../../core/note.ts';
import { ecdsaSignDigest, mldsaSignMu } from '../../core/sig.ts';
import type { SigningKeys } from '../../runtime/keys.ts';
import { mldsaMu, nodeSha256 } from '../../runtime/node-hash.ts';

const DAY_MS = 86_400_000;

export interface LongArchive {
  days: DayRecord[];
  /** The entries of each signed day, by date: [hash, submittedAt]. */
  entries: Map<string, Array<{ hash: string; submittedAt: string }>>;
}

/** Writes an archive of `count` consecutive days ending on `lastDate` into `archive`; the newest `signed` get files. */
export function writeLongArchive(o: {
  archive: string;
  origin: string;
  keys: SigningKeys;
  count: number;
  lastDate: string;
  signed: number;
  anchoredThrough?: string;
}): LongArchive {
  const first = Date.parse(`${o.lastDate}T00:00:00.000Z`) - (o.count - 1) * DAY_MS;
  const seed = (s: string): Buffer => crypto.createHash('sha256').update(s).digest();
  const days: DayRecord[] = [];
  const entries = new Map<string, Array<{ hash: string; submittedAt: string }>>();
  fs.mkdirSync(o.archive, { recursive: true });
  let size = 0;
  for (let i = 0; i < o.count; i++) {
    const date = new Date(first + i * DAY_MS).toISOString().slice(0, 10);
    const entryCount = 1 + (seed(date)[0]! % 5);
    const root = seed(`root ${date}`).toString('hex');
    const record: DayRecord = {
      date,
      firstIndex: size,
      entryCount,
      treeSize: size + entryCount,
      root,
      sha256: seed(`ledger ${date}`).toString('hex'),
    };
    if (i >= o.count - o.signed) {
      const list = Array.from({ length: entryCount }, (_, k) => ({
        hash: seed(`entry ${date} ${k}`).toString('hex'),
        submittedAt: new Date(first + i * DAY_MS + 3_600_000 * (k + 1)).toISOString(),
      })).sort((a, b) => (a.hash < b.hash ? -1 : 1));
      const previous = days.at(-1);
      const ledger = encodeLedger({
        origin: o.origin,
        date,
        firstIndex: size,
        treeSize: size + entryCount,
        root,
        previous: previous ? { date: previous.date, sha256: previous.sha256 } : null,
        entries: list,
      });
      const digest = nodeSha256(ledger);
      record.sha256 = toHex(digest);
      const pub = o.keys.public;
      const write = (rel: string, data: Uint8Array | string) => fs.writeFileSync(path.join(o.archive, rel), data);
      write(ledgerPath(date), ledger);
      write(ecdsaSignaturePath(date), ecdsaSignDigest(digest, o.keys.ecdsaSecret));
      write(mldsaSignaturePath(date), mldsaSignMu(mldsaMu(pub.mldsa, ledger), o.keys.mldsaSecret));
      write(signaturesMetaPath(date), encodeSignaturesMeta(date, ledger.length, record.sha256, keyFingerprints(pub)));
      write(
        dayCheckpointPath(date),
        signCheckpoint({ origin: o.origin, size: size + entryCount, root: fromHex(root) }, [
          ecdsaNoteSigner(o.origin, o.keys.ecdsaSecret, pub.ecdsa),
          mldsaNoteSigner(o.origin, o.keys.mldsaSecret, pub.mldsa),
        ]),
      );
      entries.set(date, list);
    }
    days.push(record);
    size += entryCount;
  }
  fs.writeFileSync(path.join(o.archive, DAYS_PATH), encodeDays({ origin: o.origin, days }));
  const anchored = o.anchoredThrough ?? days.at(-2)?.date ?? '';
  fs.writeFileSync(
    path.join(o.archive, OTS_STATUS_PATH),
    JSON.stringify({ latest_ots_ok: anchored, last_update: `${o.lastDate}T06:00:00.000Z`, queue_size: 0 }),
  );
  const ledgers: Record<string, { block_height: number; confirmations: number }> = {};
  days.forEach((d, i) => {
    if (d.date <= anchored)
      ledgers[d.date] = { block_height: 800_000 + i * 144, confirmations: (days.length - i) * 144 };
  });
  fs.writeFileSync(path.join(o.archive, BLOCK_INFO_PATH), JSON.stringify({ ledgers, pending: {} }));
  return { days, entries };
}
