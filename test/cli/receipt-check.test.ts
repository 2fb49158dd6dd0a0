// `timeseal receipt check` (cli/commands/receipt.ts) on receipts a real `serve` signed: from the beta API with
// "receipt": true, from the site's /api/submit, and from POST /tsa for a SHA-512 imprint made by
// `openssl ts -query`. Before the day is built each is pending (exit 2); after `ledger build` each is kept
// (exit 0: the signed ledger holds it, and its inclusion proof checks against the day's signed checkpoint),
// from the archive folder and from the archive's URL; a receipt whose row was deleted from the database before
// the build (a broken promise, staged here) is broken (exit 1); a flipped byte, another digest or another
// TSA root make it invalid (exit 1).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { removeTempProjects, run, runJson, tempProject } from './helpers.ts';
import type { BetaAnswer } from '../../ingest/routes/beta.ts';
import type { SubmitAnswer } from '../../ingest/routes/submit.ts';

const DAY = '2025-11-02';
const NOW = `${DAY}T12:00:00.250Z`;
const NEXT = '2025-11-03T00:01:00.000Z';
const hex = (): string => crypto.randomBytes(32).toString('hex');

let dir: string;
let env: Record<string, string>;
let server: SpawnedServer | undefined;
const kept = hex();
const broken = hex();
let docHash: string;

const stop = async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  server = undefined;
};

