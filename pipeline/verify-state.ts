// The running state of one `timeseal verify` (pipeline/verify.ts): the findings so far (problems, notes, files
// checked) and the tree as recomputed up to the last day checked. Each check of verify.ts reads and extends this
// one state, as tessera's fsck keeps one state across its steps, so each check can be run and tested alone.
import type { DayRecord } from '../core/archive.ts';
import type { ReceiptPublicKey } from '../core/cose-receipt.ts';
import type { PublicKeySet } from '../core/day.ts';
import { equalBytes } from '../core/encoding.ts';
import { encodeShard, hashPrefix, type ShardRecord } from '../core/index-shard.ts';
import type { IssuerKeys } from '../runtime/statement-policy.ts';
import { LedgerTooLargeError, readLedger, type ArchiveReader } from './archive-reader.ts';

export interface VerifyReport {
  ok: boolean;
  location: string;
  days: number;
  treeSize: number;
  root: string | null;
  filesChecked: number;
  problems: string[];
  /** States that are not problems: the latest checkpoint or the index head behind days.json after a stopped build. */
  notes: string[];
}

export interface VerifyOptions {
  /** keys/witnesses (pipeline/witness.ts), when published: the witnesses whose cosignatures are checked. */
  witnessPolicy?: string;
  /** keys/witnesses.retired, when published: earlier witnesses, whose cosignatures of past days are checked too. */
  retiredWitnesses?: string;
  /** keys/tsa-ca.pem (pipeline/tsa-client.ts), when published: the chain RFC 3161 tokens must lead to. */
  tsaCaPem?: string;
  /** keys/receipt-es256.pem and keys/receipt-mldsa65.pem, when published: the keys of the days' COSE receipt
   * signatures (docs/FORMAT.md §11), each checked against its day's root. */
  receiptKeys?: ReceiptPublicKey[];
  /** SCITT_ISSUER_KEYS (runtime/statement-policy.ts loadIssuerKeys), when configured: the keys each iss's
   * statements are checked with, beside an x5chain's leaf certificate and, for the log's own origin, the ES256
   * receipt keys. A statement with no key to check it with is counted in a note, not a problem. */
  issuerKeys?: IssuerKeys;
  /** What was verified before: only what came after it is checked. */
  from?: VerifiedBase;
}

/** An archive state verified before, by this code: its days are a prefix of the archive's days.json. */
export interface VerifiedBase {
  /** The days verified (days.json's first entries then). */
  days: readonly DayRecord[];
  /** The index segment files verified (those its index head named). */
  segments: ReadonlySet<string>;
  /** Days among them whose OpenTimestamps proof may have changed since (a proof still moving towards Bitcoin). */
  recheckOts: ReadonlySet<string>;
}

export class VerifyRun {
  readonly problems: string[] = [];
  readonly notes: string[] = [];
  filesChecked = 0;
  /** The tree recomputed so far: its size, and its root as lower-case hex (null before the first day). */
  size = 0;
  root: string | null = null;
  /** The last day checked, which the next day's ledger must name as its previous day. */
  previous: { date: string; sha256: string } | null = null;
  /** Each level's partial tile, by "level/index": appending reads nothing else (a full tile never changes again). */
  readonly tiles = new Map<string, Uint8Array>();
  /** The entries of the partial entry bundle, with which the next day's first bundle starts. */
  carried: Uint8Array[] = [];
  /** The ledger records the index segments are checked against (from the first leaf they must be checked from). */
  records = new RecordColumns(0);

  readonly reader: ArchiveReader;
  readonly keys: PublicKeySet;
  readonly options: VerifyOptions;

  constructor(reader: ArchiveReader, keys: PublicKeySet, options: VerifyOptions = {}) {
    this.reader = reader;
    this.keys = keys;
    this.options = options;
  }

  /** The number of days verified before (VerifyOptions.from), which are not read again. */
  get held(): number {
    return this.options.from?.days.length ?? 0;
  }

  /** A file the archive must have: its absence is a problem. */
  async read(rel: string): Promise<Uint8Array | undefined> {
    const data = await this.reader.read(rel);
    if (data === undefined) this.problems.push(`${rel}: missing`);
    else this.filesChecked++;
    return data;
  }

  /** A file the archive may lack: counted when it is there. */
  async readOptional(rel: string): Promise<Uint8Array | undefined> {
    const data = await this.reader.read(rel);
    if (data !== undefined) this.filesChecked++;
    return data;
  }

  /** A day's ledger within what `entries` entries allow (archive-reader.ts readLedger); a ledger missing or over
   * that size is a problem. */
  async readDayLedger(
    rel: string,
    origin: string,
    entries: number,
  ): Promise<{ bytes: Uint8Array; sha256: Uint8Array } | undefined> {
    let ledger;
    try {
      ledger = await readLedger(this.reader, rel, origin, entries);
    } catch (err) {
      if (!(err instanceof LedgerTooLargeError)) throw err;
      this.problems.push(err.message);
      return undefined;
    }
    if (ledger === undefined) this.problems.push(`${rel}: missing`);
    else this.filesChecked++;
    return ledger;
  }

