// The built site (TIMESEAL_SITE): a request path decoded and checked (`..`, dot-files, encoded slashes and NUL
// refused), resolved inside the site folder to a file, `<path>/index.html` or `<path>.html`, and sent with its
// type and cache class (http-file.ts); anything else is the site's 404 page, or a built-in one.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientError } from './errors.ts';
import { CACHE_IMMUTABLE, CACHE_REVALIDATE } from '../core/archive.ts';
import { sendFile } from './http-file.ts';
import { VERIFIER_CSP, VERIFIER_PAGE } from './security-headers.ts';

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
  if (segments.some((s) => s === '..' || s === '.'))
    throw new ClientError(400, 'Paths must not contain "." or ".." segments');
  if (decoded.includes('\0')) throw new ClientError(400, 'Paths must not contain NUL');
  return decoded.replace(/^\/+/, '');
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
  await reply.code(404).header('Cache-Control', CACHE_REVALIDATE).type('text/html; charset=utf-8').send(html);
}

function siteCacheControl(rel: string): string {
  if (rel.startsWith('_astro/')) return CACHE_IMMUTABLE;
  return rel.endsWith('.html') ? CACHE_REVALIDATE : 'public, max-age=3600';
}

/** Candidate files for a site path: the file itself, then `<path>/index.html`, then `<path>.html`. */
function siteCandidates(rel: string): string[] {
  if (rel === '' || rel.endsWith('/')) return [`${rel}index.html`];
  return [rel, `${rel}/index.html`, `${rel}.html`];
}

/** Answers a site path (sitePath's result; '' = the home page) with its file, or the 404 page. */
export async function serveSite(
  site: string,
  request: FastifyRequest,
  reply: FastifyReply,
  rel: string,
): Promise<void> {
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
}
