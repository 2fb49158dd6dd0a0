// A promise broken by omission, in the client's library: core/omission.ts OmissionPass checks a day's signed ledger
// given in pieces of any size (both signatures, the date, the origin, which hashes it holds, with their leaves);
// client/src/omission.ts fetchDayLedger reads the ledger from a stand-in server a KiB at a time and hands each
// piece to the sink as it arrives (the first before the last is read: the day is never held), keeps it only when it
// checks and a hash is absent, and discards it otherwise; the proof file's version 2 is parsed strictly, and every
// proof without `omittedFrom` stays version 1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { DAYS_PATH } from '../../core/archive-paths.ts';
import { encodeDays } from '../../core/archive.ts';
import { toBase64, toHex } from '../../core/encoding.ts';
import { encodeLedger, type LedgerEntry } from '../../core/ledger.ts';
import { OmissionPass } from '../../core/omission.ts';
import { sha256 } from '../../core/hash.ts';
import { ecdsaKeygen, ecdsaPublicKeyToPem, ecdsaSign, mldsaKeygen, mldsaSign } from '../../core/sig.ts';
import { keepOmissions } from '../../client/src/cli/omission.ts';
import { TimesealClientError } from '../../client/src/errors.ts';
import { loadKeys } from '../../client/src/keys.ts';
import { fetchDayLedger, type LedgerSink } from '../../client/src/omission.ts';
import { encodeProofFile, newProofFile, parseProofFile } from '../../client/src/proof-file.ts';

const DATE = '2025-11-02';
const ORIGIN = 'timeseal.test/log';
const SERVER = 'https://timeseal.test';
const ecdsa = ecdsaKeygen();
const mldsa = mldsaKeygen();
const keyFiles = { publicPem: ecdsaPublicKeyToPem(ecdsa.publicKey), dilithiumKey: toBase64(mldsa.publicKey) };
const keys = loadKeys(keyFiles);

const hashOf = (i: number) => toHex(sha256(new TextEncoder().encode(`leaf ${i}`)));
const entries: LedgerEntry[] = Array.from({ length: 200 }, (_, i) => hashOf(i))
  .sort()
  .map((hash, i) => ({ hash, submittedAt: `${DATE}T08:00:${String(i % 60).padStart(2, '0')}.000Z` }));
const FIRST = 17;
const ledger = encodeLedger({
  origin: ORIGIN,
  date: DATE,
  firstIndex: FIRST,
  treeSize: FIRST + entries.length,
  root: 'ab'.repeat(32),
  previous: null,
  entries,
});
const ecdsaSig = ecdsaSign(ledger, ecdsa.secretKey);
const mldsaSig = mldsaSign(ledger, mldsa.seed);
const absentHash = hashOf(1000);
const presentAt = 42;
const presentHash = entries[presentAt]!.hash;

describe('OmissionPass: a signed ledger in pieces', () => {
  test.each([1, 7, 4096, ledger.length])(
    'pieces of %i bytes: the absent hash absent, the present one at its leaf',
    (n) => {
      const pass = new OmissionPass(keys.set, [presentHash, absentHash]);
      for (let at = 0; at < ledger.length; at += n) pass.push(ledger.subarray(at, at + n));
      const facts = pass.finish(ecdsaSig, mldsaSig, { date: DATE, origin: ORIGIN, sha256: toHex(sha256(ledger)) });
      expect(facts.absent).toEqual([absentHash]);
      expect([...facts.present]).toEqual([[presentHash, FIRST + presentAt]]);
      expect(facts).toMatchObject({ size: ledger.length, head: { date: DATE, origin: ORIGIN, firstIndex: FIRST } });
    },
  );

  test('another SHA-256, another day, another origin, a changed byte: each refused, naming what differs', () => {
    const finish = (bytes: Uint8Array, expect: Parameters<OmissionPass['finish']>[2]) => () => {
      const pass = new OmissionPass(keys.set, [absentHash]);
      pass.push(bytes);
      return pass.finish(ecdsaSig, mldsaSig, expect);
    };
    expect(finish(ledger, { date: DATE, sha256: '00'.repeat(32) })).toThrow(/^2025-11-02\.json SHA-256: expected/);
    expect(finish(ledger, { date: '2025-11-03' })).toThrow(/signature does not verify|2025-11-03\.json date/);
    expect(finish(ledger, { date: DATE, origin: 'other.test/log' })).toThrow(/^2025-11-02\.json origin: expected/);
    const changed = new Uint8Array(ledger);
    changed[changed.length - 40]! ^= 0x01;
    expect(finish(changed, { date: DATE })).toThrow(/was altered after signing/);
  });
});

/** A stand-in server: days.json, the two signatures, and the ledger served a KiB at a time, each piece counted
 * as it is pulled. */
