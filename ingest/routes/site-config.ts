// GET /api/site-config: the few deployment settings the static site shows, read at run time since the
// site is built once for every deployment. Today only `donationUrl` (DONATION_URL, the Beta API page:
// "a donation link to a card payment provider"): the /beta-api page shows a "Donate by card" link when it is a
// URL and nothing when it is null.
import { noQuery, plainErrors, type TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';

export const siteConfigRoutes: TypedRoutes<Services> = async (app, s) => {
  app.get(
    '/api/site-config',
    {
      schema: {
        querystring: noQuery,
        response: {
          200: {
            type: 'object',
            properties: { donationUrl: { type: ['string', 'null'], description: 'DONATION_URL, or null when unset' } },
            required: ['donationUrl'],
          },
          ...plainErrors,
        },
      },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'no-cache');
      return { donationUrl: s.ingest.donationUrl ?? null };
    },
  );
};
