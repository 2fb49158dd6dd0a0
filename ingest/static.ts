// Static files: the built site (TIMESEAL_SITE), the public archive under /ledgers/, and exactly three public
// keys under /keys/. Nothing else on disk is reachable: archive paths must be names the archive format
// defines (core/archive.ts, core/tiles.ts, core/index-segments.ts), site paths are resolved inside the site folder
// with `..`, dot-files, encoded slashes and NUL refused, and files are opened with O_NOFOLLOW so a symbolic
// link planted in a served folder cannot lead out of it.
//
// Nothing of the archive is served before its commit point (docs/FORMAT.md §10): a build writes a day's files
// before days.json names the day, so a day file is served only for a day days.json names, a tile or entry
// bundle only when it lies within days.json's tree size, and an index segment file only when its leaves are; and
// `checkpoint` is the last published day's checkpoint (`<date>.checkpoint`, the same bytes once a build has
// finished), so a build killed between days.json and the latest checkpoint never leaves it missing or behind.
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { BLOCK_INFO_PATH, cacheClass, monthOfBlockInfo, CHECKPOINT_PATH, dateOfDayFile, dayCheckpointPath, DAYS_PATH, INDEX_JSON_PATH, OTS_STATUS_PATH, parseDays, VERIFIER_ARCHIVE_PATH } from '../core/archive.ts';
import { isDate } from '../core/ledger.ts';
import { INDEX_HEAD_PATH, parseSegmentPath } from '../core/index-segments.ts';
import { parseTilePath, TILE_WIDTH } from '../core/tiles.ts';
import { ClientError, errorBody } from './errors.ts';
import { IndexJsonCache, IndexJsonPreparingError, type IndexJsonFile } from './index-json.ts';
import type { ArchiveAccess } from './services.ts';
import { VERIFIER_CSP, VERIFIER_PAGE } from './security-headers.ts';

/** The tree size an index-sha256.json answer covers: the current head's, or a smaller one while that is made. */
export const TREE_SIZE_HEADER = 'Timeseal-Tree-Size';
/** Our text (the spec has none) for the first index-sha256.json of an archive, while it is made. */
export const INDEX_JSON_PREPARING = 'index-sha256.json is being prepared for this archive; please try again in a minute.';
const INDEX_JSON_RETRY_AFTER = '60';

export interface StaticOptions {
  site: string;
  archive: string;
  keys: string;
  /** How long a request for the first index-sha256.json waits for it (default READY_WAIT_MS). */
  indexJsonWaitMs?: number;
  /** Where index-sha256.json is made on request (ingest/index-json.ts). */
  cache: string;
  /** The index head and index-sha256.json's text (services.ts). */
  index: Pick<ArchiveAccess, 'indexHead' | 'indexJson'>;
}

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const SHORT = 'public, max-age=60';
export const NO_CACHE = 'no-cache';

/** The only files served from the keys folder (docs/FORMAT.md §9). */
export const PUBLIC_KEY_FILES: Record<string, string> = {
  'public.pem': 'application/x-pem-file',
  'dilithium_public.key': 'application/octet-stream',
  'dilithium_public.pem': 'application/x-pem-file',
  // The checkpoint keys witnesses know (C2SP vkeys) and the witness policy (pipeline/witness.ts), when present.
  'ed25519.vkey': 'text/plain; charset=utf-8',
  'mldsa44.vkey': 'text/plain; charset=utf-8',
  witnesses: 'text/plain; charset=utf-8',
  'witnesses.retired': 'text/plain; charset=utf-8',
  // The CA chain of the RFC 3161 time-stamp authorities, when the operator publishes it (pipeline/tsa.ts).
  'tsa-ca.pem': 'application/x-pem-file',
  // Timeseal's own time-stamp authority (POST /tsa): its certificate then root, and the root alone.
  'timeseal-tsa.pem': 'application/x-pem-file',
  'timeseal-tsa-root.pem': 'application/x-pem-file',
};

const NAMED_ARCHIVE_FILES = new Set([CHECKPOINT_PATH, DAYS_PATH, INDEX_HEAD_PATH, OTS_STATUS_PATH, BLOCK_INFO_PATH, VERIFIER_ARCHIVE_PATH]);
const STATUS_FILES = new Set([OTS_STATUS_PATH, BLOCK_INFO_PATH]);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.gif': 'image/gif',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml',
  '.wasm': 'application/wasm',
  '.md': 'text/markdown; charset=utf-8',
  '.pdf': 'application/pdf',
};

