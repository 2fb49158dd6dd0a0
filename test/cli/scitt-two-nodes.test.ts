// SCITT registrations are durable before the answer on several nodes (docs/API.md "SCITT"; the promise of a 2xx):
// two `timeseal serve` nodes share one PostgreSQL, a stream of Signed Statements (made by @transmute/cose's own
// signer) goes to both, one node is killed with SIGKILL in the middle of the stream, the other goes on. After
// `timeseal ledger build`, every statement either node answered 303 is in the day's statements file, in its
// form on the log, and its entry is a leaf of the day; nothing was answered 303 that is not.
import fs from 'node:fs';
import path from 'node:path';
import * as cose from '@transmute/cose';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { postgresForSuite } from '../support/postgres.ts';
import { arrayBuffer, entryOf, ISS, signStatement } from './cose-helpers.ts';
import { removeTempProjects, run, tempProject } from './helpers.ts';

afterAll(() => removeTempProjects());
const db = postgresForSuite();

const DAY = '2025-11-02';
/** Statements per node, sent by CONCURRENCY clients each. */
const PER_NODE = 120;
const CONCURRENCY = 6;
/** Node 0 is killed once it has answered this many 303s (its other clients' requests are in flight). */
const KILL_AFTER = 30;

describe('SCITT registration on two nodes sharing one PostgreSQL', () => {
  const servers: SpawnedServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
      await s.exited;
    }
  });

  test('a node killed with SIGKILL mid-stream: every statement either node answered 303 is in the built day', async () => {
    const dir = tempProject('scitt-two-nodes');
    const issuerKey = await cose.key.generate<cose.SecretKeyJwk>('ES256', 'application/jwk+json');
    const issuerPublic = await cose.key.publicFromPrivate<cose.PublicKeyJwk>(issuerKey);
    fs.writeFileSync(path.join(dir, 'issuers.json'), JSON.stringify({ [ISS]: [issuerPublic] }));
    const env = projectEnv(dir, {
      TIMESEAL_DATABASE_URL: db.url,
      SCITT_ISSUER_KEYS: path.join(dir, 'issuers.json'),
    });
    const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
    expect(init.code, init.stderr).toBe(0);
    // Each node its own TIMESEAL_DB (serve still opens its SQLite file at start: store/test/postgres.test.ts).
    for (const i of [0, 1])
      servers.push(
        await startServer(dir, {
          ...env,
          TIMESEAL_DB: path.join(dir, `data/node-${i}.db`),
          TIMESEAL_NOW: `${DAY}T12:00:00.000Z`,
        }),
      );
    const statements = await Promise.all(
      Array.from({ length: 2 * PER_NODE }, (_, i) =>
        signStatement(issuerKey, new TextEncoder().encode(JSON.stringify({ artifact: i }))),
      ),
    );

    const acknowledged: Array<{ node: number; entry: string; statement: Uint8Array }> = [];
    const failedOnKilled: string[] = [];
    let killed = false;
    const stream = (node: number) => {
      const mine = statements.slice(node * PER_NODE, (node + 1) * PER_NODE);
      let next = 0;
      return Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < mine.length) {
            const statement = mine[next++]!;
            let status: number;
            try {
              const res = await fetch(`${servers[node]!.url}/entries`, {
                method: 'POST',
                headers: { 'content-type': 'application/cose' },
                body: Buffer.from(statement),
                redirect: 'manual',
              });
              await res.arrayBuffer();
              status = res.status;
            } catch (err) {
              // Only the killed node may fail to answer.
              expect(node === 0 && killed, String(err)).toBe(true);
              failedOnKilled.push(String((err as Error).cause ?? err));
              continue;
            }
            expect(status, `node ${node}`).toBe(303);
            acknowledged.push({ node, entry: await entryOf(statement), statement });
            if (node === 0 && !killed && acknowledged.filter((a) => a.node === 0).length >= KILL_AFTER) {
              killed = true;
              servers[0]!.child.kill('SIGKILL');
            }
          }
        }),
      );
    };
    await Promise.all([stream(0), stream(1)]);
    expect((await servers[0]!.exited).signal).toBe('SIGKILL');
    const byNode = (n: number) => acknowledged.filter((a) => a.node === n).length;
    // Node 0 answered at least KILL_AFTER before it died, and not all of its share; node 1 answered all of its.
    expect(byNode(0)).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(byNode(0)).toBeLessThan(PER_NODE);
    expect(failedOnKilled.length).toBeGreaterThan(0);
    expect(byNode(1)).toBe(PER_NODE);

    servers[1]!.child.kill('SIGTERM');
    await servers[1]!.exited;
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' } });
    expect(built.code, built.stderr).toBe(0);

    // The day's statements file, read with @transmute/cose's CBOR: every acknowledged statement, as on the log.
    const file = fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.statements.cbor`));
    const published = new Map<string, Buffer>();
    for (const b of cose.cbor.decode(file) as Uint8Array[]) published.set(await entryOf(b), Buffer.from(b));
    const ledger = fs.readFileSync(path.join(dir, 'ledgers', `${DAY}.json`), 'utf8');
    const missing = acknowledged.filter((a) => !published.has(a.entry)).map((a) => `node ${a.node}: ${a.entry}`);
    expect(missing).toEqual([]);
    for (const a of acknowledged) {
      expect(
        published.get(a.entry)!.equals(Buffer.from(await cose.receipt.remove(arrayBuffer(a.statement)))),
        a.entry,
      ).toBe(true);
      expect(ledger).toContain(a.entry);
    }
    // Beside them only the registration policy and statements node 0 stored but could not answer before it died.
    expect(published.size).toBeGreaterThanOrEqual(acknowledged.length + 1);
    expect(published.size).toBeLessThanOrEqual(2 * PER_NODE + 1);
  }, 300_000);
});
