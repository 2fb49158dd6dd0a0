// The command line's file handling: which files a path names (folders walked without following symbolic links,
// dot-files only when asked, --exclude globs), where each file's proof goes, hashing with node:crypto as a
// stream (progress on a terminal only), sha256sum lists, and atomic writes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { MessageDigests } from '../../../core/day.ts';
import { sniffEvidenceSync, type EvidenceKind } from '../../../core/evidence.ts';
import { mldsaMuPrefix } from '../../../core/sig.ts';
import { TimesealClientError } from '../errors.ts';
import { PROOF_SUFFIX } from '../proof-file.ts';
import type { ReadBeside } from '../types.ts';

/** The folder beside proof files where `upgrade` keeps the signed ledger of a day that does not hold their hash
 * (a promise broken by omission): `timeseal-ledgers/YYYY-MM-DD.json` with its `.sig` and `.dilithium.sig`. Its
 * files are evidence, not documents: walking a folder skips it. */
export const KEPT_LEDGERS = 'timeseal-ledgers';

export interface WalkOptions {
  /** Include dot-files and dot-folders. */
  all: boolean;
  /** --exclude globs, compiled. */
  exclude: RegExp[];
}

export interface Skipped {
  file: string;
  reason: string;
}

/**
 * A glob as a regular expression over slash-separated relative paths: `*` any run within one name, `?` one
 * character, `**` any run of names, `[…]` a character class.
 */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) out += '\\[';
      else {
        const body = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else out += /[\\^$.|+(){}]/.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${out.replace(/\/$/, '')}$`);
}

/** Whether a relative path (slashes) or its last name matches one of the globs. */
export function excluded(rel: string, exclude: RegExp[]): boolean {
  const base = rel.slice(rel.lastIndexOf('/') + 1);
  return exclude.some((re) => re.test(rel) || re.test(base));
}

/**
 * The regular files under `dir` in name order: symbolic links are not followed (reported as skipped), dot-files
 * and dot-folders are left out unless `all`, excluded paths are left out, and proof files are never documents.
 */
export function walk(
  dir: string,
  options: WalkOptions,
  skipped: Skipped[],
  display: (abs: string) => string,
): string[] {
  const out: string[] = [];
  const visit = (abs: string, rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch (err) {
      skipped.push({
        file: display(abs),
        reason: `cannot read the folder: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const childAbs = path.join(abs, e.name);
      const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.name.startsWith('.') && !options.all) continue;
      if (excluded(childRel, options.exclude)) continue;
      if (e.isSymbolicLink()) skipped.push({ file: display(childAbs), reason: 'a symbolic link (not followed)' });
      else if (e.isDirectory() && e.name === KEPT_LEDGERS) continue;
      else if (e.isDirectory()) visit(childAbs, childRel);
      else if (e.isFile()) {
        // A proof file, or the COSE receipt `upgrade` wrote beside one (`<name>.receipt.cose` next to
        // `<name>.timeseal.json`), is not a document.
        const receiptOf = e.name.endsWith(RECEIPT_SUFFIX)
          ? `${e.name.slice(0, -RECEIPT_SUFFIX.length)}${PROOF_SUFFIX}`
          : undefined;
        const besideItsProof = receiptOf !== undefined && entries.some((o) => o.name === receiptOf);
        if (!e.name.endsWith(PROOF_SUFFIX) && !besideItsProof) out.push(childAbs);
      } else skipped.push({ file: display(childAbs), reason: 'not a regular file' });
    }
  };
  visit(dir, '');
  return out;
}

/**
 * What kind of evidence a file is (core/evidence.ts, the sniffer every reader uses), read in pieces: its first
 * 64 KiB, and a PDF whole from its end back until a time-stamp is found; null for a document, a folder, or a path
 * that cannot be read (left to the caller to report).
 */
