// Rotating the COSE receipt keys (`timeseal keys rotate-receipt`, docs/FORMAT.md §11), black box: a day signed
// before the rotation and a day after; the served key set lists the new keys and the retired ones with the days
// they signed, @transmute/cose verifies both days' ES256 receipts against it, a re-check of the old day and
// `timeseal verify` still pass.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { cbor, detached, key as coseKey, receipt as coseReceipt } from '@transmute/cose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { projectEnv, startServer, type SpawnedServer } from '../../ingest/test/fixture.ts';
import { makeHashes, removeTempProjects, run, runJson, tempProject } from './helpers.ts';

afterAll(() => removeTempProjects());

const DAY1 = '2025-11-02';
const DAY2 = '2025-11-03';
const leafHash = (hex: string): Uint8Array =>
  crypto
    .createHash('sha256')
    .update(Buffer.concat([Buffer.of(0), Buffer.from(hex, 'hex')]))
    .digest();
const arrayBuffer = (b: Uint8Array): ArrayBuffer =>
  b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

describe('timeseal keys rotate-receipt', () => {
  let dir: string;
  let env: Record<string, string>;
  let server: SpawnedServer | undefined;
  const day1 = makeHashes('rotation-1', 5);
  const day2 = makeHashes('rotation-2', 5);
  let rotated: { created: string[]; retired_days: string[] };

  beforeAll(async () => {
    dir = tempProject('receipt-rotation');
    env = projectEnv(dir, { LOG_FORMAT: 'json', TIMESEAL_ORIGIN: 'https://timeseal.test' });
    const at = (now: string) => ({ env: { ...env, TIMESEAL_NOW: now } });
    const must = (args: string[], now: string, input?: string) => {
      const r = run(dir, args, { ...at(now), ...(input === undefined ? {} : { input }) });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    };
    must(['keys', 'init'], `${DAY1}T00:00:00Z`);
    must(['import', '-'], `${DAY1}T10:00:00Z`, `${day1.join('\n')}\n`);
    must(['ledger', 'build'], `${DAY2}T00:01:00Z`);
    const r = runJson(dir, ['keys', 'rotate-receipt', '--json'], at(`${DAY2}T08:00:00Z`));
    expect(r.result.code, r.result.stderr).toBe(0);
    rotated = r.json;
    must(['import', '-'], `${DAY2}T10:00:00Z`, `${day2.join('\n')}\n`);
    must(['ledger', 'build'], '2025-11-04T00:01:00Z');
    server = await startServer(dir, { ...env, TIMESEAL_NOW: '2025-11-04T09:00:00Z' });
  }, 120_000);
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  test('the retired keys are listed with the days they signed; the key set holds the new keys then the retired ones', async () => {
    expect(rotated.retired_days).toEqual([DAY1, DAY1]);
    for (const f of ['receipt_es256_private.pem', 'receipt_mldsa65_private.pem'])
      expect(fs.statSync(path.join(dir, 'data/private-keys', f)).mode & 0o777, f).toBe(0o600);
    const retired = fs.readFileSync(path.join(dir, 'keys/receipt-keys.retired'), 'utf8').trim().split('\n');
    expect(retired.map((l) => l.split(' ').slice(0, 4).join(' '))).toEqual([
      `retired ES256 ${DAY1} ${DAY1}`,
      `retired ML-DSA-65 ${DAY1} ${DAY1}`,
    ]);
    const keys = cbor.decode(
      new Uint8Array(await (await fetch(`${server!.url}/.well-known/scitt-keys`)).arrayBuffer()),
    ) as Map<number | string, unknown>[];
    expect(keys.map((k) => [k.get(3), k.get('timeseal-days') ?? null])).toEqual([
      [-7, null],
      [-49, null],
      [-7, [DAY1, DAY1]],
      [-49, [DAY1, DAY1]],
    ]);
  });

  test('@transmute/cose verifies a receipt of each day against the served key set; the two days name different kids', async () => {
    const keySet = cbor.decode(
      new Uint8Array(await (await fetch(`${server!.url}/.well-known/scitt-keys`)).arrayBuffer()),
    ) as Map<number, unknown>[];
    const kidOf = (sign1: Uint8Array) => {
      const tagged = cbor.decode(sign1) as { value: [Uint8Array] };
      return Buffer.from((cbor.decode(tagged.value[0]) as Map<number, Uint8Array>).get(4)!).toString('hex');
    };
    const verifier = detached.verifier({
      resolver: {
        resolve: async (sign1: ArrayBuffer) => {
          const kid = kidOf(new Uint8Array(sign1));
          const found = keySet.find((k) => Buffer.from(k.get(2) as Uint8Array).toString('hex') === kid);
          if (found === undefined) throw new Error(`no key ${kid}`);
          return coseKey.convertCoseKeyToJsonWebKey(found as never);
        },
      },
    });
    const kids: string[] = [];
    for (const hash of [day1[0]!, day2[0]!]) {
      const receipt = new Uint8Array(
        await (await fetch(`${server!.url}/api/proof/${hash}.receipt.cose`)).arrayBuffer(),
      );
      await expect(
        coseReceipt.inclusion.verify({ entry: leafHash(hash), receipt: arrayBuffer(receipt), verifier }),
      ).resolves.toBeDefined();
      kids.push(kidOf(receipt));
    }
    expect(kids[0]).not.toBe(kids[1]);
  });

  test('the old day re-checks with its retired key, and timeseal verify passes with the retired keys', () => {
    const atNext = { env: { ...env, TIMESEAL_NOW: '2025-11-04T09:00:00Z' } };
    const recheck = run(dir, ['ledger', 'build', '--date', DAY1], atNext);
    expect(recheck.code, recheck.stderr).toBe(0);
    const verify = run(dir, ['verify'], atNext);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    // Without the retired list, the old day's signature has no key: verify names it.
    const retired = path.join(dir, 'keys/receipt-keys.retired');
    const text = fs.readFileSync(retired);
    fs.rmSync(retired);
    try {
      const bad = run(dir, ['verify'], atNext);
      expect(bad.code).toBe(1);
      expect(bad.stdout + bad.stderr).toMatch(
        new RegExp(
          `${DAY1}\\.receipt-es256\\.cose: receipt signature kid: [0-9a-f]{64} is none of the ES256 receipt keys`,
        ),
      );
    } finally {
      fs.writeFileSync(retired, text);
    }
  });
});