/** The archive-relative path of a `/ledgers/…` request, or a ClientError for a path trick; null = no such file name. */
export function archivePath(raw: string): string | null {
  if (!/^[A-Za-z0-9._\/-]*$/.test(raw)) throw new ClientError(400, 'Archive paths contain only letters, digits, ".", "_", "-" and "/" (no percent-encoding)');
  const segments = raw.split('/');
  if (segments.some((s) => s === '..' || s === '.' || s === '')) throw new ClientError(400, 'Archive paths must not contain ".", ".." or empty segments');
  if (NAMED_ARCHIVE_FILES.has(raw)) return raw;
  if (dateOfDayFile(raw) !== null) return raw;
  if (monthOfBlockInfo(raw) !== null) return raw;
  const ots = /^(\d{4}-\d{2}-\d{2})\.json\.ots$/.exec(raw);
  if (ots && isDate(ots[1]!)) return raw;
  if (parseSegmentPath(raw) !== null) return raw;
  if (raw.startsWith('tile/')) {
    try {
      parseTilePath(raw);
      return raw;
    } catch {
      return null;
    }
  }
  return null;
}

/** What days.json commits to: the published days and the tree size after the last one. */
export interface Committed {
  dates: ReadonlySet<string>;
  last: string | null;
  treeSize: number;
}

const NOTHING_COMMITTED: Committed = { dates: new Set(), last: null, treeSize: 0 };

/**
 * Whether the archive file `rel` (a name archivePath accepted) is published by `committed`: day files of
 * published days, tiles and entry bundles within its tree size, index segments within it, and the named
 * files (whose own writers replace them only after the commit point).
 */
export function isCommitted(rel: string, committed: Committed): boolean {
  const date = dateOfDayFile(rel) ?? /^(\d{4}-\d{2}-\d{2})\.json\.ots$/.exec(rel)?.[1];
  if (date !== undefined) return committed.dates.has(date);
  const segment = parseSegmentPath(rel);
  if (segment !== null) return segment.to <= committed.treeSize;
  if (rel.startsWith('tile/')) {
    const tile = parseTilePath(rel);
    const level = tile.kind === 'entries' ? 0 : tile.level;
    // The leaves a tile covers end at (index · 256 + width) · 256^level.
    return (tile.index * TILE_WIDTH + tile.width) * TILE_WIDTH ** level <= committed.treeSize;
  }
  return true;
}

/** The last answer of latestCheckpointFile, by the date and `checkpoint`'s inode, size and time. */
let latestCheckpointSeen = { key: '', file: '' };

/**
 * `checkpoint` when it is the day's checkpoint with witness lines after it, else `<date>.checkpoint`. The two
 * files are compared only when `checkpoint` changed (it is replaced by rename) and is the longer one.
 */
async function latestCheckpointFile(archive: string, date: string): Promise<string> {
  const day = dayCheckpointPath(date);
  const [latestStat, ownStat] = await Promise.all([
    fs.promises.stat(path.join(archive, CHECKPOINT_PATH)).catch(() => null),
    fs.promises.stat(path.join(archive, day)).catch(() => null),
  ]);
  if (latestStat === null || ownStat === null || latestStat.size <= ownStat.size) return day;
  const key = `${archive}:${date}:${latestStat.ino}:${latestStat.size}:${latestStat.mtimeMs}`;
  if (latestCheckpointSeen.key === key) return latestCheckpointSeen.file;
  const [latest, own] = await Promise.all([fs.promises.readFile(path.join(archive, CHECKPOINT_PATH)), fs.promises.readFile(path.join(archive, day))]);
  const file = latest.subarray(0, own.length).equals(own) ? CHECKPOINT_PATH : day;
  latestCheckpointSeen = { key, file };
  return file;
}

/** days.json read again only when it changed (it is replaced by rename: a new inode each time). */
class CommittedView {
  private key = '';
  private value: Committed = NOTHING_COMMITTED;
  private readonly archive: string;

  constructor(archive: string) {
    this.archive = archive;
  }

