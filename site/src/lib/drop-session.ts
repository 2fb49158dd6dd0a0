// The drop zone's session state (islands/DropZone.tsx, on the home and /proof pages), kept apart from its
// rendering so that other actions on the same rows can share it:
//   - the rows, kept in sessionStorage (one key per drop zone), so that a reload loses no row and no receipt;
//   - the submissions, in the order the files were dropped, whatever order their hashes finish in (with the
//     free tier's 2 a day and three files, the third is the one refused, every time);
//   - which receipts were downloaded (the page asks before it is left with one that was not);
//   - "Download all receipts": one zip of every .tsr with a manifest.json (docs/DECISIONS.md: why a zip, and
//     why written here rather than by a library).

/** `queued`: hashed, waiting for the files dropped before it to be submitted (never saved: after a reload it is
 *  `none`, not submitted, and "Create Proof" offers it). */
export type SubmitState = 'none' | 'queued' | 'submitting' | 'submitted' | 'failed' | 'limited';

export interface Row {
  id: number;
  name: string;
  size: number;
  status: 'hashing' | 'complete' | 'cancelled' | 'error';
  loaded: number;
  hash: string | null;
  submit: SubmitState;
  /** What the server said about this file: what is left after it, or why it was not accepted. */
  note?: string;
  /** The file's receipt (base64 DER TimeStampResp), once the server has answered with one. */
  receipt?: string;
  /** The submission's time and ledger day, as the server answered them. */
  submittedAt?: string;
  ledgerDate?: string;
  /** Its receipt was downloaded (alone or in the archive of all). */
  downloaded?: boolean;
}

/** The sessionStorage key of a drop zone's rows. */
export const sessionKey = (dropZone: string): string => `timeseal-drop-zone:${dropZone}:1`;

const STATES: readonly SubmitState[] = ['none', 'submitting', 'submitted', 'failed', 'limited'];
const HASH = /^[0-9a-f]{64}$/;

/**
 * The rows worth keeping: those with a hash (a file still being hashed cannot be resumed after a reload, its
 * contents are gone). A submission under way or waiting its turn when the page goes is kept as not made:
 * "Create Proof" then offers it again (the server keeps each submission; at worst it is kept twice, never lost).
 */
export function saveRows(storage: Storage | undefined, key: string, rows: readonly Row[]): void {
  const kept = rows
    .filter((r) => r.status === 'complete' && r.hash !== null)
    .map((r) => (r.submit === 'submitting' || r.submit === 'queued' ? { ...r, submit: 'none' as const } : r));
  try {
    if (kept.length === 0) storage?.removeItem(key);
    else storage?.setItem(key, JSON.stringify(kept));
  } catch {
    // Storage full or refused (a private window): the rows stay on the page only.
  }
}

/** The rows saved under `key`; anything malformed is left out (an older page's or a hand-edited entry). */
export function loadRows(storage: Storage | undefined, key: string): Row[] {
  let raw: unknown;
  try {
    raw = JSON.parse(storage?.getItem(key) ?? '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const rows: Row[] = [];
  for (const r of raw as Array<Record<string, unknown>>) {
    if (r === null || typeof r !== 'object') continue;
    const { id, name, size, hash, submit } = r;
    if (!Number.isSafeInteger(id) || typeof name !== 'string' || !Number.isSafeInteger(size)) continue;
    if (typeof hash !== 'string' || !HASH.test(hash) || !STATES.includes(submit as SubmitState)) continue;
    rows.push({
      id: id as number,
      name,
      size: size as number,
      status: 'complete',
      loaded: size as number,
      hash,
      submit: submit as SubmitState,
      note: str(r.note),
      receipt: str(r.receipt),
      submittedAt: str(r.submittedAt),
      ledgerDate: str(r.ledgerDate),
      downloaded: r.downloaded === true,
    });
  }
  return rows;
}

/** Receipts on the page that were not downloaded yet. */
export const undownloaded = (rows: readonly Row[]): number =>
  rows.filter((r) => r.receipt !== undefined && !r.downloaded).length;

/** A receipt's file name: the document's name with `.tsr` (or the hash's start when it has none). */
export const receiptName = (row: Pick<Row, 'name' | 'hash'>): string =>
  `${(row.name || row.hash!.slice(0, 12)).replace(/[/\\]/g, '_')}.tsr`;

/**
 * Submits hashes one at a time in the order their files were added (`add`), each once it is hashed (`ready`);
 * a file that will never have a hash (cancelled, unreadable) is passed over (`skip`).
 */
export class OrderedSubmitter {
  private readonly queue: Array<{ id: number; hash?: string; name?: string; skip?: boolean }> = [];
  private running = false;
  private readonly submit: (id: number, hash: string, name: string) => Promise<void>;
  constructor(submit: (id: number, hash: string, name: string) => Promise<void>) {
    this.submit = submit;
  }

  add(id: number): void {
    this.queue.push({ id });
  }
  ready(id: number, hash: string, name: string): void {
    const entry = this.queue.find((e) => e.id === id);
    if (entry === undefined) return;
    entry.hash = hash;
    entry.name = name;
    void this.pump();
  }
  skip(id: number): void {
    const entry = this.queue.find((e) => e.id === id);
    if (entry === undefined) return;
    entry.skip = true;
    void this.pump();
  }
  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let head = this.queue[0]; head && (head.skip || head.hash); head = this.queue[0]) {
        this.queue.shift();
        if (head.hash !== undefined) await this.submit(head.id, head.hash, head.name!).catch(() => {});
      }
    } finally {
      this.running = false;
    }
  }
}