function server(listedSha256: string, served: Uint8Array = ledger) {
  const PIECE = 1024;
  let pulled = 0;
  let asked = 0;
  const pieces = Math.ceil(served.length / PIECE);
  const days = encodeDays({
    origin: ORIGIN,
    days: [
      {
        date: DATE,
        firstIndex: FIRST,
        entryCount: entries.length,
        treeSize: FIRST + entries.length,
        root: 'ab'.repeat(32),
        sha256: listedSha256,
      },
    ],
  });
  const fetch = async (url: string): Promise<Response> => {
    const file = url.slice(`${SERVER}/ledgers/`.length);
    if (file === DAYS_PATH) return new Response(days);
    if (file === `${DATE}.json.sig`) return new Response(Buffer.from(ecdsaSig));
    if (file === `${DATE}.json.dilithium.sig`) return new Response(Buffer.from(mldsaSig));
    if (file !== `${DATE}.json`) return new Response('not found', { status: 404 });
    asked++;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled === pieces) return controller.close();
          controller.enqueue(served.slice(pulled * PIECE, (pulled + 1) * PIECE));
          pulled++;
        },
      }),
    );
  };
  return { fetch, pulled: () => pulled, pieces, asked: () => asked };
}

function sink() {
  const seen = { writes: [] as number[], bytes: 0, kept: false, discarded: false, at: null as null | (() => number) };
  const s: LedgerSink = {
    write: async (piece) => {
      seen.writes.push(seen.at!());
      seen.bytes += piece.length;
    },
    keep: async () => {
      seen.kept = true;
    },
    discard: async () => {
      seen.discarded = true;
    },
  };
  return { s, seen };
}

describe('fetchDayLedger: downloaded in pieces, checked, kept only then', () => {
  test('each piece reaches the sink as it arrives; the ledger is kept for an absent hash', async () => {
    const srv = server(toHex(sha256(ledger)));
    const { s, seen } = sink();
    seen.at = srv.pulled;
    const facts = await fetchDayLedger(SERVER, DATE, [absentHash], keys, ORIGIN, s, { fetch: srv.fetch });
    expect(facts.absent).toEqual([absentHash]);
    expect(seen).toMatchObject({ bytes: ledger.length, kept: true, discarded: false });
    expect(srv.pieces).toBeGreaterThan(10);
    expect(seen.writes.length).toBeGreaterThan(10);
    // The first piece was written when at most two of the ledger's pieces had been read from the answer.
    expect(seen.writes[0]!).toBeLessThanOrEqual(2);
  });

  test('a hash the ledger holds: nothing kept, its leaf said', async () => {
    const srv = server(toHex(sha256(ledger)));
    const { s, seen } = sink();
    seen.at = srv.pulled;
    const facts = await fetchDayLedger(SERVER, DATE, [presentHash], keys, ORIGIN, s, { fetch: srv.fetch });
    expect(facts.present.get(presentHash)).toBe(FIRST + presentAt);
    expect(seen).toMatchObject({ kept: false, discarded: true });
  });

  test("days.json lists another SHA-256: refused ('invalid'), nothing kept", async () => {
    const srv = server('00'.repeat(32));
    const { s, seen } = sink();
    seen.at = srv.pulled;
    await expect(
      fetchDayLedger(SERVER, DATE, [absentHash], keys, ORIGIN, s, { fetch: srv.fetch }),
    ).rejects.toMatchObject({
      code: 'invalid',
      message: expect.stringMatching(
        /the day's signed ledger does not check with the pinned keys: 2025-11-02\.json SHA-256/,
      ),
    });
    expect(seen).toMatchObject({ kept: false, discarded: true });
  });
});

describe('fetchDayLedger: an answer larger than its day can be is cut off', () => {
  test('more bytes than the entry count days.json lists allows: refused at the cap, nothing kept', async () => {
    const huge = new Uint8Array(4096 + entries.length * 128 + 10_000).fill(0x20);
    const srv = server(toHex(sha256(ledger)), huge);
    const { s, seen } = sink();
    seen.at = srv.pulled;
    await expect(
      fetchDayLedger(SERVER, DATE, [absentHash], keys, ORIGIN, s, { fetch: srv.fetch }),
    ).rejects.toMatchObject({
      code: 'http',
      message: expect.stringMatching(/exceeds the \d+-byte limit of its kind; refused$/),
    });
    expect(seen).toMatchObject({ kept: false, discarded: true });
    expect(srv.pulled()).toBeLessThan(srv.pieces);
  });
});

