// The archive store contract (pipeline/storage/archive-store.ts): every guarantee an engine must keep, as vitest
// blocks. Each engine's test calls `archiveStoreContract` (test/storage/folder.test.ts; test/storage/s3.test.ts,
// against a real Ceph RADOS Gateway). Engine-neutral: only the ArchiveStore interface.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { ArchiveStore } from '../../pipeline/storage/archive-store.ts';

export interface ContractEngine {
  /** Points the engine at a new, empty archive (called before each test). */
  fresh(): Promise<void> | void;
  /** A store on the current archive; two calls within a test give two stores on the SAME archive, as two
   * processes would have. An engine that uploads large files in parts does so from LARGE_FILE bytes on. */
  open(): Promise<ArchiveStore>;
}

/** The size from which the contract's createFromFile tests expect an engine to upload in parts (the S3 engine under
 * test is opened with this threshold and S3's smallest part, 5 MiB): their large files span three parts. */
export const LARGE_FILE = 5 << 20;

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array | undefined): string | undefined =>
  data === undefined ? undefined : new TextDecoder().decode(data);

const files = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-contract-files-'));
afterAll(() => fs.rmSync(files, { recursive: true, force: true }));
let fileCount = 0;

/** A local file holding `data`, for createFromFile. */
function localFile(name: string, data: Uint8Array): string {
  const file = path.join(files, `${++fileCount}-${name}`);
  fs.writeFileSync(file, data);
  return file;
}