// The zip file format (PKWARE APPNOTE.TXT 6.3.10): local headers, the files stored (method 0: receipts are DER,
// already dense), the central directory, its end record. Names in UTF-8 (general purpose flag bit 11).
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (ISO 3309, the zip format's), of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip archive of `files`, stored, each with the UTC time `at` (MS-DOS date and time, 2 s resolution). */
export function zipStored(files: ReadonlyArray<{ name: string; bytes: Uint8Array }>, at: Date): Uint8Array {
  const time = (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | (at.getUTCSeconds() >> 1);
  const date = ((at.getUTCFullYear() - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate();
  const utf8 = new TextEncoder();
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const f of files) {
    const name = utf8.encode(f.name);
    const crc = crc32(f.bytes);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true); // version needed: 2.0
    local.setUint16(6, 0x0800, true); // UTF-8 names
    local.setUint16(8, 0, true); // stored
    local.setUint16(10, time, true);
    local.setUint16(12, date, true);
    local.setUint32(14, crc, true);
    local.setUint32(18, f.bytes.length, true);
    local.setUint32(22, f.bytes.length, true);
    local.setUint16(26, name.length, true);
    local.setUint16(28, 0, true);
    const entry = new DataView(new ArrayBuffer(46));
    entry.setUint32(0, 0x02014b50, true);
    entry.setUint16(4, 20, true);
    entry.setUint16(6, 20, true);
    entry.setUint16(8, 0x0800, true);
    entry.setUint16(10, 0, true);
    entry.setUint16(12, time, true);
    entry.setUint16(14, date, true);
    entry.setUint32(16, crc, true);
    entry.setUint32(20, f.bytes.length, true);
    entry.setUint32(24, f.bytes.length, true);
    entry.setUint16(28, name.length, true);
    entry.setUint32(42, offset, true);
    parts.push(new Uint8Array(local.buffer), name, f.bytes);
    central.push(new Uint8Array(entry.buffer), name);
    offset += 30 + name.length + f.bytes.length;
  }
  const centralSize = central.reduce((n, p) => n + p.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, files.length, true);
  end.setUint16(10, files.length, true);
  end.setUint32(12, centralSize, true);
  end.setUint32(16, offset, true);
  const all = [...parts, ...central, new Uint8Array(end.buffer)];
  const out = new Uint8Array(all.reduce((n, p) => n + p.length, 0));
  let at0 = 0;
  for (const p of all) {
    out.set(p, at0);
    at0 += p.length;
  }
  return out;
}

/**
 * The archive of every receipt on the page: `<name>.tsr` for each (a second file of the same name gets
 * ` (2)` before `.tsr`), and manifest.json naming, for each, the document, its SHA-256, the submission's time
 * and day, and the OpenSSL command that checks it. Returns the archive and the file name to save it as.
 */
export function receiptsArchive(
  rows: readonly Row[],
  context: { origin: string; now: Date },
): { bytes: Uint8Array; fileName: string; count: number } {
  const used = new Set<string>();
  const files: Array<{ name: string; bytes: Uint8Array }> = [];
  const entries: Array<Record<string, string | null>> = [];
  for (const r of rows) {
    if (r.receipt === undefined || r.hash === null) continue;
    let name = receiptName(r);
    for (let n = 2; used.has(name); n++) name = receiptName(r).replace(/\.tsr$/, ` (${n}).tsr`);
    used.add(name);
    files.push({ name, bytes: Uint8Array.from(atob(r.receipt), (c) => c.charCodeAt(0)) });
    entries.push({
      receipt: name,
      document: r.name || null,
      sha256: r.hash,
      submittedAt: r.submittedAt ?? null,
      ledgerDate: r.ledgerDate ?? null,
      check: `openssl ts -verify -digest ${r.hash} -in '${name.replaceAll("'", `'\\''`)}' -CAfile timeseal-tsa-root.pem -untrusted timeseal-tsa.pem`,
    });
  }
  const manifest = {
    format: 'timeseal-receipts/1',
    server: context.origin,
    created: context.now.toISOString(),
    about:
      "RFC 3161 time-stamp tokens signed by Timeseal's time-stamp authority at submission; each hash is also published in its day's public ledger. The certificates: /keys/timeseal-tsa-root.pem and /keys/timeseal-tsa.pem of the server.",
    receipts: entries,
  };
  files.push({ name: 'manifest.json', bytes: new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`) });
  return {
    bytes: zipStored(files, context.now),
    fileName: `timeseal-receipts-${context.now.toISOString().slice(0, 10)}.zip`,
    count: entries.length,
  };
}