describe('keepOmissions: one download per server and day, kept in each folder of its proofs', () => {
  test('two broken proofs of one day in two folders: the ledger asked for once, kept beside both, both version 2', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-omission-'));
    try {
      const srv = server(toHex(sha256(ledger)));
      const trust = {
        format: 'timeseal-client-trust/1' as const,
        servers: { [SERVER]: { pinnedAt: `${DATE}T00:00:00.000Z`, origin: ORIGIN, keys: keyFiles } },
        logs: {},
      };
      const hashes = [absentHash, hashOf(1001)];
      const files = ['a', 'b'].map((f, i) => {
        fs.mkdirSync(path.join(root, f));
        const file = path.join(root, f, `${hashes[i]}.timeseal.json`);
        fs.writeFileSync(file, encodeProofFile(newProofFile({ hash: hashes[i]!, server: SERVER, ledgerDate: DATE })));
        return file;
      });
      const results = files.map((file) => {
        const proof = parseProofFile(fs.readFileSync(file, 'utf8'));
        return {
          hash: proof.hash,
          proof,
          changed: false,
          stage: 'stamped' as const,
          complete: false,
          nextCheck: null,
          notes: [],
          error: new TimesealClientError('broken', 'the promise is broken'),
        };
      });
      await keepOmissions(results, files, { trust, fetch: srv.fetch });
      expect(srv.asked()).toBe(1);
      for (const [i, file] of files.entries()) {
        const kept = path.join(path.dirname(file), 'timeseal-ledgers', `${DATE}.json`);
        expect(new Uint8Array(fs.readFileSync(kept))).toEqual(ledger);
        expect(new Uint8Array(fs.readFileSync(`${kept}.sig`))).toEqual(ecdsaSig);
        expect(new Uint8Array(fs.readFileSync(`${kept}.dilithium.sig`))).toEqual(mldsaSig);
        expect(parseProofFile(fs.readFileSync(file, 'utf8')).omittedFrom).toEqual({
          date: DATE,
          ledger: `timeseal-ledgers/${DATE}.json`,
          sha256: toHex(sha256(ledger)),
          size: ledger.length,
        });
        expect(results[i]!.error.code).toBe('broken');
      }
      // No temporary file is left behind.
      expect(fs.readdirSync(path.join(root, 'a', 'timeseal-ledgers')).sort()).toEqual([
        `${DATE}.json`,
        `${DATE}.json.dilithium.sig`,
        `${DATE}.json.sig`,
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the proof file: version 2 only with omittedFrom, each version strict', () => {
  const v1 = newProofFile({ hash: absentHash, server: SERVER, ledgerDate: DATE }, new Date(`${DATE}T12:00:00.000Z`));
  const omittedFrom = {
    date: DATE,
    ledger: `timeseal-ledgers/${DATE}.json`,
    sha256: toHex(sha256(ledger)),
    size: ledger.length,
  };

  test('a proof without it is version 1; with it, version 2, and it reads back the same', () => {
    expect(JSON.parse(encodeProofFile(v1))).toMatchObject({ format: 'timeseal-client-proof/1' });
    expect(encodeProofFile(v1)).not.toContain('omittedFrom');
    const text = encodeProofFile({ ...v1, omittedFrom });
    expect(JSON.parse(text)).toMatchObject({ format: 'timeseal-client-proof/2', omittedFrom });
    expect(parseProofFile(text)).toEqual({ ...v1, format: 'timeseal-client-proof/2', omittedFrom });
    expect(encodeProofFile(parseProofFile(text))).toBe(text);
  });

  test("version 1 with the field, version 2 without it, or a path that is not the day's ledger: refused", () => {
    const raw = JSON.parse(encodeProofFile({ ...v1, omittedFrom })) as Record<string, unknown>;
    const text = (o: Record<string, unknown>) => JSON.stringify(o);
    expect(() => parseProofFile(text({ ...raw, format: 'timeseal-client-proof/1' }))).toThrow(
      'proof file: omittedFrom: unknown field (in timeseal-client-proof/1)',
    );
    const { omittedFrom: _, ...without } = raw;
    expect(() => parseProofFile(text(without))).toThrow('proof file: omittedFrom: missing');
    expect(() =>
      parseProofFile(text({ ...raw, omittedFrom: { ...omittedFrom, ledger: '/etc/2025-11-02.json' } })),
    ).toThrow(/omittedFrom\.ledger: expected the relative path/);
    expect(() =>
      parseProofFile(text({ ...raw, omittedFrom: { ...omittedFrom, ledger: 'timeseal-ledgers/2025-11-03.json' } })),
    ).toThrow(/omittedFrom\.ledger: expected the ledger file of 2025-11-02/);
    expect(() => parseProofFile(text({ ...raw, omittedFrom: { ...omittedFrom, extra: 1 } }))).toThrow(
      /omittedFrom: expected \{"date", "ledger", "sha256", "size"\} and nothing else/,
    );
  });
});
