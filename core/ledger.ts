// The day's ledger file (docs/FORMAT.md §3): canonical JSON, byte-stable. `parseLedger` is strict: a file is
// accepted only if re-encoding what it parsed gives back the same bytes, so there is exactly one valid
// encoding of every ledger.
import {
  compareHashAt,
  concatBytes,
  equalBytes,
  fromHex,
  fromUtf8,
  lowerHexValue,
  utf8,
  writeHex,
} from './encoding.ts';
import { FormatError, MismatchError } from './errors.ts';

export const LEDGER_FORMAT = 'timeseal-ledger/1';

export interface LedgerEntry {
  /** Lower-case 64-hex SHA-256 submitted by the user. */
  hash: string;
  /** Earliest submission time of this hash on this day, ISO-8601 UTC with milliseconds. */
  submittedAt: string;
}

export interface LedgerPrevious {
  date: string;
  sha256: string;
}

export interface Ledger {
  origin: string;
  date: string;
  firstIndex: number;
  treeSize: number;
  /** Root of the whole log at `treeSize`, lower-case hex. */
  root: string;
  previous: LedgerPrevious | null;
  entries: LedgerEntry[];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const LOWER_HASH = /^[0-9a-f]{64}$/;

/** True for a real calendar date written YYYY-MM-DD (2025-02-30 is not one). */
export function isDate(text: string): boolean {
  if (!DATE.test(text)) return false;
  const d = new Date(`${text}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text;
}

/** True for an ISO-8601 UTC instant with milliseconds that round-trips through Date. */
export function isIsoTime(text: string): boolean {
  if (!TIME.test(text)) return false;
  const d = new Date(text);
  return !Number.isNaN(d.getTime()) && d.toISOString() === text;
}

/** The UTC date (YYYY-MM-DD) of an instant: the ledger a submission at that time belongs to. */
export function utcDate(time: Date | number): string {
  return new Date(time).toISOString().slice(0, 10);
}

function header(ledger: LedgerHeader, entryCount: number): string {
  const previous =
    ledger.previous === null
      ? 'null'
      : `{"date":${JSON.stringify(ledger.previous.date)},"sha256":${JSON.stringify(ledger.previous.sha256)}}`;
  return (
    `{"format":"${LEDGER_FORMAT}","origin":${JSON.stringify(ledger.origin)},"date":"${ledger.date}",` +
    `"first_index":${ledger.firstIndex},"entry_count":${entryCount},"tree_size":${ledger.treeSize},` +
    `"root":"${ledger.root}","previous":${previous},"entries":[`
  );
}

/** A ledger without its entries: what the columnar encoder takes beside the entry columns. */
export type LedgerHeader = Omit<Ledger, 'entries'>;

/** Validates the semantic rules every ledger obeys; throws FormatError naming the field. */
export function checkLedger(ledger: Ledger): void {
  checkHeader(ledger, ledger.entries.length);
  let last = '';
  ledger.entries.forEach((entry, i) => {
    if (!LOWER_HASH.test(entry.hash)) throw new FormatError(`entries[${i}].hash`, 'must be 64 lower-case hex digits');
    if (entry.hash <= last) {
      throw new FormatError(`entries[${i}].hash`, 'entries must be sorted by hash without duplicates');
    }
    last = entry.hash;
    checkEntryTime(ledger.date, entry.submittedAt, i);
  });
}

function checkEntryTime(date: string, time: string, i: number): void {
  // The date part equals the (already validated) ledger date, and TIME bounds the clock fields.
  if (!TIME.test(time) || !time.startsWith(date)) {
    throw new FormatError(`entries[${i}].submitted_at`, `must be an ISO time on ${date}`);
  }
}

function checkHeader(ledger: LedgerHeader, entryCount: number): void {
  if (typeof ledger.origin !== 'string' || ledger.origin.length === 0 || /[\s+]/.test(ledger.origin)) {
    throw new FormatError('origin', 'must be non-empty without spaces or "+"');
  }
  if (!isDate(ledger.date)) throw new FormatError('date', `not a YYYY-MM-DD date: ${String(ledger.date)}`);
  if (!Number.isSafeInteger(ledger.firstIndex) || ledger.firstIndex < 0) {
    throw new FormatError('first_index', 'must be a non-negative integer');
  }
  if (ledger.firstIndex + entryCount !== ledger.treeSize) {
    throw new MismatchError('tree_size', String(ledger.firstIndex + entryCount), String(ledger.treeSize));
  }
  if (!LOWER_HASH.test(ledger.root)) throw new FormatError('root', 'must be 64 lower-case hex digits');
  if (ledger.previous !== null) {
    if (!isDate(ledger.previous.date) || ledger.previous.date >= ledger.date) {
      throw new FormatError('previous.date', 'must be a date before the ledger date');
    }
    if (!LOWER_HASH.test(ledger.previous.sha256)) {
      throw new FormatError('previous.sha256', 'must be 64 lower-case hex digits');
    }
  }
}

const LINE = 2 + 64 + 3 + 24 + 2; // ["<hash>","<time>"]

/** The canonical bytes of a ledger (docs/FORMAT.md §3). */
export function encodeLedger(ledger: Ledger): Uint8Array {
  checkLedger(ledger);
  const hashes = new Uint8Array(32 * ledger.entries.length);
  ledger.entries.forEach((e, i) => hashes.set(fromHex(e.hash, `entries[${i}].hash`), 32 * i));
  return encodeLedgerColumns(
    ledger,
    hashes,
    ledger.entries.map((e) => e.submittedAt),
  );
}

/**
 * The same bytes from columns: `hashes` holds the entries' 32-byte hashes back to back and `times` their
 * submission times, as ISO strings or as epoch milliseconds on the ledger's date (written as Date#toISOString
 * would write them), so a writer with a million entries needs no object or string per entry. Validated like
 * encodeLedger. One buffer of the whole file; encodeLedgerChunks writes it a batch at a time.
 */
export function encodeLedgerColumns(
  head: LedgerHeader,
  hashes: Uint8Array,
  times: readonly string[] | Float64Array,
): Uint8Array {
  const n = times.length;
  if (hashes.length !== n * 32) throw new FormatError('entries', `${hashes.length} hash bytes for ${n} times`);
  const chunks = [...encodeLedgerChunks(head, n, [{ hashes, times }])];
  const out = new Uint8Array(chunks.reduce((sum, c) => sum + c.length, 0));
  let o = 0;
  for (const chunk of chunks) {
    out.set(chunk, o);
    o += chunk.length;
  }
  return out;
}

/** A batch of a ledger's entries in order: hashes (32 bytes each, back to back) and their times (see
 * encodeLedgerColumns). */
export interface LedgerBatch {
  hashes: Uint8Array;
  times: readonly string[] | Float64Array;
}

/**
 * The canonical bytes of a ledger of `count` entries given in batches, in pieces (the header, one piece a batch,
 * the end), so that a writer of a day of any size holds one batch's bytes at a time; together they are exactly
 * encodeLedgerColumns's bytes. Validated as it goes (sorted without duplicates across batches, times on the
 * day, `count` entries in all): a generator that threw has yielded a prefix only, never a whole file.
 */
export function* encodeLedgerChunks(
  head: LedgerHeader,
  count: number,
  batches: Iterable<LedgerBatch>,
): Generator<Uint8Array> {
  yield encodeLedgerHeader(head, count);
  yield* encodeLedgerBody(head, count, batches);
}

/** The first piece of encodeLedgerChunks: the header line, up to and with the newline after `"entries":[`. */
export function encodeLedgerHeader(head: LedgerHeader, count: number): Uint8Array {
  checkHeader(head, count);
  const top = utf8(header(head, count));
  const start = new Uint8Array(top.length + 1);
  start.set(top, 0);
  start[top.length] = 0x0a;
  return start;
}

/** A root of the right form (64 lower-case hex digits) for what does not depend on the root's value. */
const ANY_ROOT = '0'.repeat(64);

/**
 * The byte length of encodeLedgerHeader(head, count) for every root: the root is always 64 hex digits and the
 * other fields are known before the tree is hashed, so a writer knows where the entries begin before it knows
 * the root.
 */
export function ledgerHeaderLength(head: Omit<LedgerHeader, 'root'>, count: number): number {
  return encodeLedgerHeader({ ...head, root: ANY_ROOT }, count).length;
}

/**
 * The pieces of encodeLedgerChunks after the header (one a batch, then the end), which do not depend on the root:
 * written at ledgerHeaderLength's offset, they and the header are the whole file. Validated as encodeLedgerChunks.
 */
export function* encodeLedgerBody(
  head: Omit<LedgerHeader, 'root'>,
  count: number,
  batches: Iterable<LedgerBatch>,
): Generator<Uint8Array> {
  checkHeader({ ...head, root: ANY_ROOT }, count);
  const dayStart = Date.parse(`${head.date}T00:00:00.000Z`);
  const datePart = Uint8Array.from(`${head.date}T`, (c) => c.charCodeAt(0));
  const last = new Uint8Array(32);
  let i = 0;
  for (const { hashes, times } of batches) {
    const n = times.length;
    if (hashes.length !== n * 32) throw new FormatError('entries', `${hashes.length} hash bytes for ${n} times`);
    if (i + n > count) throw new FormatError('entries', `more than the ${count} entries announced`);
    // Each hash after the one before it (the last of the batch before for the first), compared in place.
    for (let k = 0; k < n; k++) {
      const after =
        k > 0 ? compareHashAt(hashes, 32 * k, hashes, 32 * (k - 1)) : i > 0 ? compareHashAt(hashes, 0, last, 0) : 1;
      if (after <= 0) {
        throw new FormatError(`entries[${i + k}].hash`, 'entries must be sorted by hash without duplicates');
      }
    }
    const first = i;
    const out = new Uint8Array(n * LINE + n * 2 - (first === 0 && n > 0 ? 2 : 0));
    const write =
      times instanceof Float64Array
        ? (o: number, t: number, k: number): void => {
            const ms = times[k]! - dayStart;
            if (!Number.isInteger(ms) || ms < 0 || ms >= 86_400_000) {
              throw new FormatError(`entries[${first + k}].submitted_at`, `must be an ISO time on ${head.date}`);
            }
            writeHex(hashes, 32 * k, 32 * k + 32, out, o);
            out.set(datePart, t);
            writeClock(out, t + 11, ms);
          }
        : (o: number, t: number, k: number): void => {
            const time = times[k]!;
            checkEntryTime(head.date, time, first + k);
            writeHex(hashes, 32 * k, 32 * k + 32, out, o);
            for (let c = 0; c < 24; c++) out[t + c] = time.charCodeAt(c);
          };
    writeEntries(out, first, n, write);
    if (n > 0) last.set(hashes.subarray(32 * (n - 1), 32 * n));
    i += n;
    yield out;
  }
  if (i !== count) throw new FormatError('entries', `${i} entries for the ${count} announced`);
  yield utf8(count ? '\n]}\n' : ']}\n');
}

/** HH:MM:SS.mmmZ of `ms` milliseconds after midnight, as ASCII at `at` (13 bytes). */
function writeClock(out: Uint8Array, at: number, ms: number): void {
  const two = (v: number, p: number): void => {
    out[p] = 0x30 + Math.floor(v / 10);
    out[p + 1] = 0x30 + (v % 10);
  };
  two(Math.floor(ms / 3_600_000), at);
  out[at + 2] = 0x3a;
  two(Math.floor(ms / 60_000) % 60, at + 3);
  out[at + 5] = 0x3a;
  two(Math.floor(ms / 1000) % 60, at + 6);
  out[at + 8] = 0x2e;
  const milli = ms % 1000;
  out[at + 9] = 0x30 + Math.floor(milli / 100);
  two(milli % 100, at + 10);
  out[at + 12] = 0x5a;
}

/** Entries are ASCII of fixed length, so they go straight into one buffer whatever their number.
 * `entry(hashAt, timeAt, k)` writes entry k's 64 hex digits at `hashAt` and its 24-byte time at `timeAt`.
 * Entry `first` + k is the ledger's; every entry but the ledger's first follows ",\n". */
function writeEntries(
  out: Uint8Array,
  first: number,
  n: number,
  entry: (hashAt: number, timeAt: number, k: number) => void,
): void {
  let o = 0;
  const ascii = (text: string): void => {
    for (let i = 0; i < text.length; i++) out[o++] = text.charCodeAt(i);
  };
  for (let k = 0; k < n; k++) {
    if (first + k > 0) ascii(',\n');
    ascii('["');
    entry(o, o + 67, k);
    o += 64;
    ascii('","');
    o += 24;
    ascii('"]');
  }
}

function field<T>(obj: Record<string, unknown>, name: string, check: (v: unknown) => v is T, what: string): T {
  const value = obj[name];
  if (!check(value)) throw new FormatError(name, `expected ${what}`);
  return value;
}
const isString = (v: unknown): v is string => typeof v === 'string';
const isInt = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** A parsed ledger in columns: no object or string per entry. */
export interface LedgerColumns {
  head: LedgerHeader;
  /** The entries' hashes, 32 bytes each, back to back, in ledger (sorted) order. */
  hashes: Uint8Array;
  /** Each entry's submission time in epoch milliseconds (its text is `new Date(ms).toISOString()`). */
  ms: Float64Array;
}

/** ASCII codes of the fixed parts of a canonical ledger. */
const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const ENTRIES_OPEN = ascii('"entries":[\n');
const OPEN = ascii('["');
const MIDDLE = ascii('","');
const CLOSE = ascii('"]');
const NEXT = ascii(',\n');
const COLON = ascii(':');
const DOT = ascii('.');
const ZULU = ascii('Z');
const NEWLINE = ascii('\n');
const END = ascii(']}\n');

/**
 * Strict parse into columns, for readers of very large days: it accepts exactly the bytes `parseLedger`
 * accepts (the canonical encoding, docs/FORMAT.md §3), but reads the entries straight from their fixed-width
 * lines instead of through JSON.parse, so its memory is the columns (40 bytes an entry) and not an object and
 * two strings an entry. The header is parsed as JSON and must re-encode to the same bytes.
 */
export function parseLedgerColumns(bytes: Uint8Array): LedgerColumns {
  const reader = new LedgerReader({ columns: true, totalBytes: bytes.length });
  reader.push(bytes);
  return reader.end();
}

const notCanonical = (): FormatError => new FormatError('ledger', 'not in canonical encoding (docs/FORMAT.md §3)');

/**
 * parseLedgerColumns a piece at a time, for a ledger read from disk or the network without holding it: `push`
 * the bytes in order (pieces of any size), then `end` gives the header and, with `columns`, the entries' columns
 * (without, it keeps two hashes and checks the same rules: a day of any size in constant memory). Throws the
 * FormatError parseLedgerColumns would at the first byte that shows it (a `totalBytes` given up front is checked
 * once the header is read, as the whole file's length is there).
 */
export class LedgerReader {
  private readonly keepColumns: boolean;
  private readonly totalBytes: number | undefined;
  private head: LedgerHeader | undefined;
  private n = 0;
  /** Entries read so far. */
  private i = 0;
  /** Bytes of an unfinished entry, carried to the next push. */
  private pending: Uint8Array = new Uint8Array(0);
  /** The pieces read before the header's end was found, and their length. */
  private headerPieces: Uint8Array[] = [];
  private headerBytes = 0;
  private hashes: Uint8Array = new Uint8Array(64);
  private ms = new Float64Array(0);
  private dayStart = 0;
  private datePart: Uint8Array = new Uint8Array(0);
  private readonly onHeader: ((head: LedgerHeader, entryCount: number) => void) | undefined;
  private readonly onEntry: ((hashes: Uint8Array, at: number, ms: number) => void) | undefined;

  /** `onHeader` is called once the header is read (with its entry count), `onEntry` with each entry once it is
   * read and checked (its hash at hashes[at, at + 32), valid only during the call; its time in ms): a reader
   * without columns that needs the entries takes them as they pass. */
  constructor(options: {
    columns: boolean;
    totalBytes?: number;
    onHeader?: (head: LedgerHeader, entryCount: number) => void;
    onEntry?: (hashes: Uint8Array, at: number, ms: number) => void;
  }) {
    this.keepColumns = options.columns;
    this.totalBytes = options.totalBytes;
    this.onHeader = options.onHeader;
    this.onEntry = options.onEntry;
  }

  push(chunk: Uint8Array): void {
    let bytes = chunk;
    let o = 0;
    if (this.head === undefined) {
      // Until the header's end is found, the pieces are kept apart and only each new one is searched (with the
      // few bytes before it that could start the mark): a file without the mark costs its length, not its
      // length squared.
      if (!this.headerEnds(chunk)) {
        this.headerPieces.push(new Uint8Array(chunk)); // a copy: `chunk` may be reused by its reader
        this.headerBytes += chunk.length;
        return;
      }
      if (this.headerPieces.length > 0) bytes = concatBytes(...this.headerPieces, chunk);
      this.headerPieces = [];
      o = this.readHeader(bytes);
    } else if (this.pending.length > 0) {
      bytes = new Uint8Array(this.pending.length + chunk.length);
      bytes.set(this.pending, 0);
      bytes.set(chunk, this.pending.length);
    }
    for (; this.i < this.n; this.i++) {
      const size = this.i === 0 ? LINE : LINE + 2;
      if (bytes.length - o < size) break;
      this.readEntry(bytes, o, this.i);
      o += size;
    }
    this.pending = new Uint8Array(bytes.subarray(o)); // a copy: `chunk` may be reused by its reader
    if (this.i === this.n && this.pending.length > (this.n ? 1 : 0) + END.length) throw notCanonical();
  }

  /** The whole ledger read: its header, and its columns when asked for (empty otherwise). */
  end(): LedgerColumns {
    if (this.head === undefined) throw new FormatError('ledger', 'no entries array');
    if (this.i < this.n) throw notCanonical();
    const tail = this.n ? concatBytes(NEWLINE, END) : END;
    if (!equalBytes(this.pending, tail)) throw notCanonical();
    return this.keepColumns
      ? { head: this.head, hashes: this.hashes, ms: this.ms }
      : { head: this.head, hashes: new Uint8Array(0), ms: new Float64Array(0) };
  }

  /** Whether the header's end mark is in the bytes before `chunk` (the kept pieces' last few) and `chunk`. */
  private headerEnds(chunk: Uint8Array): boolean {
    const overlap = Math.min(this.headerBytes, ENTRIES_OPEN.length - 1);
    const before = new Uint8Array(overlap);
    for (let i = this.headerPieces.length - 1, filled = 0; filled < overlap; i--) {
      const piece = this.headerPieces[i]!;
      const take = Math.min(piece.length, overlap - filled);
      before.set(piece.subarray(piece.length - take), overlap - filled - take);
      filled += take;
    }
    const at = (i: number): number | undefined => (i < overlap ? before[i] : chunk[i - overlap]);
    const length = overlap + chunk.length;
    search: for (let i = 0; i + ENTRIES_OPEN.length <= length; i++) {
      for (let k = 0; k < ENTRIES_OPEN.length; k++) if (at(i + k) !== ENTRIES_OPEN[k]) continue search;
      return true;
    }
    return false;
  }

  /** Parses the header, which `bytes` hold all of (headerEnds); returns where the entries begin. */
  private readHeader(bytes: Uint8Array): number {
    // The header ends at the first `"entries":[` + newline: inside the JSON strings before it a quote is escaped.
    let end = -1;
    search: for (let i = 0; i + ENTRIES_OPEN.length <= bytes.length; i++) {
      for (let k = 0; k < ENTRIES_OPEN.length; k++) if (bytes[i + k] !== ENTRIES_OPEN[k]) continue search;
      end = i + ENTRIES_OPEN.length - 1;
      break;
    }
    if (end < 0) throw new FormatError('ledger', 'no entries array');
    const top = bytes.subarray(0, end);
    let raw: unknown;
    try {
      raw = JSON.parse(`${fromUtf8(top, 'ledger')}]}`);
    } catch (err) {
      throw new FormatError('ledger', 'not valid JSON', { cause: err });
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new FormatError('ledger', 'not an object');
    const obj = raw as Record<string, unknown>;
    if (obj.format !== LEDGER_FORMAT) throw new FormatError('format', `expected "${LEDGER_FORMAT}"`);
    const head = ledgerHeader(obj);
    const n = field(obj, 'entry_count', isInt, 'a non-negative integer');
    checkHeader(head, n);
    if (!equalBytes(utf8(header(head, n)), top)) throw notCanonical();
    const size = end + 1 + n * LINE + Math.max(0, n - 1) * 2 + (n ? 1 : 0) + 3;
    if (this.totalBytes !== undefined && this.totalBytes !== size) throw notCanonical();
    this.head = head;
    this.n = n;
    if (this.keepColumns) {
      this.hashes = new Uint8Array(32 * n);
      this.ms = new Float64Array(n);
    }
    this.dayStart = Date.parse(`${head.date}T00:00:00.000Z`);
    this.datePart = ascii(`${head.date}T`);
    this.onHeader?.(head, n);
    return end + 1;
  }

  /** Reads entry i (its separator first, but for the first) at `at`: LINE bytes, or LINE + 2. */
  private readEntry(bytes: Uint8Array, at: number, i: number): void {
    let o = at;
    const expect = (text: Uint8Array): void => {
      for (let k = 0; k < text.length; k++) if (bytes[o + k] !== text[k]) throw notCanonical();
      o += text.length;
    };
    const badTime = (): FormatError =>
      new FormatError(`entries[${i}].submitted_at`, `must be an ISO time on ${this.head!.date}`);
    const digits = (count: number, max: number): number => {
      let v = 0;
      for (let k = 0; k < count; k++) {
        const c = bytes[o + k]! - 0x30;
        if (c < 0 || c > 9) throw badTime();
        v = 10 * v + c;
      }
      if (v > max) throw badTime();
      o += count;
      return v;
    };
    if (i > 0) expect(NEXT);
    expect(OPEN);
    // Without columns, hashes i - 1 and i take turns in a buffer of two.
    const h = this.keepColumns ? 32 * i : 32 * (i & 1);
    const hashes = this.hashes;
    for (let k = 0; k < 32; k++) {
      const hi = lowerHexValue(bytes[o + 2 * k]!);
      const lo = lowerHexValue(bytes[o + 2 * k + 1]!);
      if (hi < 0 || lo < 0) throw new FormatError(`entries[${i}].hash`, 'must be 64 lower-case hex digits');
      hashes[h + k] = (hi << 4) | lo;
    }
    o += 64;
    if (i > 0) {
      const p = this.keepColumns ? h - 32 : 32 - h;
      if (compareHashAt(hashes, p, hashes, h) >= 0) {
        throw new FormatError(`entries[${i}].hash`, 'entries must be sorted by hash without duplicates');
      }
    }
    expect(MIDDLE);
    const datePart = this.datePart;
    for (let k = 0; k < datePart.length; k++) {
      if (bytes[o + k] !== datePart[k]) throw badTime();
    }
    o += datePart.length;
    const hours = digits(2, 23);
    expect(COLON);
    const minutes = digits(2, 59);
    expect(COLON);
    const seconds = digits(2, 59);
    expect(DOT);
    const milli = digits(3, 999);
    expect(ZULU);
    const ms = this.dayStart + ((hours * 60 + minutes) * 60 + seconds) * 1000 + milli;
    if (this.keepColumns) this.ms[i] = ms;
    expect(CLOSE);
    this.onEntry?.(hashes, h, ms);
  }
}

/** The header fields of a parsed ledger object, each checked for its JSON type. */
function ledgerHeader(obj: Record<string, unknown>): LedgerHeader {
  let previous: LedgerPrevious | null = null;
  if (obj.previous !== null) {
    const p = obj.previous as Record<string, unknown> | undefined;
    if (typeof p !== 'object' || p === null) throw new FormatError('previous', 'expected null or an object');
    previous = {
      date: field(p, 'date', isString, 'a date'),
      sha256: field(p, 'sha256', isString, 'a hex digest'),
    };
  }
  return {
    origin: field(obj, 'origin', isString, 'a string'),
    date: field(obj, 'date', isString, 'a date'),
    firstIndex: field(obj, 'first_index', isInt, 'a non-negative integer'),
    treeSize: field(obj, 'tree_size', isInt, 'a non-negative integer'),
    root: field(obj, 'root', isString, 'a hex root'),
    previous,
  };
}

/** Strict parse: the bytes must be exactly the canonical encoding of what they contain. */
export function parseLedger(bytes: Uint8Array): Ledger {
  const text = fromUtf8(bytes, 'ledger');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new FormatError('ledger', 'not valid JSON', { cause: err });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new FormatError('ledger', 'not an object');
  const obj = raw as Record<string, unknown>;
  if (obj.format !== LEDGER_FORMAT) throw new FormatError('format', `expected "${LEDGER_FORMAT}"`);
  const entriesRaw = obj.entries;
  if (!Array.isArray(entriesRaw)) throw new FormatError('entries', 'expected an array');
  const entries = entriesRaw.map((e, i): LedgerEntry => {
    if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== 'string' || typeof e[1] !== 'string') {
      throw new FormatError(`entries[${i}]`, 'expected [hash, submitted time]');
    }
    return { hash: e[0], submittedAt: e[1] };
  });
  const ledger: Ledger = { ...ledgerHeader(obj), entries };
  if (obj.entry_count !== entries.length) {
    throw new MismatchError('entry_count', String(entries.length), String(obj.entry_count));
  }
  const canonical = encodeLedger(ledger);
  if (!equalBytes(canonical, bytes)) {
    throw new FormatError('ledger', 'not in canonical encoding (docs/FORMAT.md §3)');
  }
  return ledger;
}
