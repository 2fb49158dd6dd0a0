// HTTP file serving: one regular file answered with its type, length, validators and cache class, as HTTP
// caches and download tools expect (RFC 9110): a strong or weak ETag, Last-Modified, If-None-Match (304), one
// byte range (206, 416) subject to If-Range, and HEAD. Files are opened with O_NOFOLLOW, so a symbolic link
// planted in a served folder cannot lead out of it. Large files go out as stored, never compressed per
// request; large JSON files sent as stored get a gzip copy made once (GzipCopies).
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

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
export function byteRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
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
  async ready(
    source: string,
    name: string,
    version: string,
    log: { warn(fields: object, message: string): void },
  ): Promise<string | null> {
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
        .catch((err: unknown) =>
          log.warn({ err, file: name }, 'could not make the gzip copy; the file is sent uncompressed'),
        )
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
      if (other.startsWith(`${key}.`) && other.endsWith('.gz') && other !== path.basename(copy))
        await fs.promises.rm(path.join(this.dir, other), { force: true });
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
export async function sendFile(
  request: FastifyRequest,
  reply: FastifyReply,
  file: string,
  type: string,
  cacheControl: string,
  options: SendFileOptions = {},
): Promise<boolean> {
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
      const gz =
        copy === null
          ? null
          : await fs.promises.open(copy, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW).catch(() => null);
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
