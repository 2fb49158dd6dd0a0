// GET /verify?hash=<SHA-256>: the built /verify page with preview tags of its own (og:title, og:description,
// og:url, the description; twitter:card stays), so a shared link to one hash's page says which hash it checks
// and, when a published ledger holds it, which day's — instead of the page's general tags. The page itself is the
// built file unchanged otherwise: it reads the hash from its address and searches in the browser. A link without
// a hash, or with anything else in it, gets the built page as it is. Which day holds a hash comes from the
// archive's index (a few shard reads), within a budget per address at GET /api/status/<hash>'s rate
// (STATUS_LOOKUP_RATE); past it, the tags name the hash only.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import { CACHE_REVALIDATE } from '../../core/archive.ts';
import { escapeHtml } from './certificate.ts';
import { lookupBudget } from '../lookup-budget.ts';
import type { TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';
import { serveSite } from '../site-files.ts';

const VERIFY_PAGE = 'verify/index.html';

/** The preview of one hash's /verify link: what the tags say. */
export function verifyPreview(hash: string, publishedDays: string[]): { title: string; description: string } {
  const short = `${hash.slice(0, 12)}…${hash.slice(-4)}`;
  return {
    title: `Verify the timestamp of SHA-256 ${short} · Timeseal`,
    description:
      publishedDays.length > 0
        ? `SHA-256 ${hash} is in Timeseal's public ledger of ${publishedDays.join(', ')}. Open the link to check its inclusion proof and the ledger's signatures in your browser.`
        : `SHA-256 ${hash}: open the link to search Timeseal's public ledgers for it and check the answer in your browser.`,
  };
}

/** `html` (the built /verify page) with the preview tags of `hash`. */
export function withPreviewTags(html: string, url: string, preview: { title: string; description: string }): string {
  const attr = (text: string) => escapeHtml(text);
  const set = (text: string, pattern: RegExp, value: string) => text.replace(pattern, `$1${attr(value)}$2`);
  let out = set(html, /(<meta property="og:title" content=")[^"]*(")/, preview.title);
  out = set(out, /(<meta property="og:description" content=")[^"]*(")/, preview.description);
  out = set(out, /(<meta name="description" content=")[^"]*(")/, preview.description);
  return out.replace(
    /(<meta property="og:type" content="[^"]*">)/,
    `$1\n<meta property="og:url" content="${attr(url)}">`,
  );
}

export const verifyPreviewRoutes: TypedRoutes<Services> = async (app, s) => {
  const site = path.resolve(s.ingest.site);
  const base = s.config.origin.replace(/\/+$/, '');
  const budget = lookupBudget(s.ingest.statusLookupRate);
  // A page's address carries whatever links add to it (search=true, a campaign's tags): nothing is refused here.
  const schema = { querystring: { type: 'object', additionalProperties: true }, hide: true } as const;
  const page = async (query: unknown, ip: string, reply: FastifyReply, rel: string) => {
    const given = (query as Record<string, unknown>).hash;
    const hash = typeof given === 'string' ? given.trim().toLowerCase() : '';
    if (!/^[0-9a-f]{64}$/.test(hash)) return serveSite(site, reply.request, reply, rel);
    let html: string;
    try {
      html = await fs.promises.readFile(path.join(site, VERIFY_PAGE), 'utf8');
    } catch {
      return serveSite(site, reply.request, reply, rel);
    }
    const days = budget.take(ip, s.clock()) === null ? s.archive.find(hash).map((o) => o.date) : [];
    const url = `${base}/verify?hash=${hash}&search=true`;
    return reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', CACHE_REVALIDATE)
      .send(withPreviewTags(html, url, verifyPreview(hash, [...new Set(days)])));
  };
  app.get('/verify', { schema }, async (request, reply) => page(request.query, request.ip, reply, 'verify'));
  app.get('/verify/', { schema }, async (request, reply) => page(request.query, request.ip, reply, 'verify/'));
};