/** POSTs JSON, writes the answer's receipt to `name`.tsr. */
async function jsonReceipt(route: string, body: object, name: string): Promise<void> {
  const res = await fetch(`${server!.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  const answer = (await res.json()) as SubmitAnswer | BetaAnswer;
  expect(answer.submittedAt).toBe(NOW);
  fs.writeFileSync(path.join(dir, `${name}.tsr`), Buffer.from(answer.receipt!, 'base64'));
}

const check = (args: string[], extra: Record<string, string> = {}) =>
  runJson(dir, ['receipt', 'check', ...args, '--json'], { env: { ...env, TIMESEAL_NOW: NEXT, ...extra } });

beforeAll(async () => {
  dir = tempProject('receipt-check');
  env = projectEnv(dir, { LOG_FORMAT: 'json' });
  const init = run(dir, ['keys', 'init'], { env: { ...env, TIMESEAL_NOW: `${DAY}T00:00:00.000Z` } });
  expect(init.code, init.stderr).toBe(0);
  fs.writeFileSync(path.join(dir, 'doc.txt'), 'a document with a receipt\n');
  docHash = crypto
    .createHash('sha256')
    .update(fs.readFileSync(path.join(dir, 'doc.txt')))
    .digest('hex');
  server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });
  await jsonReceipt('/api/v1/beta/timestamp', { hash: kept, receipt: true }, 'kept');
  await jsonReceipt('/api/v1/beta/timestamp', { hash: broken, receipt: true }, 'broken');
  await jsonReceipt('/api/submit', { hash: docHash }, 'site');
  execFileSync('openssl', ['ts', '-query', '-data', 'doc.txt', '-sha512', '-cert', '-out', 'doc512.tsq'], {
    cwd: dir,
    stdio: 'pipe',
  });
  const res = await fetch(`${server.url}/tsa`, {
    method: 'POST',
    headers: { 'content-type': 'application/timestamp-query' },
    body: fs.readFileSync(path.join(dir, 'doc512.tsq')),
  });
  expect(res.status).toBe(200);
  fs.writeFileSync(path.join(dir, 'doc512.tsr'), Buffer.from(await res.arrayBuffer()));
}, 90_000);
afterAll(async () => {
  await stop();
  removeTempProjects();
});

describe('timeseal receipt check', () => {
  test('before the day is built: pending, exit 2', () => {
    const { result, json } = check(['kept.tsr', '--digest', kept], { TIMESEAL_NOW: '2025-11-02T18:00:00.000Z' });
    expect(result.code, result.stderr).toBe(2);
    expect(json.state).toBe('pending');
    expect(json.token.genTime).toBe(NOW);
    expect(json.ledger).toMatchObject({ date: DAY, hash: kept });
    expect(json.promise.reason).toMatch(/the ledger of 2025-11-02 is not published yet/);
  });

  test('after the build: kept (folder), each kind of receipt; the staged broken promise: broken', async () => {
    await stop();
    // The broken promise: the acknowledged row disappears before the build.
    const db = new Database(path.join(dir, 'data/timeseal.db'));
    expect(db.prepare('DELETE FROM submissions WHERE hash = ?').run(broken).changes).toBe(1);
    db.close();
    const built = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: NEXT } });
    expect(built.code, built.stderr).toBe(0);

    for (const args of [
      ['kept.tsr', '--digest', kept],
      ['site.tsr', '--file', 'doc.txt'],
      ['site.tsr', '--digest', docHash.toUpperCase()],
      ['doc512.tsr', '--file', 'doc.txt'],
    ]) {
      const { result, json } = check(args);
      expect(result.code, `${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(0);
      expect(json.state).toBe('kept');
      expect(json.promise).toMatchObject({ state: 'kept', date: DAY, recordedAt: NOW, treeSize: 3 }); // four acknowledged, one row deleted
      expect(json.promise.leafIndex).toBeGreaterThanOrEqual(0);
      expect(json.promise.leafIndex).toBeLessThan(3);
    }
    // The SHA-512 receipt's ledger hash is the SHA-256 of its TSTInfo, not the document's SHA-256.
    const sha512 = check(['doc512.tsr', '--file', 'doc.txt']).json;
    expect(sha512.token.imprintAlgorithm).toBe('SHA-512');
    expect(sha512.token.imprint).toBe(
      crypto
        .createHash('sha512')
        .update(fs.readFileSync(path.join(dir, 'doc.txt')))
        .digest('hex'),
    );
    expect(sha512.ledger.hash).not.toBe(docHash);

    const human = run(dir, ['receipt', 'check', 'kept.tsr', '--digest', kept], { env: { ...env, TIMESEAL_NOW: NEXT } });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /^KEPT: the signed ledger of 2025-11-02 holds it at leaf \d+ \(recorded 2025-11-02T12:00:00\.250Z\); its inclusion proof \(\d+ hashes\) checks against the day's signed checkpoint \(tree size 3\)\.$/m,
    );

    const bad = run(dir, ['receipt', 'check', 'broken.tsr', '--digest', broken], {
      env: { ...env, TIMESEAL_NOW: NEXT },
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(
      /^BROKEN: the ledger of 2025-11-02 is published and does not hold [0-9a-f]{64}: the receipt is evidence of a broken promise\.$/m,
    );
  }, 60_000);

  test('invalid: a flipped byte, another digest, a digest of the wrong length, another TSA root (exit 1)', () => {
    const der = fs.readFileSync(path.join(dir, 'kept.tsr'));
    der[der.length - 30]! ^= 0x01;
    fs.writeFileSync(path.join(dir, 'flipped.tsr'), der);
    const flipped = check(['flipped.tsr', '--digest', kept]);
    expect(flipped.result.code).toBe(1);
    expect(flipped.json.state).toBe('invalid');
    const other = check(['kept.tsr', '--digest', broken]);
    expect(other.result.code).toBe(1);
    expect(other.json.reason).toMatch(/for another SHA-256 digest/);
    expect(check(['kept.tsr', '--digest', kept.slice(0, 62)]).json.reason).toMatch(/64 hexadecimal characters/);
    // A root of another authority (a fresh self-signed certificate): the chain does not lead to it.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        'other.key',
        '-out',
        'other-root.pem',
        '-subj',
        '/CN=Another root',
        '-days',
        '3650',
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    const rooted = check(['kept.tsr', '--digest', kept, '--tsa-root', 'other-root.pem']);
    expect(rooted.result.code).toBe(1);
    expect(rooted.json.reason).toMatch(/does not lead to|not signed by/);
  });

  test('usage (exit 64): exactly one of --file and --digest; a receipt that is not there (exit 3)', () => {
    const neither = run(dir, ['receipt', 'check', 'kept.tsr'], { env });
    expect(neither.code).toBe(64);
    expect(neither.stderr).toMatch(/--file F\) or its digest \(--digest HEX\)/);
    const missing = run(dir, ['receipt', 'check', 'nothing.tsr', '--digest', kept], { env });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/cannot read the receipt nothing\.tsr: no such file/);
  });

  test('from the archive URL of a running server: kept, and the keys came from that host', async () => {
    server = await startServer(dir, { ...env, TIMESEAL_NOW: '2025-11-03T12:00:00.000Z' });
    const { result, json } = check(['kept.tsr', '--digest', kept, '--archive', `${server.url}/ledgers/`]);
    expect(result.code, result.stderr).toBe(0);
    expect(json.state).toBe('kept');
    expect(json.keys.from).toBe('archive host');
    expect(result.stderr).toMatch(/pin them with --keys/);
    const bad = check(['broken.tsr', '--digest', broken, '--archive', `${server.url}/ledgers/`]);
    expect(bad.json.state).toBe('broken');
  }, 60_000);
});