  /** The tile `level/index` recomputed so far, cut to `width` hashes (core/tiles.ts tileHashReader's reader). */
  tile(level: number, index: number, width: number): Uint8Array {
    const t = this.tiles.get(`${level}/${index}`);
    if (!t || t.length < width * 32) throw new Error(`tile ${level}/${index} not computed`);
    return t.subarray(0, width * 32);
  }

  report(counted: Partial<Pick<VerifyReport, 'days' | 'treeSize' | 'root'>> = {}): VerifyReport {
    return {
      ok: this.problems.length === 0,
      location: this.reader.location,
      days: 0,
      treeSize: 0,
      root: null,
      filesChecked: this.filesChecked,
      problems: this.problems,
      notes: this.notes,
      ...counted,
    };
  }
}

/**
 * Every ledger entry of the archive as columns (hash bytes, submission time in ms; the leaf index is the
 * position), so that a large archive costs 40 bytes per entry rather than an object each.
 */
export class RecordColumns {
  count = 0;
  private hashes = new Uint8Array(32 * 1024);
  private ms = new Float64Array(1024);

  /** The leaf index of the first record pushed. */
  readonly base: number;

  constructor(base = 0) {
    this.base = base;
  }

  push(hash: Uint8Array, submittedMs: number): void {
    if (this.count === this.ms.length) {
      const hashes = new Uint8Array(this.hashes.length * 2);
      hashes.set(this.hashes);
      this.hashes = hashes;
      const ms = new Float64Array(this.ms.length * 2);
      ms.set(this.ms);
      this.ms = ms;
    }
    this.hashes.set(hash, 32 * this.count);
    this.ms[this.count++] = submittedMs;
  }

  /**
   * The records of leaves [from, to) grouped by the first `bits` bits of their hash (a counting sort on the
   * prefix), each group sorted by (hash, leaf index); a group's shard is encoded when asked for, not kept.
   */
  byShard(
    from: number,
    to: number,
    bits: number,
  ): { bits: number; counts: Uint32Array; encode(prefix: number): Uint8Array } {
    const { hashes, ms, base } = this;
    from -= base;
    to -= base;
    const prefixOf = (i: number) => hashPrefix(hashes, 32 * i, bits);
    const starts = new Uint32Array(2 ** bits + 1);
    for (let i = from; i < to; i++) starts[prefixOf(i) + 1]!++;
    for (let p = 1; p < starts.length; p++) starts[p]! += starts[p - 1]!;
    const order = new Uint32Array(to - from);
    const next = starts.slice(0, -1);
    for (let i = from; i < to; i++) order[next[prefixOf(i)]!++] = i;
    const compare = (a: number, b: number): number => {
      for (let k = 0; k < 32; k++) {
        const d = hashes[32 * a + k]! - hashes[32 * b + k]!;
        if (d !== 0) return d;
      }
      return a - b;
    };
    for (let p = 0; p + 1 < starts.length; p++)
      if (starts[p + 1]! - starts[p]! > 1) order.subarray(starts[p], starts[p + 1]).sort(compare);
    const counts = new Uint32Array(2 ** bits);
    for (let p = 0; p < counts.length; p++) counts[p] = starts[p + 1]! - starts[p]!;
    return {
      bits,
      counts,
      encode: (prefix) => {
        const group: ShardRecord[] = [];
        for (const i of order.subarray(starts[prefix], starts[prefix + 1])) {
          group.push({ hash: hashes.subarray(32 * i, 32 * i + 32), leafIndex: base + i, submittedMs: ms[i]! });
        }
        return encodeShard(group);
      },
    };
  }
}

/** Whether the bytes of `file` are exactly those produced in `chunks`, neither side held whole. */
export async function sameAsChunks(
  file: AsyncIterable<Uint8Array>,
  chunks: Iterable<string | Uint8Array>,
): Promise<boolean> {
  const text = chunks[Symbol.iterator]();
  let expected: Uint8Array = new Uint8Array(0);
  for await (const piece of file) {
    for (let offset = 0; offset < piece.length;) {
      if (expected.length === 0) {
        const next = text.next();
        if (next.done) return false;
        expected = Buffer.from(next.value);
        continue;
      }
      const n = Math.min(expected.length, piece.length - offset);
      if (!equalBytes(piece.subarray(offset, offset + n), expected.subarray(0, n))) return false;
      offset += n;
      expected = expected.subarray(n);
    }
  }
  if (expected.length > 0) return false;
  for (let next = text.next(); !next.done; next = text.next()) if (next.value.length > 0) return false;
  return true;
}