export function archiveStoreContract(name: string, engine: ContractEngine): void {
  describe(`ArchiveStore contract: ${name}`, () => {
    let store: ArchiveStore;
    beforeEach(async () => {
      await engine.fresh();
      store = await engine.open();
    });

    it('reads back what create and replace wrote, byte for byte: every byte value, an empty object, 1 MiB', async () => {
      const every = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
      const large = new Uint8Array(crypto.randomBytes(1 << 20));
      expect(await store.create('tile/0/000', every)).toBe(true);
      expect(await store.create('tile/entries/x001/002.p/7', large)).toBe(true);
      expect(await store.create('2025-11-02.json.sig', new Uint8Array(0))).toBe(true);
      await store.replace('days.json', every.subarray(3, 300));
      expect(Buffer.from((await store.read('tile/0/000'))!).equals(every)).toBe(true);
      expect(Buffer.from((await store.read('tile/entries/x001/002.p/7'))!).equals(large)).toBe(true);
      expect((await store.read('2025-11-02.json.sig'))?.length).toBe(0);
      expect(Buffer.from((await store.read('days.json'))!).equals(every.subarray(3, 300))).toBe(true);
      // Another store on the same archive reads the same.
      const other = await engine.open();
      expect(Buffer.from((await other.read('tile/entries/x001/002.p/7'))!).equals(large)).toBe(true);
    });

    it('create: the same bytes again are success (false: nothing written); other bytes are refused, naming the object, and nothing is overwritten', async () => {
      expect(await store.create('2025-11-02.json', bytes('{"day":1}\n'))).toBe(true);
      expect(await store.create('2025-11-02.json', bytes('{"day":1}\n'))).toBe(false);
      const other = await engine.open();
      expect(await other.create('2025-11-02.json', bytes('{"day":1}\n'))).toBe(false);
      for (const changed of ['{"day":2}\n', '{"day":1}\n\n', '']) {
        const err = await other.create('2025-11-02.json', bytes(changed)).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(err?.name, changed).toBe('ConflictError');
        expect(err?.message).toContain('2025-11-02.json');
        expect(err?.message).toContain(crypto.hash('sha256', bytes(changed), 'hex'));
      }
      expect(text(await store.read('2025-11-02.json'))).toBe('{"day":1}\n');
      // A replaced (mutable) object is not a licence either: create still compares.
      await store.replace('checkpoint', bytes('size 1\n'));
      await expect(store.create('checkpoint', bytes('size 2\n'))).rejects.toThrow(/checkpoint/);
      expect(text(await store.read('checkpoint'))).toBe('size 1\n');
    });

    it('createFromFile: an absent object is created from the file, a small one and one of three parts, and reads back byte for byte', async () => {
      const small = localFile('small', crypto.randomBytes(70_000));
      const large = localFile('large', crypto.randomBytes(2 * LARGE_FILE + 12_345));
      const empty = localFile('empty', new Uint8Array(0));
      expect(await store.createFromFile('2025-11-02.json', large)).toBe(true);
      expect(await store.createFromFile('index/0-99.idx', small)).toBe(true);
      expect(await store.createFromFile('2025-11-02.json.sig', empty)).toBe(true);
      const other = await engine.open();
      expect(Buffer.from((await other.read('2025-11-02.json'))!).equals(fs.readFileSync(large))).toBe(true);
      expect(Buffer.from((await other.read('index/0-99.idx'))!).equals(fs.readFileSync(small))).toBe(true);
      expect((await other.read('2025-11-02.json.sig'))?.length).toBe(0);
      expect(await other.list('')).toEqual(['2025-11-02.json', '2025-11-02.json.sig', 'index/0-99.idx']);
    });

    it('createFromFile: the same bytes already there are success (false); other bytes (a byte changed, a byte more, a byte less) are refused naming the object and both SHA-256s, and the object is left as it was', async () => {
      const content = crypto.randomBytes(2 * LARGE_FILE + 100);
      for (const [rel, size] of [
        ['2025-11-02.json', content.length],
        ['tile/0/000', 9000],
      ] as const) {
        const original = content.subarray(0, size);
        expect(await store.createFromFile(rel, localFile(`${size}`, original))).toBe(true);
        const other = await engine.open();
        expect(await other.createFromFile(rel, localFile(`${size}-again`, original))).toBe(false);
        // create and createFromFile are one contract: bytes given whole compare with what a file created.
        expect(await other.create(rel, original)).toBe(false);
        const changedLast = Buffer.from(original);
        changedLast[size - 1]! ^= 1;
        for (const [what, changed] of [
          ['last byte changed', changedLast],
          ['a byte more', Buffer.concat([original, Buffer.from([0])])],
          ['a byte less', original.subarray(0, size - 1)],
        ] as const) {
          const err = await other.createFromFile(rel, localFile(`${size}-${what}`, changed)).then(
            () => undefined,
            (e: unknown) => e as Error,
          );
          expect(err?.name, `${rel}: ${what}`).toBe('ConflictError');
          expect(err?.message).toContain(rel);
          expect(err?.message).toContain(crypto.hash('sha256', changed, 'hex'));
          expect(err?.message).toContain(crypto.hash('sha256', original, 'hex'));
        }
        expect(Buffer.from((await store.read(rel))!).equals(original), rel).toBe(true);
      }
      // Bytes created whole are compared with a file too.
      await store.create('checkpoint', bytes('size 1\n'));
      await expect(store.createFromFile('checkpoint', localFile('checkpoint', bytes('size 2\n')))).rejects.toThrow(
        /checkpoint/,
      );
      expect(text(await store.read('checkpoint'))).toBe('size 1\n');
    });

    it("two writers creating one object with different bytes at once: exactly one wins, the other is refused, the object is the winner's", async () => {
      const [a, b] = [await engine.open(), await engine.open()];
      for (let round = 0; round < 5; round++) {
        const rel = `tile/1/00${round}`;
        const results = await Promise.allSettled([
          a.create(rel, bytes(`a${round}`)),
          b.create(rel, bytes(`b${round}`)),
        ]);
        const won = results.map((r) => r.status === 'fulfilled');
        expect(won.filter(Boolean)).toHaveLength(1);
        const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect((loser.reason as Error).name).toBe('ConflictError');
        expect(text(await store.read(rel))).toBe(won[0] ? `a${round}` : `b${round}`);
      }
    });

    it('replace creates, then replaces whole (a shorter object leaves no tail of the longer one)', async () => {
      await store.replace('index/segments.json', bytes('{"segments":[1,2,3,4,5,6,7,8,9]}\n'));
      expect(text(await store.read('index/segments.json'))).toBe('{"segments":[1,2,3,4,5,6,7,8,9]}\n');
      await store.replace('index/segments.json', bytes('{"segments":[]}\n'));
      expect(text(await store.read('index/segments.json'))).toBe('{"segments":[]}\n');
      await store.replace('ots_status.json', bytes('{}'));
      await store.replace('ots_status.json', bytes('{"a":1}'));
      expect(text(await (await engine.open()).read('ots_status.json'))).toBe('{"a":1}');
    });

    it('replace given a version is a compare-and-swap: the version last read or written replaces, an older one (or "absent" for an object that exists) is refused, naming the object, and nothing changes', async () => {
      const first = await store.replace('days.json', bytes('{"days":[1]}\n'), null);
      const read = async (rel: string) => {
        const found = await store.readVersioned(rel);
        return found && [text(found.bytes), found.version];
      };
      expect(await read('days.json')).toEqual(['{"days":[1]}\n', first]);
      const other = await engine.open();
      const second = await other.replace('days.json', bytes('{"days":[1,2]}\n'), first);
      expect(second).not.toBe(first);
      // A writer still holding the first version (stopped, then resumed) cannot put an older object back.
      for (const [stale, what] of [
        [first, 'an older version'],
        [null, 'absent'],
        ['0123456789abcdef0123456789abcdef', 'a made-up version'],
      ] as const) {
        const err = await store.replace('days.json', bytes('{"days":[1]}\n'), stale).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(err?.name, what).toBe('StaleVersionError');
        expect(err?.message, what).toContain('days.json');
      }
      expect(await read('days.json')).toEqual(['{"days":[1,2]}\n', second]);
      // A version of an object that is not there is refused too; "absent" creates it.
      await expect(store.replace('checkpoint', bytes('size 1\n'), second)).rejects.toThrow(/checkpoint/);
      expect(await store.read('checkpoint')).toBeUndefined();
      const created = await store.replace('checkpoint', bytes('size 1\n'), null);
      expect((await other.readVersioned('checkpoint'))?.version).toBe(created);
    });

    it('two writers swapping one object from the same version at once: exactly one wins', async () => {
      const [a, b] = [await engine.open(), await engine.open()];
      let version = await a.replace('checkpoint', bytes('size 0\n'));
      for (let round = 1; round <= 4; round++) {
        const results = await Promise.allSettled([
          a.replace('checkpoint', bytes(`a ${round}\n`), version),
          b.replace('checkpoint', bytes(`b ${round}\n`), version),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<string>[];
        expect(won, `round ${round}`).toHaveLength(1);
        const now = await store.readVersioned('checkpoint');
        expect(now?.version).toBe(won[0]!.value);
        expect(['a', 'b']).toContain(text(now?.bytes)?.slice(0, 1));
        version = won[0]!.value;
      }
    });

    it('read and exists: an absent object is undefined and false; a path that is only a prefix of objects is no object', async () => {
      expect(await store.read('2025-11-03.json')).toBeUndefined();
      expect(await store.exists('2025-11-03.json')).toBe(false);
      await store.create('tile/0/x001/002', bytes('t'));
      expect(await store.exists('tile/0/x001/002')).toBe(true);
      expect(await store.exists('tile/0/x001')).toBe(false);
      expect(await store.exists('tile/0/x001/00')).toBe(false);
      expect(await store.read('tile/0/x001')).toBeUndefined();
      expect(await store.exists('tile/0/x001/002/more')).toBe(false);
    });

    it('stream: an object of 5 MiB in pieces of at most 2 MiB, the same bytes as read; leaving early ends it; an absent object (or a prefix of objects) is undefined', async () => {
      const large = new Uint8Array(crypto.randomBytes(5 << 20));
      await store.create('2025-11-02.json', large);
      const pieces: Buffer[] = [];
      for await (const piece of (await store.stream('2025-11-02.json'))!) pieces.push(Buffer.from(piece));
      expect(Buffer.concat(pieces).equals(large)).toBe(true);
      expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(2 << 20);
      let first: number | undefined;
      for await (const piece of (await store.stream('2025-11-02.json'))!) {
        first = piece.length;
        break;
      }
      expect(first).toBeGreaterThan(0);
      expect(await store.stream('2025-11-03.json')).toBeUndefined();
      await store.create('tile/0/x001/002', bytes('t'));
      expect(await store.stream('tile/0/x001')).toBeUndefined();
    });

    it('list: every object under a prefix (a folder or the start of a name), in byte order, and nothing else', async () => {
      const paths = [
        'tile/0/000',
        'tile/0/001',
        'tile/0/x001/000',
        'tile/1/000',
        'tile/entries/000',
        '2025-11-02.json',
        '2025-11-02.json.sig',
        '2025-11-10.json',
        'days.json',
        'index/segments.json',
        'block-info/2025-11.json',
        'checkpoint',
      ];
      for (const rel of paths.slice(0, 8)) await store.create(rel, bytes(rel));
      for (const rel of paths.slice(8)) await store.replace(rel, bytes(rel));
      expect(await store.list('')).toEqual([...paths].sort());
      expect(await store.list('tile/')).toEqual([
        'tile/0/000',
        'tile/0/001',
        'tile/0/x001/000',
        'tile/1/000',
        'tile/entries/000',
      ]);
      expect(await store.list('tile/0/')).toEqual(['tile/0/000', 'tile/0/001', 'tile/0/x001/000']);
      expect(await store.list('tile/0/x')).toEqual(['tile/0/x001/000']);
      expect(await store.list('2025-11-0')).toEqual(['2025-11-02.json', '2025-11-02.json.sig']);
      expect(await store.list('2025-11-02.json')).toEqual(['2025-11-02.json', '2025-11-02.json.sig']);
      expect(await store.list('index')).toEqual(['index/segments.json']);
      expect(await store.list('nothing/')).toEqual([]);
      expect(await store.list('tile/2')).toEqual([]);
    });

    it('list pages through more objects than one answer holds (the S3 engine under test asks 100 keys a page)', async () => {
      const rels = Array.from(
        { length: 250 },
        (_, i) => `tile/0/x00${Math.floor(i / 200)}/${String(i % 200).padStart(3, '0')}`,
      );
      for (let i = 0; i < rels.length; i += 50)
        await Promise.all(rels.slice(i, i + 50).map((rel) => store.create(rel, bytes(rel))));
      const listed = await store.list('tile/0/');
      expect(listed).toHaveLength(250);
      expect(listed).toEqual([...rels].sort());
      expect(await store.list('tile/0/x001/')).toHaveLength(50);
    });

    it('remove: a retired index segment goes (absent: nothing happens); any other object is refused and stays', async () => {
      expect(await store.create('index/0-99.idx', bytes('segment'))).toBe(true);
      expect(await store.create('index/100-199.idx', bytes('kept'))).toBe(true);
      await store.replace('index/segments.json', bytes('{}'));
      await store.remove('index/0-99.idx');
      expect(await store.exists('index/0-99.idx')).toBe(false);
      await store.remove('index/0-99.idx');
      expect(await store.list('index/')).toEqual(['index/100-199.idx', 'index/segments.json']);
      // Removed, it can be created again (a rebuilt merge makes the same bytes).
      expect(await store.create('index/0-99.idx', bytes('segment'))).toBe(true);
      for (const rel of [
        'index/segments.json',
        '2025-11-02.json',
        'tile/0/000',
        'index/0-99.idx.tmp',
        '../index/1-2.idx',
      ]) {
        await expect(store.remove(rel), rel).rejects.toThrow(/not an archive object path|only retired index segments/);
      }
      expect(text(await store.read('index/segments.json'))).toBe('{}');
    });

    it('paths outside the archive, hidden or malformed are refused before anything is written', async () => {
      for (const rel of [
        '',
        '/etc/passwd',
        '../outside',
        'tile/../../outside',
        'a//b',
        'tile/',
        '.tmp/x',
        'index/.hidden',
        'sp ace',
        'back\\slash',
        'é',
      ]) {
        await expect(store.create(rel, bytes('x')), rel).rejects.toThrow(/not an archive object path/);
        await expect(store.replace(rel, bytes('x')), rel).rejects.toThrow(/not an archive object path/);
        await expect(store.read(rel), rel).rejects.toThrow(/not an archive object path/);
      }
      await expect(store.list('../')).rejects.toThrow(/not an archive object path/);
      expect(await store.list('')).toEqual([]);
    });
  });
}
