// Route schemas compiled at each route's first request (ingest/lazy-schemas.ts): the server answers every bad
// request exactly as with Fastify's own eager compilers, every schema of the app compiles (the eager app is
// ready only if they all do), and an app that has answered nothing has compiled nothing.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app, serverOptions } from '../app.ts';
import { fastifyCompilers, lazySchemaController } from '../lazy-schemas.ts';
import { fixtureAppOptions, makeFixture, randomHash, removeTempDirs, type Fixture } from './fixture.ts';

let f: Fixture;

beforeAll(async () => {
  f = await makeFixture();
});

afterAll(async () => {
  await f?.close();
  removeTempDirs();
});

/** The fixture's app on other schema compilers. */
async function appWith(schemaController: ReturnType<typeof lazySchemaController> | undefined) {
  const server = Fastify({ ...serverOptions(f.ingest), schemaController });
  await server.register(app, fixtureAppOptions(f));
  await server.ready();
  return server;
}

const BAD_REQUESTS = [
  { method: 'POST', url: '/api/v1/beta/timestamp', payload: { hash: 'xyz' } },
  { method: 'POST', url: '/api/v1/beta/timestamp', payload: { hash: randomHash(), fileName: 'a' } },
  { method: 'POST', url: '/api/v1/beta/timestamp', payload: {} },
  { method: 'POST', url: '/api/v1/beta/timestamps', payload: { hashes: 'not a list' } },
  { method: 'POST', url: '/api/submit', payload: { hashes: 'not a list' } },
  { method: 'POST', url: '/api/contact', payload: { name: 'n', email: 'a@example.com', message: 'm'.repeat(5001) } },
  { method: 'GET', url: '/api/proof/abc' },
  { method: 'GET', url: '/api/status/nothex' },
  { method: 'GET', url: '/api/ledgers.php?limit=many' },
  { method: 'GET', url: '/api/certificate.php?hash=nothex' },
] as const;

describe('route schemas compiled at first use', () => {
  it('answers every bad request as the eagerly compiled app does, whose every schema compiles', async () => {
    const eager = await appWith(undefined);
    const lazy = await appWith(lazySchemaController());
    try {
      for (const request of BAD_REQUESTS) {
        const [a, b] = [await eager.inject(request), await lazy.inject(request)];
        expect(b.statusCode, request.url).toBe(a.statusCode);
        expect(b.statusCode, request.url).toBeGreaterThanOrEqual(400);
        expect(b.statusCode, request.url).toBeLessThan(500);
        expect(b.body, request.url).toBe(a.body);
      }
      // Answers written by the compiled serializers.
      for (const url of [`/api/status/${f.published[0]}`, '/api/ledgers.php', '/api/queue-stats.php']) {
        const [a, b] = [await eager.inject(url), await lazy.inject(url)];
        expect(b.statusCode, url).toBe(200);
        expect(b.body, url).toBe(a.body);
      }
    } finally {
      await eager.close();
      await lazy.close();
    }
  });

  it('compiles nothing until a route is asked, then only what that route uses', async () => {
    const compiled: string[] = [];
    const fastify = fastifyCompilers();
    const server = await appWith(
      lazySchemaController({
        buildValidator: (externalSchemas, options) => {
          const compile = fastify.buildValidator(externalSchemas, options);
          return (route) => (compiled.push(`${route.method} ${route.url} ${route.httpPart}`), compile(route));
        },
        buildSerializer: (externalSchemas, options) => {
          const compile = fastify.buildSerializer(externalSchemas, options);
          return (route) => (compiled.push(`${route.method} ${route.url} ${route.httpStatus}`), compile(route));
        },
      }),
    );
    try {
      expect(compiled).toEqual([]);
      const res = await server.inject({ method: 'POST', url: '/api/v1/beta/timestamp', payload: { hash: 'xyz' } });
      expect(res.statusCode).toBe(400);
      expect(compiled).toContain('POST /api/v1/beta/timestamp body');
      expect(compiled.every((c) => c.startsWith('POST /api/v1/beta/timestamp '))).toBe(true);
    } finally {
      await server.close();
    }
  });
});
