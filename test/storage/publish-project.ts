// What the tests of the archive writer on S3 share (test/storage/publish*.test.ts): projects, days of hashes,
// digests of a bucket and of a folder, and `timeseal verify` of a published archive over HTTP.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { ArchiveStore } from '../../pipeline/storage/archive-store.ts';
import { run, runJson, sha256Hex, tempProject, treeDigest, writeHashFile } from '../cli/helpers.ts';
import type { TestCeph } from '../support/ceph-rgw.ts';

export const day = (n: number): string => `2025-11-${String(n).padStart(2, '0')}`;

/** rel -> SHA-256 of every object of the store, in the order listed. */
export async function storeDigest(store: ArchiveStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const rel of await store.list('')) out.set(rel, sha256Hex((await store.read(rel))!));
  return out;
}

/** rel -> SHA-256 of every archive file of a folder (names starting with a dot are locks and temp files). */
export function folderDigest(dir: string): Map<string, string> {
  return new Map([...treeDigest(dir)].filter(([rel]) => !rel.split('/').some((name) => name.startsWith('.'))));
}

/** A new project with the keys of `keysFrom` (or new ones). */
export function project(label: string, keysFrom?: string): string {
  const dir = tempProject(label);
  if (keysFrom === undefined) expect(run(dir, ['keys', 'init']).code).toBe(0);
  else
    for (const sub of ['keys', 'data/private-keys'])
      fs.cpSync(path.join(keysFrom, sub), path.join(dir, sub), { recursive: true });
  return dir;
}

/** The environment of a writer whose archive is s3://<the test bucket>/<prefix>. */
export function s3Env(ceph: TestCeph, prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...ceph.env, TIMESEAL_ARCHIVE: `s3://${ceph.bucket}/${prefix}`, ...extra };
}

/** Imports `hashes` at noon of day `n`. */
export function importDay(dir: string, n: number, hashes: string[], env: Record<string, string> = {}): void {
  const imported = run(dir, ['import', writeHashFile(dir, `day-${n}.txt`, hashes)], {
    env: { ...env, TIMESEAL_NOW: `${day(n)}T12:00:00Z` },
  });
  expect(imported.code, imported.stderr).toBe(0);
}

/** `timeseal verify --json` of the archive at `url` with the project's keys. */
export function verifyUrl(dir: string, url: string) {
  return runJson(dir, ['verify', '--archive', url, '--keys', path.join(dir, 'keys')]);
}