  async get(): Promise<Committed> {
    const file = path.join(this.archive, DAYS_PATH);
    const stat = await fs.promises.stat(file).catch(() => null);
    const key = stat === null ? '-' : `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (key === this.key) return this.value;
    let value = NOTHING_COMMITTED;
    if (stat !== null) {
      try {
        const { days } = parseDays(await fs.promises.readFile(file, 'utf8'));
        const last = days.at(-1);
        value = { dates: new Set(days.map((d) => d.date)), last: last?.date ?? null, treeSize: last?.treeSize ?? 0 };
      } catch {
        value = NOTHING_COMMITTED; // unreadable: nothing is served as published
      }
    }
    this.key = key;
    this.value = value;
    return value;
  }
}

export function archiveCacheControl(rel: string): string {
  if (STATUS_FILES.has(rel) || monthOfBlockInfo(rel) !== null) return NO_CACHE;
  return cacheClass(rel) === 'immutable' ? IMMUTABLE : SHORT;
}

function archiveType(rel: string): string {
  if (rel.endsWith('.json')) return 'application/json; charset=utf-8';
  if (rel === CHECKPOINT_PATH || rel.endsWith('.checkpoint') || rel.endsWith('.cosignatures')) return 'text/plain; charset=utf-8';
  if (rel.endsWith('.tsr')) return 'application/timestamp-reply';
  return 'application/octet-stream';
}

/** Decoded, checked site path relative to the site root ('' = the home page). */
export function sitePath(rawPath: string): string {
  if (/%(2f|5c|00)/i.test(rawPath) || rawPath.includes('\\') || rawPath.includes('\0')) {
    throw new ClientError(400, 'Paths must not contain encoded slashes, backslashes or NUL');
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    throw new ClientError(400, 'URL is not validly percent-encoded');
  }
  const segments = decoded.split('/');
  if (segments.some((s) => s === '..' || s === '.')) throw new ClientError(400, 'Paths must not contain "." or ".." segments');
  if (decoded.includes('\0')) throw new ClientError(400, 'Paths must not contain NUL');
  return decoded.replace(/^\/+/, '');
}

/** Files at least this large are never compressed per request (a 100 MB day file kept a core busy per download). */
export const AS_STORED_BYTES = 1 << 20;
/** Smaller files are read whole; larger ones are streamed. */
const READ_WHOLE_BYTES = 64 * 1024;
const JSON_OR_TEXT = /^(application\/json|text\/)/;

/**
 * The byte range a `Range` header asks of a file of `size` bytes (RFC 9110 §14): `{start, end}` (end
 * inclusive), 'unsatisfiable' (416), or null when the header is to be ignored and the whole file sent: no
 * header, another unit, several ranges (allowed to be ignored; no multipart answers) or a malformed one.
 */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (header === undefined) return null;
  const m = /^bytes=[ \t]*(\d*)-(\d*)[ \t]*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const last = m[2] === '' ? Infinity : Number(m[2]);
  if (last < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(last, size - 1) };
}

/** If-None-Match (RFC 9110 §13.1.2): `*` or a list of tags, compared weakly. */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

/**
 * If-Range (RFC 9110 §13.1.5): the range is honoured only when the validator still matches: a strong ETag
 * compared strongly (a weak one never matches), or exactly the file's Last-Modified date.
 */
function ifRangeHolds(header: string | undefined, etag: string, mtime: Date): boolean {
  if (header === undefined) return true;
  const value = header.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return !etag.startsWith('W/') && value === etag;
  const date = Date.parse(value);
  return !Number.isNaN(date) && date === Math.floor(mtime.getTime() / 1000) * 1000;
}

/** Accept-Encoding allows gzip (RFC 9110 §12.5.3): `gzip`, `x-gzip` or `*` with a weight above 0, gzip not refused. */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let star = false;
  for (const part of header.toLowerCase().split(',')) {
    const [coding = '', ...params] = part.split(';').map((x) => x.trim());
    const q = params.map((x) => /^q=([\d.]+)$/.exec(x)).find((m) => m !== null);
    const weight = q ? Number(q[1]) : 1;
    if (coding === 'gzip' || coding === 'x-gzip') return weight > 0;
    if (coding === '*') star = weight > 0;
  }
  return star;
}

/**
 * gzip copies of large files sent as stored (an immutable day file, index-sha256.json), each made once into
 * `dir` and then sent as they are to clients that accept gzip: the compression is paid once per file, not
 * once per download. A copy is made in the background when first wanted, one at a time (zlib runs on libuv's
 * thread pool, so one core at most); until it exists the file goes out uncompressed. A copy is named after
 * its source and the source's size and time, and replaces the older copies of the same name (index-sha256.json
 * changes daily).
 */
export class GzipCopies {
  private readonly dir: string;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly making = new Set<string>();

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The copy of `source` (served as `name`, version `version`) when made; otherwise starts making it and returns null. */
  async ready(source: string, name: string, version: string, log: { warn(fields: object, message: string): void }): Promise<string | null> {
    const key = name.replaceAll('/', '%');
    const copy = path.join(this.dir, `${key}.${version}.gz`);
    try {
      await fs.promises.access(copy);
      return copy;
    } catch {
      // Not made yet.
    }
    if (!this.making.has(copy)) {
      this.making.add(copy);
      const made = this.queue
        .then(() => this.make(source, key, version, copy))
        .catch((err: unknown) => log.warn({ err, file: name }, 'could not make the gzip copy; the file is sent uncompressed'))
        .finally(() => this.making.delete(copy));
      this.queue = made;
    }
    return null;
  }

  private async make(source: string, key: string, version: string, copy: string): Promise<void> {
    await fs.promises.mkdir(this.dir, { recursive: true });
    const temp = `${copy}.tmp-${process.pid}`;
    if (tagOf(await fs.promises.lstat(source)) !== version) return;
    try {
      const input = await fs.promises.open(source, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      await pipeline(input.createReadStream(), zlib.createGzip({ level: 9 }), fs.createWriteStream(temp));
      // Synced before the rename: a copy cut short by a crash would otherwise be served for good.
      const output = await fs.promises.open(temp, 'r+');
      try {
        await output.sync();
      } finally {
        await output.close();
      }
    } catch (err) {
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
    await fs.promises.rename(temp, copy);
    for (const other of await fs.promises.readdir(this.dir)) {
      if (other.startsWith(`${key}.`) && other.endsWith('.gz') && other !== path.basename(copy)) await fs.promises.rm(path.join(this.dir, other), { force: true });
    }
  }
}

/** A file version's validator: its size and modification time (hex). */
function tagOf(stat: fs.Stats): string {
  return `${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}`;
}

export interface SendFileOptions {
  /**
   * Send the bytes as stored, never compressed per request: immutable archive files, which clients and caches
   * keep for ever and which are fetched again by every new verifier. Files of AS_STORED_BYTES or more always are.
   */
  asStored?: boolean;
  /** Where gzip copies of large JSON files sent as stored come from, and the name the file is served as. */
  gzip?: { copies: GzipCopies; name: string };
}

/**
 * Sends a regular file (no symbolic link as the last component) with its type, length, ETag and the given
 * Cache-Control; answers 304 to a matching If-None-Match, and a single byte range (206, or 416 when it lies
 * beyond the end) to `Range`, subject to If-Range. A file sent as stored has a strong ETag (its bytes, or its
 * gzip copy's, are fixed by it); one that @fastify/compress may compress keeps a weak one, which never satisfies
 * If-Range, so a range asked with If-Range gets the whole file. Returns false when there is no such file.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, file: string, type: string, cacheControl: string, options: SendFileOptions = {}): Promise<boolean> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'EISDIR') return false;
    throw err;
  }
  let stat: fs.Stats;
  try {
    stat = await handle.stat();
  } catch (err) {
    await handle.close();
    throw err;
  }
  if (!stat.isFile()) {
    await handle.close();
    return false;
  }
  const asStored = options.asStored === true || stat.size >= AS_STORED_BYTES;
  const mtime = stat.mtime;
  let size = stat.size;
  let etag = asStored ? `"${tagOf(stat)}"` : `W/"${tagOf(stat)}"`;
  // A large JSON file sent as stored has two representations: the file and its gzip copy (once made). A range
  // is always of the file itself.
  if (asStored && options.gzip && stat.size >= READ_WHOLE_BYTES && JSON_OR_TEXT.test(type)) {
    reply.header('Vary', 'Accept-Encoding');
    const accept = request.headers['accept-encoding'];
    if (request.headers.range === undefined && acceptsGzip(Array.isArray(accept) ? accept.join(',') : accept)) {
      const copy = await options.gzip.copies.ready(file, options.gzip.name, tagOf(stat), request.log);
      const gz = copy === null ? null : await fs.promises.open(copy, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW).catch(() => null);
      if (gz !== null) {
        await handle.close();
        handle = gz;
        size = (await gz.stat()).size;
        etag = `"${tagOf(stat)}-gz"`;
        reply.header('Content-Encoding', 'gzip');
      }
    }
  }
  reply
    .header('Cache-Control', cacheControl)
    .header('ETag', etag)
    .header('Last-Modified', mtime.toUTCString())
    .header('Accept-Ranges', 'bytes')
    .type(type);
  // @fastify/compress's documented per-request opt-out, set by the server for answers sent as stored.
  if (asStored) request.headers['x-no-compression'] = 'as-stored';
  if (noneMatch(request.headers['if-none-match'], etag)) {
    await handle.close();
    await reply.code(304).send();
    return true;
  }
  const ifRange = request.headers['if-range'];
  const holds = ifRangeHolds(Array.isArray(ifRange) ? ifRange.join(', ') : ifRange, etag, mtime);
  const range = request.method === 'GET' && holds ? byteRange(request.headers.range, size) : null;
  if (range === 'unsatisfiable') {
    await handle.close();
    await reply.code(416).header('Content-Range', `bytes */${size}`).header('Content-Length', 0).send();
    return true;
  }
  const start = range?.start ?? 0;
  const length = range ? range.end - range.start + 1 : size;
  if (range) reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
  if (request.method === 'HEAD') {
    await handle.close();
    // Fastify's HEAD handling answers Content-Length: 0 for an empty body but keeps the header set for a stream.
    await reply.header('Content-Length', length).send(Readable.from([]));
    return true;
  }
  if (length < READ_WHOLE_BYTES) {
    let data = Buffer.alloc(length);
    try {
      let read = 0;
      while (read < length) {
        const { bytesRead } = await handle.read(data, read, length - read, start + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      data = data.subarray(0, read);
    } finally {
      await handle.close();
    }
    reply.header('Content-Length', data.length);
    await reply.send(data);
    return true;
  }
  // A streamed answer as stored has a known length; one that may be compressed loses it to the encoder.
  reply.header('Content-Length', length);
  await reply.send(handle.createReadStream({ start, end: start + length - 1 }));
  return true;
}

/** The HTML answered with status 404 when the site has no 404.html ("Page Not Found", like site/src/pages/404.astro). */
export const BUILT_IN_404 = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Page Not Found</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style>
</head>
<body>
<main>
<h1>Page Not Found</h1>
<p>The page you are looking for does not exist or has moved.</p>
<p><a href="/">Go to Home</a></p>
</main>
</body>
</html>
`;

/** Answers 404 with the site's 404.html, or the built-in page. */
export async function sendNotFoundPage(site: string, reply: FastifyReply): Promise<void> {
  let html: Buffer | string = BUILT_IN_404;
  try {
    html = await fs.promises.readFile(path.join(site, '404.html'));
  } catch {
    html = BUILT_IN_404;
  }
  await reply.code(404).header('Cache-Control', NO_CACHE).type('text/html; charset=utf-8').send(html);
}

function siteCacheControl(rel: string): string {
  if (rel.startsWith('_astro/')) return IMMUTABLE;
  return rel.endsWith('.html') ? NO_CACHE : 'public, max-age=3600';
}

/** Candidate files for a site path: the file itself, then `<path>/index.html`, then `<path>.html`. */
function siteCandidates(rel: string): string[] {
  if (rel === '' || rel.endsWith('/')) return [`${rel}index.html`];
  return [rel, `${rel}/index.html`, `${rel}.html`];
}

export const staticRoutes: FastifyPluginAsync<StaticOptions> = async (app, options) => {
  const site = path.resolve(options.site);
  const archive = path.resolve(options.archive);
  const keys = path.resolve(options.keys);

  const serveSite = async (request: FastifyRequest, reply: FastifyReply, rel: string): Promise<void> => {
    if (rel.split('/').some((s) => s.startsWith('.'))) return sendNotFoundPage(site, reply);
    for (const candidate of siteCandidates(rel)) {
      const file = path.join(site, candidate);
      if (!file.startsWith(site + path.sep)) break;
      const type = TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
      const verifier = candidate === VERIFIER_PAGE;
      if (verifier) reply.header('content-security-policy', VERIFIER_CSP);
      if (await sendFile(request, reply, file, type, siteCacheControl(candidate))) return;
      // Not there: what is answered next (another candidate, the 404 page) keeps the site's policy.
      if (verifier) reply.removeHeader('content-security-policy');
    }
    await sendNotFoundPage(site, reply);
  };

  const rawPath = (request: FastifyRequest): string => request.url.split('?')[0]!;
  // The archive and the keys are public data meant for any verifier, including other origins: their CORS and
  // Cross-Origin-Resource-Policy headers are set with the other security headers (security-headers.ts).
  const wildcard = { params: { type: 'object', properties: { '*': { type: 'string', maxLength: 2048 } }, additionalProperties: false }, hide: true };

  const indexJson = new IndexJsonCache(options.index, path.resolve(options.cache));
  const gzipCopies = new GzipCopies(path.join(path.resolve(options.cache), 'gz'));
  const committedView = new CommittedView(archive);

  app.get('/ledgers/*', { schema: wildcard }, async (request, reply) => {
    const raw = rawPath(request).slice('/ledgers/'.length);
    if (raw === '') return serveSite(request, reply, 'ledgers/');
    if (raw === INDEX_JSON_PATH) {
      // Twice: an earlier file sent while the current one is made may be removed the moment that one is done.
      for (let attempt = 0; attempt < 2; attempt++) {
        let made: IndexJsonFile;
        try {
          made = await indexJson.file(options.indexJsonWaitMs);
        } catch (err) {
          if (!(err instanceof IndexJsonPreparingError)) throw err;
          return reply.code(503).header('Retry-After', INDEX_JSON_RETRY_AFTER).type('application/json; charset=utf-8').send(errorBody('plain', INDEX_JSON_PREPARING));
        }
        void reply.header(TREE_SIZE_HEADER, String(made.treeSize));
        if (await sendFile(request, reply, made.path, archiveType(INDEX_JSON_PATH), SHORT, { gzip: { copies: gzipCopies, name: INDEX_JSON_PATH } })) return;
      }
      return sendNotFoundPage(site, reply);
    }
    const rel = archivePath(raw);
    if (rel === null) return sendNotFoundPage(site, reply);
    const committed = await committedView.get();
    if (!isCommitted(rel, committed)) return sendNotFoundPage(site, reply);
    // The latest checkpoint is the last published day's: never missing or behind days.json after a crash. Once
    // witnesses have cosigned it, the `checkpoint` file is that day's checkpoint followed by their lines
    // (pipeline/witness.ts): it is sent when it begins with the day's checkpoint.
    const file = rel === CHECKPOINT_PATH ? (committed.last === null ? null : await latestCheckpointFile(archive, committed.last)) : rel;
    // Immutable archive files are sent as stored: never compressed again per request, with strong ETags for If-Range.
    const cacheControl = archiveCacheControl(rel);
    if (file === null || !(await sendFile(request, reply, path.join(archive, file), archiveType(rel), cacheControl, { asStored: cacheControl === IMMUTABLE, gzip: { copies: gzipCopies, name: rel } }))) {
      return sendNotFoundPage(site, reply);
    }
  });

  app.get('/keys/*', { schema: wildcard }, async (request, reply) => {
    const name = rawPath(request).slice('/keys/'.length);
    const type = Object.hasOwn(PUBLIC_KEY_FILES, name) ? PUBLIC_KEY_FILES[name] : undefined;
    if (type === undefined || !(await sendFile(request, reply, path.join(keys, name), type, 'public, max-age=300'))) {
      return sendNotFoundPage(site, reply);
    }
  });

  app.get('/*', { schema: wildcard }, async (request, reply) => {
    const raw = rawPath(request);
    if (raw === '/api' || raw.startsWith('/api/')) return reply.callNotFound();
    return serveSite(request, reply, sitePath(raw));
  });
};
