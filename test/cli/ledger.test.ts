// Black-box tests of the `timeseal` operator CLI (docs/CLI.md, docs/FORMAT.md): its commands, run
// through main() as the executable runs them (helpers.ts run()), in a fresh temp project per scenario, with the clock
// set through TIMESEAL_NOW; exit codes, stdout and stderr are what the executable gives (test/cli/cli-host.test.ts). The archive it writes
// is checked with tools we did not write (openssl, node:crypto) and with an RFC 6962 implementation in
// helpers.ts, never with core/.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  flipByte,
  makeHashes,
  parseCheckpoint,
  pemDer,
  removeTempProjects,
  rfcLeafHash,
  rfcPath,
  rfcRoot,
  rfcVerifyInclusion,
  run,
  runJson,
  sha256Hex,
  tempProject,
  treeDiff,
  treeDigest,
  writeHashFile,
  type RunResult,
} from './helpers.ts';

afterAll(removeTempProjects);

const DAY1 = '2025-11-01';
const DAY2 = '2025-11-02';
const AT_DAY1 = '2025-11-01T09:15:00.123Z';
const AT_DAY2_MORNING = '2025-11-02T08:00:00.000Z';
const AT_DAY2_EVENING = '2025-11-02T15:30:00.000Z';
const BUILD_AT = '2025-11-03T00:01:00.000Z';

/** A failure a user can read: the expected exit code, a message on stderr, and no stack trace. */
function expectCleanFailure(r: RunResult, code: 1 | 3 | 64, message: RegExp): void {
  expect(r.code, `exit code; stderr: ${r.stderr}`).toBe(code);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toContain('    at ');
  expect(r.stderr).not.toMatch(/node:internal|Error \[ERR_/);
}

function readJson(file: string): any {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function keysInit(dir: string): void {
  const r = run(dir, ['keys', 'init']);
  expect(r.code, r.stderr).toBe(0);
}

function queueSize(dir: string, env: Record<string, string> = {}): number {
  const { result, json } = runJson(dir, ['status'], { env });
  expect(result.code, result.stderr).toBe(0);
  return json.queue_size;
}

describe('keys init', () => {
  let dir: string;
  let first: RunResult;
  const publicFiles = ['keys/public.pem', 'keys/dilithium_public.key', 'keys/dilithium_public.pem'];
  const privateFiles = ['data/private-keys/ecdsa_private.pem', 'data/private-keys/dilithium_private.pem'];

  beforeAll(() => {
    dir = tempProject('keys');
    first = run(dir, ['keys', 'init', '--json']);
  });

  test('creates the public keys in keys/ and the private keys, mode 0600, in data/private-keys', () => {
    expect(first.code, first.stderr).toBe(0);
    const created = JSON.parse(first.stdout).created as string[];
    for (const f of [...publicFiles, ...privateFiles]) {
      expect(fs.existsSync(path.join(dir, f)), f).toBe(true);
      expect(created.map((c) => path.normalize(c))).toContain(f);
    }
    for (const f of privateFiles) expect(fs.statSync(path.join(dir, f)).mode & 0o777, f).toBe(0o600);
    const raw = fs.readFileSync(path.join(dir, 'keys/dilithium_public.key'));
    expect(raw.length).toBe(1952);
    const pem = fs.readFileSync(path.join(dir, 'keys/dilithium_public.pem'), 'utf8');
    expect(crypto.createPublicKey(pem).asymmetricKeyType).toBe('ml-dsa-65');
    expect(pemDer(pem).subarray(-1952).equals(raw)).toBe(true);
    const ecdsa = crypto.createPublicKey(fs.readFileSync(path.join(dir, 'keys/public.pem'), 'utf8'));
    expect(ecdsa.asymmetricKeyType).toBe('ec');
    expect(ecdsa.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });

  test('a second keys init refuses to overwrite and changes no file', () => {
    const before = treeDigest(dir);
    const again = run(dir, ['keys', 'init']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/refus\w* to overwrite/);
    expect(again.stderr).not.toContain('    at ');
    expect(treeDiff(before, treeDigest(dir))).toEqual([]);
  });
});

describe('import', () => {
  const at = { TIMESEAL_NOW: '2025-11-05T12:00:00.000Z' };

  test('accepts lower- and upper-case hashes and reports what it enqueued', () => {
    const dir = tempProject('import');
    const hashes = makeHashes('case', 6);
    const lines = hashes.map((x, i) => (i % 2 ? x.toUpperCase() : x));
    const file = writeHashFile(dir, 'hashes.txt', lines);
    const { result, json } = runJson(dir, ['import', file], { env: at });
    expect(result.code, result.stderr).toBe(0);
    expect(json).toMatchObject({ enqueued: 6, submitted_at: '2025-11-05T12:00:00.000Z', ledger_date: '2025-11-05' });
    expect(queueSize(dir, at)).toBe(6);
    const human = run(dir, ['import', file], { env: at });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Enqueued 6 hashes for the ledger of 2025-11-05/);
    expect(queueSize(dir, at)).toBe(12);
  });

  test('one bad line among good ones: exit 1, the bad line numbers on stderr, nothing enqueued', () => {
    const dir = tempProject('import-bad');
    const good = makeHashes('good', 4);
    const lines = [good[0]!, 'not-a-hash', good[1]!, good[2]!.slice(1), '', good[3]!, `${good[0]!}0`];
    const file = writeHashFile(dir, 'mixed.txt', lines);
    const r = run(dir, ['import', file], { env: at });
    expectCleanFailure(r, 1, /nothing was enqueued/);
    const numbers = [...r.stderr.matchAll(/line (\d+)/g)].map((m) => Number(m[1]));
    expect(numbers).toEqual([2, 4, 7]);
    expect(queueSize(dir, at)).toBe(0);
  });

  test('reads standard input with "-"', () => {
    const dir = tempProject('import-stdin');
    const hashes = makeHashes('stdin', 3);
    const { result, json } = runJson(dir, ['import', '-'], { env: at, input: `${hashes.join('\n')}\n` });
    expect(result.code, result.stderr).toBe(0);
    expect(json.enqueued).toBe(3);
    expect(queueSize(dir, at)).toBe(3);
  });

  test('accepts sha256sum output ("HASH  name" and "HASH *name")', () => {
    const dir = tempProject('import-sum');
    const hashes = makeHashes('sum', 3);
    const file = writeHashFile(dir, 'SHA256SUMS', [
      `${hashes[0]}  report.pdf`,
      `${hashes[1]} *image.bin`,
      `${hashes[2]}  name with spaces.txt`,
    ]);
    const { result, json } = runJson(dir, ['import', file], { env: at });
    expect(result.code, result.stderr).toBe(0);
    expect(json.enqueued).toBe(3);
    expect(queueSize(dir, at)).toBe(3);
  });

  test('real sha256sum output of real files imports', () => {
    const dir = tempProject('import-sha256sum');
    fs.writeFileSync(path.join(dir, 'a.txt'), 'a');
    fs.writeFileSync(path.join(dir, 'b.txt'), 'b');
    const sums = spawnSync('sha256sum', ['a.txt', 'b.txt'], { cwd: dir, encoding: 'utf8' });
    expect(sums.status).toBe(0);
    const { result, json } = runJson(dir, ['import', '-'], { env: at, input: sums.stdout });
    expect(result.code, result.stderr).toBe(0);
    expect(json.enqueued).toBe(2);
  });

  test('the UTC day decides the ledger: 23:59:59.999 and 00:00:00.000 go to different days', () => {
    const dir = tempProject('import-midnight');
    const [a, b] = makeHashes('midnight', 2);
    const late = runJson(dir, ['import', '-'], { env: { TIMESEAL_NOW: '2025-11-05T23:59:59.999Z' }, input: `${a}\n` });
    const early = runJson(dir, ['import', '-'], { env: { TIMESEAL_NOW: '2025-11-06T00:00:00.000Z' }, input: `${b}\n` });
    expect(late.json.ledger_date).toBe('2025-11-05');
    expect(early.json.ledger_date).toBe('2025-11-06');
  });

  // Exposes a product bug (see the report): TIMESEAL_NOW without a UTC offset is read in the machine's local
  // time zone, so the same setting files a hash under different UTC days on different machines.
  test('TIMESEAL_NOW without an offset is either refused or read as UTC, never in the local time zone', () => {
    const dir = tempProject('import-tz');
    const r = run(dir, ['import', '-', '--json'], {
      env: { TIMESEAL_NOW: '2025-11-01T22:00:00', TZ: 'America/New_York' },
      input: `${makeHashes('tz', 1)[0]}\n`,
    });
    if (r.code === 64) {
      expect(r.stderr).toMatch(/TIMESEAL_NOW/);
    } else {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        submitted_at: '2025-11-01T22:00:00.000Z',
        ledger_date: '2025-11-01',
      });
    }
  });
});

