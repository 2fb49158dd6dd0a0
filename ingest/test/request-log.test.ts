// The request log: a record per failed answer, a per-interval summary for the rest, never an address or URL.
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { registerRequestLog } from '../request-log.ts';

async function logOf(level: string, requests: string[]): Promise<Array<Record<string, unknown>>> {
  const lines: string[] = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(line) });
  const app = Fastify({ loggerInstance: logger, disableRequestLogging: true });
  registerRequestLog(app as unknown as FastifyInstance, { intervalMs: 60_000 });
  app.get('/ok/:hash', async () => ({ ok: true }));
  app.get('/bad', async (_request, reply) => reply.code(400).send({ error: 'no' }));
  await app.ready();
  for (const url of requests) await app.inject({ url, remoteAddress: '203.0.113.9' });
  await app.close();
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

const HASH = 'ab'.repeat(32);

describe('request log', () => {
  it('logs each failed answer, and successful ones only in the summary written on close', async () => {
    const records = await logOf('info', [`/ok/${HASH}`, `/ok/${HASH}`, '/bad', `/ok/${HASH}`]);
    const failed = records.filter((r) => r.msg === 'request');
    expect(failed).toEqual([expect.objectContaining({ method: 'GET', route: '/bad', status: 400 })]);
    const summaries = records.filter((r) => r.msg === 'requests answered');
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.requests).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ method: 'GET', route: '/ok/:hash', status: 200, count: 3 }),
        expect.objectContaining({ method: 'GET', route: '/bad', status: 400, count: 1 }),
      ]),
    );
    const text = JSON.stringify(records);
    expect(text).not.toContain(HASH);
    expect(text).not.toContain('203.0.113.9');
  });

  it('a flood of the same failure is one record and a count in the summary, not a record each', async () => {
    const records = await logOf('info', [...Array.from({ length: 1000 }, () => '/bad'), `/ok/${HASH}`]);
    expect(records.filter((r) => r.msg === 'request')).toHaveLength(1);
    const summary = records.find((r) => r.msg === 'requests answered')!;
    expect(summary.requests).toEqual(
      expect.arrayContaining([expect.objectContaining({ route: '/bad', status: 400, count: 1000 })]),
    );
  });

  it('at debug, logs every answer', async () => {
    const records = await logOf('debug', [`/ok/${HASH}`, '/bad']);
    expect(records.filter((r) => r.msg === 'request').map((r) => r.status)).toEqual([200, 400]);
  });
});
