// What browsers and search engines ask a site for by name: GET /robots.txt (everything may be crawled except
// the API; the sitemap's address), GET /sitemap.xml (the public pages of the built site, at TIMESEAL_ORIGIN:
// a sitemap names absolute addresses, which the site, built once for every deployment, cannot know) and
// GET /favicon.ico (a permanent redirect to the site's /favicon.svg, for clients that ask before reading the page).
import fs from 'node:fs';
import path from 'node:path';
import { escapeHtml } from './certificate.ts';
import { noQuery, type TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';

/** The public pages a sitemap lists, when the built site has them (the account screens are left out). */
export const SITEMAP_PAGES = [
  '/',
  '/proof',
  '/verify',
  '/use-cases',
  '/ledgers',
  '/live',
  '/pricing',
  '/contact',
  '/quantum-shield',
  '/beta-api',
  '/tsa-policy',
  '/privacy',
  '/terms',
];

export const crawlerRoutes: TypedRoutes<Services> = async (app, s) => {
  const base = s.config.origin.replace(/\/+$/, '');
  const schema = { querystring: noQuery, hide: true };
  const built = (page: string) =>
    fs.existsSync(path.join(path.resolve(s.ingest.site), page === '/' ? '' : page.slice(1), 'index.html'));

  app.get('/robots.txt', { schema }, async (_request, reply) =>
    reply
      .type('text/plain; charset=utf-8')
      .header('Cache-Control', 'public, max-age=3600')
      .send(`User-agent: *\nDisallow: /api/\nAllow: /\n\nSitemap: ${base}/sitemap.xml\n`),
  );

  app.get('/sitemap.xml', { schema }, async (_request, reply) => {
    const urls = SITEMAP_PAGES.filter(built).map((p) => `  <url><loc>${escapeHtml(`${base}${p}`)}</loc></url>`);
    return reply
      .type('application/xml; charset=utf-8')
      .header('Cache-Control', 'public, max-age=3600')
      .send(
        `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}\n</urlset>\n`,
      );
  });

  app.get('/favicon.ico', { schema }, async (_request, reply) => reply.redirect('/favicon.svg', 301));
};