/** Leaf hashes of every entry of the given ledgers, in leaf order. */
function leavesOf(ledgers: any[]): Buffer[] {
  return ledgers.flatMap((l) => l.entries.map((e: [string, string]) => rfcLeafHash(Buffer.from(e[0], 'hex'))));
}

describe('a ledger built over several days', () => {
  let dir: string;
  let build: any;
  const day1 = makeHashes('day1', 300);
  const day2New = makeHashes('day2', 20);
  const repeated = day1[7]!; // submitted on day 1 and again on day 2
  const twice = day2New[0]!; // submitted twice on day 2: morning and evening
  const evening = makeHashes('day2-evening', 1)[0]!;
  const ledger = (date: string) => path.join(dir, 'ledgers', `${date}.json`);
  const archive = () => path.join(dir, 'ledgers');

  beforeAll(() => {
    dir = tempProject('days');
    keysInit(dir);
    // Day 1: upper case, sha256sum-style and plain lines mixed.
    const lines = day1.map((x, i) => (i < 100 ? x.toUpperCase() : i < 200 ? `${x}  file-${i}.bin` : x));
    const r1 = run(dir, ['import', writeHashFile(dir, 'day1.txt', lines)], { env: { TIMESEAL_NOW: AT_DAY1 } });
    expect(r1.code, r1.stderr).toBe(0);
    const r2 = run(dir, ['import', writeHashFile(dir, 'day2a.txt', [...day2New, repeated, day2New[1]!])], {
      env: { TIMESEAL_NOW: AT_DAY2_MORNING },
    });
    expect(r2.code, r2.stderr).toBe(0);
    const r3 = run(dir, ['import', writeHashFile(dir, 'day2b.txt', [twice.toUpperCase(), evening])], {
      env: { TIMESEAL_NOW: AT_DAY2_EVENING },
    });
    expect(r3.code, r3.stderr).toBe(0);
    const b = runJson(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: BUILD_AT } });
    expect(b.result.code, b.result.stderr).toBe(0);
    build = b.json;
  });

  test('publishes both finished days, in order, and nothing is left in the queue', () => {
    expect(build.days.map((d: any) => [d.date, d.entryCount, d.firstIndex, d.treeSize])).toEqual([
      [DAY1, 300, 0, 300],
      [DAY2, 22, 300, 322],
    ]);
    for (const f of [
      `${DAY1}.json`,
      `${DAY2}.json`,
      `${DAY1}.checkpoint`,
      `${DAY2}.checkpoint`,
      'checkpoint',
      'days.json',
    ]) {
      expect(fs.existsSync(path.join(archive(), f)), f).toBe(true);
    }
    const { json } = runJson(dir, ['status'], { env: { TIMESEAL_NOW: BUILD_AT } });
    expect(json).toMatchObject({ queue_size: 0, last_published_day: DAY2, published_days: 2, tree_size: 322 });
  });

  test("day 2's ledger names day 1's file by its SHA-256; day 1 has no previous", () => {
    const l1 = readJson(ledger(DAY1));
    const l2 = readJson(ledger(DAY2));
    expect(l1.previous).toBeNull();
    expect(l2.previous).toEqual({ date: DAY1, sha256: sha256Hex(fs.readFileSync(ledger(DAY1))) });
  });

  test('entries are sorted, de-duplicated, lower-case, each with its earliest submission time', () => {
    const l1 = readJson(ledger(DAY1));
    const l2 = readJson(ledger(DAY2));
    expect(l1).toMatchObject({
      format: 'timeseal-ledger/1',
      date: DAY1,
      first_index: 0,
      entry_count: 300,
      tree_size: 300,
    });
    expect(l2).toMatchObject({
      format: 'timeseal-ledger/1',
      date: DAY2,
      first_index: 300,
      entry_count: 22,
      tree_size: 322,
    });
    expect(l1.entries).toEqual([...day1].sort().map((x) => [x, AT_DAY1]));
    const expected2 = new Map<string, string>(day2New.map((x) => [x, AT_DAY2_MORNING]));
    expected2.set(repeated, AT_DAY2_MORNING);
    expected2.set(evening, AT_DAY2_EVENING);
    expect(l2.entries).toEqual([...expected2.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
    expect(l2.entries.filter((e: string[]) => e[0] === twice)).toEqual([[twice, AT_DAY2_MORNING]]);
    // The file's own layout (FORMAT.md §3): one entry a line, ends with "]}\n".
    const text = fs.readFileSync(ledger(DAY2), 'utf8');
    const lines = text.split('\n');
    expect(lines[0]!.endsWith('"entries":[')).toBe(true);
    expect(
      lines.slice(1, 23).map((line, i) => line === `${JSON.stringify(l2.entries[i])}${i < 21 ? ',' : ''}`),
    ).toEqual(Array(22).fill(true));
    expect(lines.slice(23)).toEqual([']}', '']);
  });

  test('timeseal verify exits 0 and reports the tree', () => {
    const human = run(dir, ['verify']);
    expect(human.code, human.stdout + human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^OK: .*2 days, tree size 322/);
    const { result, json } = runJson(dir, ['verify']);
    expect(result.code).toBe(0);
    expect(json).toMatchObject({ ok: true, days: 2, treeSize: 322, problems: [] });
  });

  test('openssl verifies the ECDSA signature of every day', () => {
    for (const d of [DAY1, DAY2]) {
      const r = spawnSync(
        'openssl',
        ['dgst', '-sha256', '-verify', 'keys/public.pem', '-signature', `ledgers/${d}.json.sig`, `ledgers/${d}.json`],
        {
          cwd: dir,
          encoding: 'utf8',
        },
      );
      expect(r.stdout.trim(), `${d}: ${r.stderr}`).toBe('Verified OK');
      expect(r.status).toBe(0);
    }
  });

  test('node:crypto verifies the ML-DSA-65 signature of every day; the raw key is the PEM key', () => {
    const pem = fs.readFileSync(path.join(dir, 'keys/dilithium_public.pem'), 'utf8');
    const raw = fs.readFileSync(path.join(dir, 'keys/dilithium_public.key'));
    expect(raw.length).toBe(1952);
    expect(pemDer(pem).subarray(-1952).equals(raw)).toBe(true);
    const key = crypto.createPublicKey(pem);
    for (const d of [DAY1, DAY2]) {
      const bytes = fs.readFileSync(ledger(d));
      const sig = fs.readFileSync(`${ledger(d)}.dilithium.sig`);
      expect(sig.length).toBe(3309);
      expect(crypto.verify(null, bytes, key, sig), d).toBe(true);
      const other = Buffer.from(bytes);
      other[10] = other[10]! ^ 1;
      expect(crypto.verify(null, other, key, sig)).toBe(false);
      const meta = readJson(`${ledger(d)}.signatures.json`);
      expect(meta).toMatchObject({ file: `${d}.json`, size: bytes.length, sha256: sha256Hex(bytes) });
      expect(meta.signatures.map((s: any) => s.key_fingerprint)).toEqual([
        sha256Hex(pemDer(fs.readFileSync(path.join(dir, 'keys/public.pem'), 'utf8'))),
        sha256Hex(raw),
      ]);
    }
  });

  test('checkpoints parse per C2SP, their roots equal the RFC 6962 root of the ledgers, and both signatures verify', () => {
    const l1 = readJson(ledger(DAY1));
    const l2 = readJson(ledger(DAY2));
    const ecdsaPem = fs.readFileSync(path.join(dir, 'keys/public.pem'), 'utf8');
    const ecdsaKey = crypto.createPublicKey(ecdsaPem);
    const mldsaKey = crypto.createPublicKey(fs.readFileSync(path.join(dir, 'keys/dilithium_public.pem'), 'utf8'));
    const raw = fs.readFileSync(path.join(dir, 'keys/dilithium_public.key'));
    const cases: Array<[string, any[]]> = [
      [`${DAY1}.checkpoint`, [l1]],
      [`${DAY2}.checkpoint`, [l1, l2]],
      ['checkpoint', [l1, l2]],
    ];
    for (const [file, ledgers] of cases) {
      const cp = parseCheckpoint(fs.readFileSync(path.join(archive(), file), 'utf8'));
      const root = rfcRoot(leavesOf(ledgers));
      expect(cp.origin, file).toBe('localhost:8080');
      expect(cp.size, file).toBe(ledgers.at(-1).tree_size);
      expect(cp.root.toString('hex'), file).toBe(root.toString('hex'));
      expect(ledgers.at(-1).root, file).toBe(root.toString('hex'));
      // ECDSA P-256, ML-DSA-65, then the two lines witnesses know: Ed25519 (0x01) and an ML-DSA-44 cosignature (0x06).
      expect(cp.signatures.length).toBe(4);
      const [e, m, ed, ml] = cp.signatures as [any, any, any, any];
      expect(e.name).toBe(cp.origin);
      expect(e.keyId.equals(crypto.createHash('sha256').update(pemDer(ecdsaPem)).digest().subarray(0, 4))).toBe(true);
      expect(crypto.verify('sha256', Buffer.from(cp.text), ecdsaKey, e.signature), `${file} ECDSA`).toBe(true);
      const mldsaId = crypto
        .createHash('sha256')
        .update(Buffer.concat([Buffer.from(`${cp.origin}\n`), Buffer.of(0xff), Buffer.from('timeseal/ML-DSA-65'), raw]))
        .digest()
        .subarray(0, 4);
      expect(m.keyId.equals(mldsaId)).toBe(true);
      expect(m.signature.length).toBe(3309);
      expect(crypto.verify(null, Buffer.from(cp.text), mldsaKey, m.signature), `${file} ML-DSA-65`).toBe(true);
      // Checked with Node's own crypto (OpenSSL 3.5), from the published vkeys: <name>+<key id>+base64(type || key).
      const vkey = (name: string) => {
        const [, keyName, id, key] = /^([^+]*)\+([0-9a-f]{8})\+(.*)$/.exec(
          fs.readFileSync(path.join(dir, 'keys', name), 'utf8').trim(),
        )!;
        return { keyName, id: Buffer.from(id!, 'hex'), bytes: Buffer.from(key!, 'base64') };
      };
      const edKey = vkey('ed25519.vkey');
      const mlKey = vkey('mldsa44.vkey');
      expect([edKey.keyName, mlKey.keyName, edKey.bytes[0], mlKey.bytes[0]]).toEqual([
        cp.origin,
        cp.origin,
        0x01,
        0x06,
      ]);
      expect([ed.name, ml.name]).toEqual([cp.origin, cp.origin]);
      const idOf = (type: number, key: Buffer) =>
        crypto
          .createHash('sha256')
          .update(Buffer.concat([Buffer.from(`${cp.origin}\n`), Buffer.of(type), key]))
          .digest()
          .subarray(0, 4);
      expect(ed.keyId.equals(idOf(0x01, edKey.bytes.subarray(1))) && ed.keyId.equals(edKey.id)).toBe(true);
      expect(ml.keyId.equals(idOf(0x06, mlKey.bytes.subarray(1))) && ml.keyId.equals(mlKey.id)).toBe(true);
      const edPublic = crypto.createPublicKey({
        key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), edKey.bytes.subarray(1)]),
        format: 'der',
        type: 'spki',
      });
      expect(crypto.verify(null, Buffer.from(cp.text), edPublic, ed.signature), `${file} Ed25519`).toBe(true);
      // tlog-cosignature: timestamp (8 bytes, 0 for the log's own) || ML-DSA-44 over the subtree/v1 cosigned_message.
      expect(ml.signature.length).toBe(8 + 2420);
      expect(ml.signature.subarray(0, 8).equals(Buffer.alloc(8))).toBe(true);
      const name = Buffer.from(cp.origin);
      const size = Buffer.alloc(8);
      size.writeBigUInt64BE(BigInt(cp.size));
      const message = Buffer.concat([
        Buffer.from('subtree/v1\n\0'),
        Buffer.of(name.length),
        name,
        Buffer.alloc(8),
        Buffer.of(name.length),
        name,
        Buffer.alloc(8),
        size,
        cp.root,
      ]);
      const mlPublic = crypto.createPublicKey({
        key: Buffer.concat([
          Buffer.from('30820532300b06096086480165030403110382052100', 'hex'),
          mlKey.bytes.subarray(1),
        ]),
        format: 'der',
        type: 'spki',
      });
      expect(crypto.verify(null, message, mlPublic, ml.signature.subarray(8)), `${file} ML-DSA-44 cosignature`).toBe(
        true,
      );
    }
    expect(
      fs
        .readFileSync(path.join(archive(), 'checkpoint'))
        .equals(fs.readFileSync(path.join(archive(), `${DAY2}.checkpoint`))),
    ).toBe(true);
  });

  test('tiles and entry bundles hold the leaf hashes and entries the test computes itself', () => {
    const l1 = readJson(ledger(DAY1));
    const l2 = readJson(ledger(DAY2));
    const leaves = leavesOf([l1, l2]);
    const tile = (rel: string) => fs.readFileSync(path.join(archive(), rel));
    expect(tile('tile/0/000').equals(Buffer.concat(leaves.slice(0, 256)))).toBe(true);
    expect(tile('tile/0/001.p/44').equals(Buffer.concat(leaves.slice(256, 300)))).toBe(true);
    expect(tile('tile/0/001.p/66').equals(Buffer.concat(leaves.slice(256, 322)))).toBe(true);
    expect(tile('tile/1/000.p/1').equals(rfcRoot(leaves.slice(0, 256)))).toBe(true);
    const entries = [...l1.entries, ...l2.entries].map((e: string[]) =>
      Buffer.concat([Buffer.of(0, 32), Buffer.from(e[0]!, 'hex')]),
    );
    expect(tile('tile/entries/000').equals(Buffer.concat(entries.slice(0, 256)))).toBe(true);
    expect(tile('tile/entries/001.p/66').equals(Buffer.concat(entries.slice(256)))).toBe(true);
  });

  test('days.json lists both days with the ledgers’ sha256 and roots', () => {
    const days = readJson(path.join(archive(), 'days.json'));
    expect(days.format).toBe('timeseal-days/1');
    expect(days.days.map((d: any) => [d.date, d.first_index, d.entry_count, d.tree_size, d.root, d.sha256])).toEqual(
      [DAY1, DAY2].map((d) => {
        const l = readJson(ledger(d));
        return [d, l.first_index, l.entry_count, l.tree_size, l.root, sha256Hex(fs.readFileSync(ledger(d)))];
      }),
    );
  });

  test('proof: a hash published on two days is proven in its first day, and the path checks out independently', () => {
    const r = run(dir, ['proof', repeated]);
    expect(r.code, r.stderr).toBe(0);
    const bundle = JSON.parse(r.stdout);
    const l1 = readJson(ledger(DAY1));
    const index = l1.entries.findIndex((e: string[]) => e[0] === repeated);
    expect(bundle).toMatchObject({
      format: 'timeseal-proof/4',
      hash: repeated,
      date: DAY1,
      leaf_index: index,
      tree_size: 300,
      submitted_at: AT_DAY1,
    });
    const cp = parseCheckpoint(bundle.checkpoint);
    expect(bundle.checkpoint).toBe(fs.readFileSync(path.join(archive(), `${DAY1}.checkpoint`), 'utf8'));
    const leaves = leavesOf([l1]);
    const pathHashes = bundle.inclusion_path.map((x: string) => Buffer.from(x, 'hex'));
    expect(bundle.inclusion_path).toEqual(rfcPath(index, leaves).map((x) => x.toString('hex')));
    expect(rfcVerifyInclusion(index, 300, rfcLeafHash(Buffer.from(repeated, 'hex')), pathHashes, cp.root)).toBe(true);
    expect(rfcVerifyInclusion(index ^ 1, 300, rfcLeafHash(Buffer.from(repeated, 'hex')), pathHashes, cp.root)).toBe(
      false,
    );
  });

  test('proof: a day-2 hash verifies against the latest checkpoint root; upper case is accepted', () => {
    const r = run(dir, ['proof', evening.toUpperCase()]);
    expect(r.code, r.stderr).toBe(0);
    const bundle = JSON.parse(r.stdout);
    const l2 = readJson(ledger(DAY2));
    const index = 300 + l2.entries.findIndex((e: string[]) => e[0] === evening);
    expect(bundle).toMatchObject({
      hash: evening,
      date: DAY2,
      leaf_index: index,
      tree_size: 322,
      submitted_at: AT_DAY2_EVENING,
    });
    expect(bundle.ledger).toMatchObject({
      path: `${DAY2}.json`,
      first_index: 300,
      entry_count: 22,
      sha256: sha256Hex(fs.readFileSync(ledger(DAY2))),
    });
    const latest = parseCheckpoint(fs.readFileSync(path.join(archive(), 'checkpoint'), 'utf8'));
    const pathHashes = bundle.inclusion_path.map((x: string) => Buffer.from(x, 'hex'));
    expect(rfcVerifyInclusion(index, 322, rfcLeafHash(Buffer.from(evening, 'hex')), pathHashes, latest.root)).toBe(
      true,
    );
  });

  test('proof: an unknown hash exits 3 (not found) with a clear message; a malformed hash exits 64 (usage)', () => {
    const unknown = makeHashes('never-submitted', 1)[0]!;
    expectCleanFailure(run(dir, ['proof', unknown]), 3, new RegExp(`${unknown}.*not in any published ledger`));
    expectCleanFailure(run(dir, ['proof', 'abc123']), 64, /not a SHA-256 hash/);
    expectCleanFailure(run(dir, ['proof', `${unknown}0`]), 64, /not a SHA-256 hash/);
  });

  test('rebuilding a published day reproduces every byte; a second build publishes nothing', () => {
    const copy = tempProject('rebuild');
    fs.cpSync(dir, copy, { recursive: true });
    const before = treeDigest(path.join(copy, 'ledgers'));
    const rebuilt = runJson(copy, ['ledger', 'build', '--date', DAY1], { env: { TIMESEAL_NOW: BUILD_AT } });
    expect(rebuilt.result.code, rebuilt.result.stderr).toBe(0);
    expect(rebuilt.json.days).toMatchObject([{ date: DAY1, alreadyPublished: true, entryCount: 300 }]);
    expect(treeDiff(before, treeDigest(path.join(copy, 'ledgers')))).toEqual([]);
    const again = runJson(copy, ['ledger', 'build'], { env: { TIMESEAL_NOW: BUILD_AT } });
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.json.days).toEqual([]);
    expect(treeDiff(before, treeDigest(path.join(copy, 'ledgers')))).toEqual([]);
    const human = run(copy, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-04T00:01:00.000Z' } });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Nothing to publish/);
  });

  const corruptions = [
    `${DAY1}.json`,
    `${DAY2}.json`,
    `${DAY1}.json.sig`,
    `${DAY2}.json.dilithium.sig`,
    `${DAY1}.json.signatures.json`,
    `${DAY1}.checkpoint`,
    'checkpoint',
    'tile/0/000',
    'tile/0/001.p/44',
    'tile/1/000.p/1',
    'tile/entries/000',
    'tile/entries/001.p/66',
    'index segment',
    'index/segments.json',
    'index-sha256.json',
    'days.json',
  ];
  /** The index's first segment file, relative to the archive. */
  const firstSegment = (archiveDir: string): string =>
    `index/${
      fs
        .readdirSync(path.join(archiveDir, 'index'))
        .filter((n) => /^\d+-\d+\.idx$/.test(n))
        .sort()[0]!
    }`;
  test.each(corruptions)('a flipped byte in %s fails verify, which names the file', (which) => {
    const copy = path.join(tempProject('corrupt'), 'ledgers');
    fs.cpSync(archive(), copy, { recursive: true });
    let rel = which;
    if (which === 'index segment') rel = firstSegment(copy);
    // index-sha256.json is not in the archive unless a static deployment writes it there.
    if (which === 'index-sha256.json') expect(run(dir, ['index-json', '--out', path.join(copy, rel)]).code).toBe(0);
    flipByte(path.join(copy, rel));
    const { result, json } = runJson(dir, ['verify', '--archive', copy]);
    expect(result.code).toBe(1);
    expect(json.ok).toBe(false);
    const named = new RegExp(`(^|[\\s/(])${rel.replace(/[.]/g, '\\.')}(?![\\w.])`);
    expect(
      json.problems.some((p: string) => named.test(p)),
      `no problem names ${rel}: ${JSON.stringify(json.problems)}`,
    ).toBe(true);
    const human = run(dir, ['verify', '--archive', copy]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^FAILED/);
  });

  test('verify reads a live site over HTTP the same way (index-sha256.json streamed), and names a corrupt file', async () => {
    const copy = path.join(tempProject('http-verify'), 'ledgers');
    fs.cpSync(archive(), copy, { recursive: true });
    // A static file server in its own process (the CLI runs synchronously here): GET /ledgers/<file>, else 404.
    const server = spawn(
      process.execPath,
      [
        '-e',
        `const http = require('node:http'), fs = require('node:fs'), path = require('node:path');
         const root = process.argv[1];
         const s = http.createServer((req, res) => {
           const pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
           const rel = pathname.startsWith('/ledgers/') ? pathname.slice('/ledgers/'.length) : pathname;
           const file = path.join(root, rel);
           if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) { res.writeHead(404).end(); return; }
           res.writeHead(200, { 'content-length': fs.statSync(file).size });
           fs.createReadStream(file).pipe(res);
         });
         s.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + s.address().port + '/ledgers/'));`,
        copy,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        server.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
        server.once('exit', (code) => reject(new Error(`static server exited (${code})`)));
      });
      const keys = ['--keys', path.join(dir, 'keys')];
      expect(run(dir, ['index-json', '--out', path.join(copy, 'index-sha256.json')]).code).toBe(0);
      const good = runJson(dir, ['verify', '--archive', url, ...keys]);
      expect(good.result.code, good.result.stderr).toBe(0);
      expect(good.json).toMatchObject({ ok: true, days: 2, treeSize: 322, problems: [] });
      const index = path.join(copy, 'index-sha256.json');
      const original = fs.readFileSync(index);
      // A flipped byte, one byte short, one byte more: each is named.
      for (const change of [
        () => flipByte(index),
        () => fs.writeFileSync(index, original.subarray(0, -1)),
        () => fs.writeFileSync(index, Buffer.concat([original, Buffer.from('\n')])),
      ]) {
        fs.writeFileSync(index, original);
        change();
        const bad = runJson(dir, ['verify', '--archive', url, ...keys]);
        expect(bad.result.code).toBe(1);
        expect(bad.json.problems).toEqual(['index-sha256.json: differs from the ledgers']);
      }
    } finally {
      server.kill();
    }
  });

  test('a segment file cut short, or with a record appended, fails verify, which names it', () => {
    for (const change of ['cut', 'grown'] as const) {
      const copy = path.join(tempProject(`segment-${change}`), 'ledgers');
      fs.cpSync(archive(), copy, { recursive: true });
      const segment = firstSegment(copy);
      const bytes = fs.readFileSync(path.join(copy, segment));
      fs.writeFileSync(
        path.join(copy, segment),
        change === 'cut' ? bytes.subarray(0, bytes.length - 44) : Buffer.concat([bytes, bytes.subarray(-44)]),
      );
      const { result, json } = runJson(dir, ['verify', '--archive', copy]);
      expect(result.code).toBe(1);
      expect(json.problems).toEqual([`${segment}: index segment differs from the ledgers`]);
    }
  });

  test("index-json writes the spec's index-sha256.json from the segments: every hash, its date(s) and first time", () => {
    const out = path.join(tempProject('index-json'), 'index-sha256.json');
    const { result, json } = runJson(dir, ['index-json', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    expect(json).toMatchObject({ file: out, tree_size: 322 });
    const index = JSON.parse(fs.readFileSync(out, 'utf8')) as {
      map: Record<string, string | string[]>;
      timestamps: Record<string, string>;
    };
    const ledgers = [DAY1, DAY2].map(
      (d) =>
        JSON.parse(fs.readFileSync(path.join(archive(), `${d}.json`), 'utf8')) as {
          date: string;
          entries: [string, string][];
        },
    );
    const expected = new Map<string, string[]>();
    const first = new Map<string, string>();
    for (const l of ledgers) {
      for (const [h, t] of l.entries) {
        expected.set(h, [...(expected.get(h) ?? []), l.date]);
        if (!first.has(h)) first.set(h, t);
      }
    }
    expect(Object.keys(index.map).sort()).toEqual([...expected.keys()].sort());
    for (const [h, dates] of expected) {
      expect(index.map[h]).toEqual(dates.length === 1 ? dates[0] : dates);
      expect(index.timestamps[h]).toBe(first.get(h));
    }
  });

  test('status counts the archive on disk only with --disk (the walk grows with the archive)', () => {
    const { json } = runJson(dir, ['status']);
    expect((json as { archive: Record<string, unknown> }).archive).toEqual({ path: 'ledgers' });
    const disk = runJson(dir, ['status', '--disk']).json as { archive: { files: number; bytes: number } };
    const files = (fs.readdirSync(archive(), { recursive: true }) as string[])
      .map((r) => path.join(archive(), r))
      .filter((p) => fs.statSync(p).isFile());
    expect(disk.archive.files).toBe(files.length);
    expect(disk.archive.bytes).toBe(files.reduce((sum, p) => sum + fs.statSync(p).size, 0));
    expect(run(dir, ['status']).stdout).toMatch(/timeseal status --disk/);
  });
});

