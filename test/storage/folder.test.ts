// The archive store contract (contract.ts) on the folder engine: each test gets a new folder. Then what is the
// folder's own: its files are those the build's writers (pipeline/files.ts) make, temp files never show.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEMP_DIR, writeImmutable, writeMutable } from '../../pipeline/files.ts';
import { FolderArchiveStore } from '../../pipeline/storage/folder.ts';
import { openArchiveStore } from '../../pipeline/storage/open.ts';
import { archiveStoreContract } from './contract.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-folder-store-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
let root = '';

archiveStoreContract('folder', {
  fresh: () => void (root = path.join(dir, `archive-${++n}`)),
  open: () => openArchiveStore(root, {}),
});

describe('folder engine', () => {
  it('TIMESEAL_ARCHIVE without s3:// is a folder, and its files are exactly what the build writers make', async () => {
    const byStore = path.join(dir, 'by-store');
    const byFiles = path.join(dir, 'by-files');
    const store = await openArchiveStore(byStore, {});
    expect(store).toBeInstanceOf(FolderArchiveStore);
    expect(store.location).toBe(path.resolve(byStore));
    const day = new TextEncoder().encode('{"format":"x"}\n');
    await store.create('2025-11-02.json', day);
    await store.create('tile/0/x001/234.p/5', day.subarray(1));
    await store.replace('days.json', day.subarray(2));
    writeImmutable(byFiles, '2025-11-02.json', day);
    writeImmutable(byFiles, 'tile/0/x001/234.p/5', day.subarray(1));
    writeMutable(byFiles, 'days.json', day.subarray(2));
    const tree = (root: string): Array<[string, string]> =>
      (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
        .filter((e) => e.isFile())
        .map((e): [string, string] => {
          const file = path.join(e.parentPath, e.name);
          return [path.relative(root, file), fs.readFileSync(file, 'hex')];
        })
        .sort();
    expect(tree(byStore)).toEqual(tree(byFiles));
    expect(tree(byStore).map(([rel]) => rel)).toEqual(['2025-11-02.json', 'days.json', 'tile/0/x001/234.p/5']);
  });

  it("list leaves out the writers' temp folder and what a killed writer left in it", async () => {
    const root = path.join(dir, 'temps');
    const store = await openArchiveStore(root, {});
    await store.create('checkpoint', new Uint8Array([1]));
    fs.mkdirSync(path.join(root, TEMP_DIR), { recursive: true });
    fs.writeFileSync(path.join(root, TEMP_DIR, '12345-0-7'), 'partial');
    expect(await store.list('')).toEqual(['checkpoint']);
    await expect(store.read(`${TEMP_DIR}/12345-0-7`)).rejects.toThrow(/not an archive object path/);
  });
});
