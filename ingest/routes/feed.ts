// GET /ledgers/feed.xml: an Atom feed (RFC 4287) of the newest published days, so that people and tools can
// follow the service without polling the API. One entry a day — its size, its ledger and signatures, and where
// its Bitcoin anchoring stands — newest first, at most FEED_DAYS of them: the feed costs the same whatever the
// archive's age (the archive view keeps days.json parsed, archive-view.ts). An entry's `updated` is the
// day's publication time (00:01 UTC the next day); its anchoring line changes in place once the day is anchored.
import { FEED_PATH, ledgerOtsPath, ledgerPath } from '../../core/archive.ts';
import { escapeHtml } from './certificate.ts';
import { publicationTime } from './beta.ts';
import { noQuery, type TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';

/** Days in the feed. */
export const FEED_DAYS = 30;

export const feedRoutes: TypedRoutes<Services> = async (app, s) => {
  const base = s.config.origin.replace(/\/+$/, '');
  const schema = {
    querystring: noQuery,
    hide: false,
    summary: `An Atom feed of the newest ${FEED_DAYS} published days`,
    tags: ['status'],
    response: { 200: { type: 'string', description: 'application/atom+xml (RFC 4287)' } },
  };
  app.get(`/ledgers/${FEED_PATH}`, { schema }, async (_request, reply) => {
    const days = s.archive.days();
    const recent = days.slice(-FEED_DAYS).reverse();
    const blocks = s.archive.blockInfo();
    const x = escapeHtml;
    const entries = recent.map((d) => {
      const url = `${base}/ledgers/${ledgerPath(d.date)}`;
      const block = blocks[d.date];
      const anchoring =
        s.archive.otsState(d.date) === 'verified'
          ? `Anchored in Bitcoin${block?.block_height != null ? ` block ${block.block_height}` : ''} through OpenTimestamps (${base}/ledgers/${ledgerOtsPath(d.date)}).`
          : 'Bitcoin anchoring pending: the OpenTimestamps proof is upgraded once a block confirms it (usually within 12 to 24 hours).';
      const text = `${d.entryCount} hash${d.entryCount === 1 ? '' : 'es'}, leaves ${d.firstIndex} to ${d.treeSize - 1} of the log (tree size ${d.treeSize}, root ${d.root}). Ledger SHA-256 ${d.sha256}, signed with ECDSA P-256 and ML-DSA-65. ${anchoring}`;
      return [
        '<entry>',
        `<id>${x(url)}</id>`,
        `<title>Ledger of ${d.date}: ${d.entryCount} hash${d.entryCount === 1 ? '' : 'es'}</title>`,
        `<updated>${publicationTime(d.date)}</updated>`,
        `<link rel="alternate" type="application/json" href="${x(url)}"/>`,
        `<summary>${x(text)}</summary>`,
        '</entry>',
      ].join('\n');
    });
    const updated = recent[0] ? publicationTime(recent[0].date) : '1970-01-01T00:00:00.000Z';
    const feed = [
      '<?xml version="1.0" encoding="utf-8"?>',
      '<feed xmlns="http://www.w3.org/2005/Atom">',
      `<id>${x(`${base}/ledgers/${FEED_PATH}`)}</id>`,
      '<title>Timeseal ledgers</title>',
      `<subtitle>Each day's public ledger of timestamped SHA-256 hashes, dual-signed and anchored to Bitcoin.</subtitle>`,
      `<updated>${updated}</updated>`,
      `<link rel="self" type="application/atom+xml" href="${x(`${base}/ledgers/${FEED_PATH}`)}"/>`,
      `<link rel="alternate" type="text/html" href="${x(`${base}/ledgers`)}"/>`,
      `<author><name>Timeseal</name><uri>${x(base)}</uri></author>`,
      ...entries,
      '</feed>',
      '',
    ].join('\n');
    return reply.header('Cache-Control', 'no-cache').type('application/atom+xml; charset=utf-8').send(feed);
  });
};