describe('bad input gives a clear message and exit 64 (usage), 3 (not found) or 1 (failure), never a stack trace', () => {
  let dir: string;
  const now = { TIMESEAL_NOW: '2025-11-05T12:00:00.000Z' };
  beforeAll(() => {
    dir = tempProject('bad');
    keysInit(dir);
    const r = run(dir, ['import', '-'], {
      env: { TIMESEAL_NOW: '2025-11-03T10:00:00Z' },
      input: `${makeHashes('bad', 1)[0]}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
  });

  const cases: Array<[string, string[], Record<string, string>, 1 | 3 | 64, RegExp]> = [
    ['an unknown command', ['bogus'], {}, 64, /unknown command/],
    ['an unknown option', ['ledger', 'build', '--bogus'], {}, 64, /unknown option/],
    ['a date that does not exist', ['ledger', 'build', '--date', '2025-13-45'], now, 64, /--date.*2025-13-45/],
    ['February 30', ['ledger', 'build', '--date', '2025-02-30'], now, 64, /--date.*2025-02-30/],
    ['a date in the future', ['ledger', 'build', '--date', '2099-01-01'], now, 64, /2099-01-01 is not finished/],
    ['today', ['ledger', 'build', '--date', '2025-11-05'], now, 64, /not finished/],
    ['proof without a hash', ['proof'], {}, 64, /missing required argument/],
    ['import without a file', ['import'], {}, 64, /missing required argument/],
    ['import of a missing file', ['import', 'no/such/file.txt'], now, 3, /cannot read no\/such\/file\.txt/],
    ['import of an empty file', ['import', '/dev/null'], now, 1, /no hashes found/],
    ['verify of a missing archive', ['verify', '--archive', '/nonexistent'], {}, 3, /\/nonexistent does not exist/],
    [
      'TIMESEAL_NOW=garbage',
      ['status'],
      { TIMESEAL_NOW: 'garbage' },
      64,
      /TIMESEAL_NOW is not an ISO-8601 instant: garbage/,
    ],
    ['TIMESEAL_NOW=garbage on import', ['import', '/dev/null'], { TIMESEAL_NOW: 'garbage' }, 64, /TIMESEAL_NOW/],
    ['TIMESEAL_ORIGIN=not-a-url', ['status'], { TIMESEAL_ORIGIN: 'not-a-url' }, 64, /TIMESEAL_ORIGIN is not a URL/],
    [
      'TIMESEAL_ORIGIN=not-a-url on build',
      ['ledger', 'build'],
      { ...now, TIMESEAL_ORIGIN: 'not-a-url' },
      64,
      /TIMESEAL_ORIGIN/,
    ],
  ];
  test.each(cases)('%s', (_name, args, env, code, message) => {
    const before = treeDigest(path.join(dir, 'ledgers'));
    const r = run(dir, args, { env });
    expectCleanFailure(r, code, message);
    expect(r.stderr.trim().split('\n').length, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(treeDiff(before, treeDigest(path.join(dir, 'ledgers')))).toEqual([]);
  });

  test('status on an empty project works', () => {
    const empty = tempProject('empty');
    const human = run(empty, ['status']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/Queue: 0 submissions/);
    expect(human.stdout).toMatch(/Last published day: none yet/);
    const { result, json } = runJson(empty, ['status']);
    expect(result.code).toBe(0);
    expect(json).toMatchObject({ queue_size: 0, last_published_day: null, published_days: 0, tree_size: 0 });
  });

  // Exposes a product bug (see the report): on a freshly initialised project (keys, nothing published yet)
  // `verify` exits 1 with "archive folder ledgers does not exist".
  test('verify on an empty project (keys made, nothing published) works', () => {
    const empty = tempProject('empty-verify');
    keysInit(empty);
    const r = run(empty, ['verify']);
    expect(r.code, r.stderr).toBe(0);
    const { json } = runJson(empty, ['verify']);
    expect(json).toMatchObject({ ok: true, days: 0, treeSize: 0 });
  });

  test('verify of an empty archive folder works', () => {
    const empty = tempProject('empty-archive');
    keysInit(empty);
    fs.mkdirSync(path.join(empty, 'ledgers'));
    const { result, json } = runJson(empty, ['verify']);
    expect(result.code, result.stderr).toBe(0);
    expect(json).toMatchObject({ ok: true, days: 0, treeSize: 0, problems: [] });
  });

  test('ledger build refuses to extend an archive under another origin', () => {
    const p = tempProject('origin');
    keysInit(p);
    const a = { TIMESEAL_ORIGIN: 'https://a.example/' };
    run(p, ['import', '-'], {
      env: { ...a, TIMESEAL_NOW: '2025-11-01T10:00:00Z' },
      input: `${makeHashes('o', 1)[0]}\n`,
    });
    expect(run(p, ['ledger', 'build'], { env: { ...a, TIMESEAL_NOW: '2025-11-02T00:01:00Z' } }).code).toBe(0);
    expect(parseCheckpoint(fs.readFileSync(path.join(p, 'ledgers/checkpoint'), 'utf8')).origin).toBe('a.example');
    run(p, ['import', '-'], {
      env: { ...a, TIMESEAL_NOW: '2025-11-02T10:00:00Z' },
      input: `${makeHashes('o', 1, 1)[0]}\n`,
    });
    const before = treeDigest(path.join(p, 'ledgers'));
    const r = run(p, ['ledger', 'build'], {
      env: { TIMESEAL_ORIGIN: 'https://b.example', TIMESEAL_NOW: '2025-11-03T00:01:00Z' },
    });
    expectCleanFailure(r, 1, /origin/);
    expect(r.stderr).toMatch(/a\.example/);
    expect(treeDiff(before, treeDigest(path.join(p, 'ledgers')))).toEqual([]);
  });

  // Exposes a product bug (see the report): with the clock on a day that is already published, `import` says
  // "Enqueued 1 hash for the ledger of <that day>", but the hash is never published, the queue does not count
  // it, and every later `ledger build --date <that day>` fails because the rebuild differs.
  test('a hash import acknowledges for a day is published, or import refuses it', () => {
    const p = tempProject('late');
    keysInit(p);
    const [first, late] = makeHashes('late', 2);
    run(p, ['import', '-'], { env: { TIMESEAL_NOW: '2025-11-01T10:00:00Z' }, input: `${first}\n` });
    expect(run(p, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-02T00:01:00Z' } }).code).toBe(0);
    const imported = run(p, ['import', '-'], { env: { TIMESEAL_NOW: '2025-11-01T11:00:00Z' }, input: `${late}\n` });
    expect(imported.stderr).not.toContain('    at ');
    expect(run(p, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00Z' } }).code).toBe(0);
    if (imported.code === 0) {
      expect(run(p, ['proof', late!]).code, `import said: ${imported.stdout}`).toBe(0);
    } else {
      expect(imported.code).toBe(1);
    }
    const rebuild = run(p, ['ledger', 'build', '--date', '2025-11-01'], {
      env: { TIMESEAL_NOW: '2025-11-03T00:01:00Z' },
    });
    expect(rebuild.code, rebuild.stderr).toBe(0);
  });
});

describe('--json prints one JSON document on stdout', () => {
  test('keys init, import, ledger build, verify, status', () => {
    const p = tempProject('json');
    const docs = [
      runJson(p, ['keys', 'init']),
      runJson(p, ['import', '-'], {
        env: { TIMESEAL_NOW: '2025-11-01T10:00:00Z' },
        input: `${makeHashes('json', 2).join('\n')}\n`,
      }),
      runJson(p, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-02T00:01:00Z' } }),
      runJson(p, ['verify']),
      runJson(p, ['status'], { env: { TIMESEAL_NOW: '2025-11-02T00:01:00Z' } }),
    ];
    for (const { result } of docs) expect(result.code, result.stderr).toBe(0);
    const [keys, imp, build, verify, status] = docs.map((d) => d.json);
    expect(keys.created).toHaveLength(16);
    expect(imp).toMatchObject({ enqueued: 2, ledger_date: '2025-11-01' });
    expect(build.days).toMatchObject([{ date: '2025-11-01', entryCount: 2, treeSize: 2 }]);
    expect(verify).toMatchObject({ ok: true, days: 1, treeSize: 2 });
    expect(status).toMatchObject({ queue_size: 0, last_published_day: '2025-11-01', tree_size: 2 });
  });
});
