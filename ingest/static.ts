// Static files: the built site (TIMESEAL_SITE), the public archive under /ledgers/, and exactly three public
// keys under /keys/. Nothing else on disk is reachable: archive paths must be names the archive format
// defines (core/archive.ts, core/tiles.ts, core/index-segments.ts), site paths are resolved inside the site folder
// with `..`, dot-files, encoded slashes and NUL refused, and files are opened with O_NOFOLLOW so a symbolic
// link planted in a served folder cannot lead out of it.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { BLOCK_INFO_PATH, cacheClass, CHECKPOINT_PATH, dateOfDayFile, DAYS_PATH, INDEX_JSON_PATH, OTS_STATUS_PATH } from '../core/archive.ts';
import { VERIFIER_ARCHIVE_PATH } from '../pipeline/verifier-release.ts';
import { isDate } from '../core/ledger.ts';
import { INDEX_HEAD_PATH, parseSegmentShardPath } from '../core/index-segments.ts';
import { parseTilePath } from '../core/tiles.ts';
import { ClientError } from './errors.ts';
import { IndexJsonCache } from './index-json.ts';
import { VERIFIER_CSP, VERIFIER_PAGE } from './security-headers.ts';

export interface StaticOptions {
  site: string;
  archive: string;
  keys: string;
  /** Where index-sha256.json is made on request (ingest/index-json.ts). */
  cache: string;
}

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const SHORT = 'public, max-age=60';
export const NO_CACHE = 'no-cache';

/** The only files served from the keys folder (docs/FORMAT.md §9). */
export const PUBLIC_KEY_FILES: Record<string, string> = {
  'public.pem': 'application/x-pem-file',
  'dilithium_public.key': 'application/octet-stream',
  'dilithium_public.pem': 'application/x-pem-file',
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
  const ots = /^(\d{4}-\d{2}-\d{2})\.json\.ots$/.exec(raw);
  if (ots && isDate(ots[1]!)) return raw;
  if (parseSegmentShardPath(raw) !== null) return raw;
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

export function archiveCacheControl(rel: string): string {
  if (STATUS_FILES.has(rel)) return NO_CACHE;
  return cacheClass(rel) === 'immutable' ? IMMUTABLE : SHORT;
}

function archiveType(rel: string): string {
  if (rel.endsWith('.json')) return 'application/json; charset=utf-8';
  if (rel === CHECKPOINT_PATH || rel.endsWith('.checkpoint')) return 'text/plain; charset=utf-8';
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

/**
 * Sends a regular file (no symbolic link as the last component) with its type, length, ETag and the given
 * Cache-Control; answers 304 to a matching If-None-Match. Returns false when there is no such file.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, file: string, type: string, cacheControl: string): Promise<boolean> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'EISDIR') return false;
    throw err;
  }
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    return false;
  }
  const etag = `W/"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
  reply.header('Cache-Control', cacheControl).header('ETag', etag).header('Last-Modified', stat.mtime.toUTCString()).type(type);
  if (request.headers['if-none-match'] === etag) {
    await handle.close();
    await reply.code(304).send();
    return true;
  }
  if (request.method === 'HEAD' || stat.size < 64 * 1024) {
    const data = request.method === 'HEAD' ? Buffer.alloc(0) : await handle.readFile();
    await handle.close();
    reply.header('Content-Length', stat.size);
    await reply.send(request.method === 'HEAD' ? undefined : data);
    return true;
  }
  const stream = handle.createReadStream();
  await reply.send(stream);
  return true;
}

/** The HTML answered with status 404 when the site has no 404.html (product spec §2: "Page Not Found"). */
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

  const indexJson = new IndexJsonCache(archive, path.resolve(options.cache));

  app.get('/ledgers/*', { schema: wildcard }, async (request, reply) => {
    const raw = rawPath(request).slice('/ledgers/'.length);
    if (raw === '') return serveSite(request, reply, 'ledgers/');
    if (raw === INDEX_JSON_PATH) {
      const file = await indexJson.file();
      if (await sendFile(request, reply, file, archiveType(INDEX_JSON_PATH), SHORT)) return;
      return sendNotFoundPage(site, reply);
    }
    const rel = archivePath(raw);
    if (rel === null || !(await sendFile(request, reply, path.join(archive, rel), archiveType(rel), archiveCacheControl(rel)))) {
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