export function evidenceOf(file: string): EvidenceKind | null {
  let fd: number | undefined;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return null;
    const opened = (fd = fs.openSync(file, 'r'));
    const read = (at: number, n: number): Uint8Array => {
      const piece = new Uint8Array(n);
      fs.readSync(opened, piece, 0, n, at);
      return piece;
    };
    return sniffEvidenceSync(st.size, read, path.basename(file));
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** What `upgrade` names the COSE receipt it writes beside `<name>.timeseal.json`. */
export const RECEIPT_SUFFIX = '.receipt.cose';

/** Every proof file under `dir` (for upgrade), in name order, without following symbolic links. */
export function walkProofs(dir: string, options: WalkOptions): string[] {
  const out: string[] = [];
  const visit = (abs: string) => {
    for (const e of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.') && !options.all && !e.name.endsWith(PROOF_SUFFIX)) continue;
      const child = path.join(abs, e.name);
      if (e.isDirectory()) visit(child);
      else if (e.isFile() && e.name.endsWith(PROOF_SUFFIX)) out.push(child);
    }
  };
  visit(dir);
  return out;
}

/** Where the proof of a document goes: beside it, or under `outDir` at its path relative to the working folder. */
export function proofPathFor(doc: string, outDir: string | undefined, cwd: string = process.cwd()): string {
  if (outDir === undefined) return `${doc}${PROOF_SUFFIX}`;
  let rel = path.relative(cwd, doc);
  if (rel.startsWith('..') || path.isAbsolute(rel)) rel = doc.replace(/^[/\\]+/, '').replace(/^[A-Za-z]:[/\\]*/, '');
  return path.join(path.resolve(cwd, outDir), `${rel}${PROOF_SUFFIX}`);
}

/** The proof of a digest (or stdin): `<hash>.timeseal.json` in `outDir` or the working folder. */
export function digestProofPath(hash: string, outDir: string | undefined, cwd: string = process.cwd()): string {
  return path.join(path.resolve(cwd, outDir ?? '.'), `${hash}${PROOF_SUFFIX}`);
}

/** The document's path as the proof file records it: relative to the proof's folder, with slashes. */
export function fileField(doc: string, proofPath: string): string {
  return path.relative(path.dirname(proofPath), doc).split(path.sep).join('/');
}

/** Progress on stderr, only when it is a terminal: files done and bytes hashed, at most ten times a second. */
export class Progress {
  private readonly on: boolean;
  private last = 0;
  private shown = false;
  constructor(enabled: boolean) {
    this.on = enabled && process.stderr.isTTY === true;
  }
  update(text: string): void {
    if (!this.on) return;
    const now = Date.now();
    if (now - this.last < 100) return;
    this.last = now;
    this.shown = true;
    process.stderr.write(`\r\x1b[K${text}`);
  }
  done(): void {
    if (this.on && this.shown) process.stderr.write('\r\x1b[K');
    this.shown = false;
  }
}

export const formatBytes = (n: number): string =>
  n < 1024
    ? `${n} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`;

/** The SHA-256 of a file or stdin, read as a stream (1 MiB chunks). */
export async function hashFile(
  file: string | NodeJS.ReadableStream,
  onBytes?: (n: number) => void,
  signal?: AbortSignal,
): Promise<string> {
  const h = crypto.createHash('sha256');
  const stream = typeof file === 'string' ? fs.createReadStream(file, { highWaterMark: 1 << 20 }) : file;
  let total = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (signal?.aborted) {
      if (typeof file === 'string') (stream as fs.ReadStream).destroy();
      throw new TimesealClientError('aborted', 'aborted while hashing');
    }
    h.update(chunk);
    total += chunk.length;
    onBytes?.(total);
  }
  return h.digest('hex');
}

/** The lines of `sha256sum` output: `<hex>  <name>` (or ` *<name>`, and `\`-escaped names). */
export function parseSha256sum(text: string, source: string): Array<{ hash: string; name: string }> {
  const out: Array<{ hash: string; name: string }> = [];
  const bad: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const m = /^(\\?)([0-9a-fA-F]{64})(?: [ *](.*))?$/.exec(line);
    if (m === null) {
      bad.push(`line ${i + 1}`);
      return;
    }
    let name = m[3] ?? '-';
    if (m[1] === '\\') name = name.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ hash: m[2]!.toLowerCase(), name });
  });
  // The list is read and is not what it must be: invalid (exit 1), as `sha256sum -c` ends on such lines; not a
  // usage mistake.
  if (bad.length > 0)
    throw new TimesealClientError(
      'invalid',
      `${source}: not sha256sum output (${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ', …' : ''}): expected "<64 hex>  <name>" lines`,
    );
  return out;
}

/** The files beside a proof file, read from disk in 1 MiB pieces (a kept ledger is never held whole). */
export function besideProof(proofFile: string): ReadBeside {
  return (relative) => {
    const abs = path.resolve(path.dirname(proofFile), ...relative.split('/'));
    if (fs.statSync(abs, { throwIfNoEntry: false })?.isFile() !== true) return null;
    return {
      async *[Symbol.asyncIterator]() {
        for await (const piece of fs.createReadStream(abs, { highWaterMark: 1 << 20 }))
          yield new Uint8Array((piece as Buffer).buffer, (piece as Buffer).byteOffset, (piece as Buffer).length);
      },
    };
  };
}

/** SHA-256 and ML-DSA-65 μ (SHAKE256 of the key's tr prefix and the message, FIPS 204) with node:crypto, for a
 * kept ledger of up to a gigabyte. */
export const nodeDigests: MessageDigests = (publicKey) => {
  const sha = crypto.createHash('sha256');
  const mu = crypto.createHash('shake256', { outputLength: 64 }).update(mldsaMuPrefix(publicKey));
  return {
    update(bytes) {
      sha.update(bytes);
      mu.update(bytes);
    },
    digest: () => ({ sha256: new Uint8Array(sha.digest()), mu: new Uint8Array(mu.digest()) }),
  };
};

/** Writes a file atomically (a temporary file in the same folder, then a rename). */
export function writeAtomic(file: string, text: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** A file's text, or undefined when it does not exist. */
export function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
