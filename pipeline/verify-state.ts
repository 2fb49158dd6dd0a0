// The running state of one `timeseal verify` (pipeline/verify.ts): the findings so far (problems, notes, files
// checked) and the tree as recomputed up to the last day checked. Each check of verify.ts reads and extends this
// one state, as tessera's fsck keeps one state across its steps, so each check can be run and tested alone.
import type { DayRecord } from '../core/archive.ts';
import type { ReceiptPublicKey } from '../core/cose-receipt.ts';
import type { PublicKeySet } from '../core/day.ts';
import { equalBytes } from '../core/encoding.ts';
import type { IssuerKeys } from '../runtime/statement-policy.ts';
import type { ArchiveReader } from './archive-reader.ts';

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
  /** The first leaf whose records the index segments are checked against (a base's last verified segments'). */
  recordsFrom = 0;

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
 * A file read as a stream compared with bytes made as they are asked for, neither side held whole: `take` the
 * file's next bytes (a header checked once what follows is known), `expect` the bytes it must hold next, `end`
 * whether it holds nothing more. False from the first difference on, which releases the file (as `close` does).
 */
export class StreamComparer {
  private readonly source: AsyncIterator<Uint8Array>;
  private piece: Uint8Array = new Uint8Array(0);
  private same = true;
  private started = false;
  private closed = false;

  constructor(file: AsyncIterable<Uint8Array>) {
    this.source = file[Symbol.asyncIterator]();
  }

  /** The file's next `n` bytes (fewer at its end). */
  async take(n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    let o = 0;
    while (o < n && (await this.fill())) {
      const k = Math.min(n - o, this.piece.length);
      out.set(this.piece.subarray(0, k), o);
      this.piece = this.piece.subarray(k);
      o += k;
    }
    return out.subarray(0, o);
  }

  /** Whether the file's next bytes are `bytes` (and every bytes expected before were there). */
  async expect(bytes: Uint8Array): Promise<boolean> {
    for (let o = 0; this.same && o < bytes.length;) {
      if (!(await this.fill())) return this.differs();
      const k = Math.min(bytes.length - o, this.piece.length);
      if (!equalBytes(this.piece.subarray(0, k), bytes.subarray(o, o + k))) return this.differs();
      this.piece = this.piece.subarray(k);
      o += k;
    }
    return this.same;
  }

  /** Whether the file ended where the bytes expected did. */
  async end(): Promise<boolean> {
    if (this.same && (await this.fill())) return this.differs();
    return this.same;
  }

  /** Releases the file (leaving it unread). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A stream's iterator releases it only once started.
    if (!this.started) await this.source.next().catch(() => undefined);
    await this.source.return?.();
  }

  private async fill(): Promise<boolean> {
    while (this.piece.length === 0) {
      this.started = true;
      const next = await this.source.next();
      if (next.done) return false;
      this.piece = next.value;
    }
    return true;
  }

  private async differs(): Promise<false> {
    this.same = false;
    await this.close();
    return false;
  }
}
