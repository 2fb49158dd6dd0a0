// Nothing of a day is reachable before its commit point (days.json), and a build killed at any point of its
// write order (pipeline/build.ts) leaves an archive that verifies as it is, that `timeseal serve` serves
// without the uncommitted day (its files 404, `/ledgers/checkpoint` the last committed day's), and that the
// next build completes to exactly the bytes of an uninterrupted build. The kills are exact: the build kills
// itself with SIGKILL at the named point (TIMESEAL_TEST_KILL_AT), of the first day and of a later day.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { isCommitted } from '../../ingest/published-archive.ts';
import {
  makeHashes,
  ROOT,
  removeTempProjects,
  run,
  runJson,
  tempProject,
  treeDiff,
  treeDigest,
  writeHashFile,
} from './helpers.ts';
import { listeningUrl } from '../support/until.ts';

afterAll(removeTempProjects);

/** The Node running the tests (the Makefile's). */
const NODE = process.execPath;
const BIN = path.join(ROOT, 'cli/bin/timeseal');
const DAY1 = '2025-11-01';
const DAY2 = '2025-11-02';
const BUILD_DAY1 = { TIMESEAL_NOW: '2025-11-02T00:01:00.000Z' };
const BUILD_DAY2 = { TIMESEAL_NOW: '2025-11-03T00:01:00.000Z' };

/** Files of an archive a build writes once (day files, tiles, entry bundles, index shards). */
const immutable = (rel: string) =>
  /^\d{4}-\d{2}-\d{2}\./.test(rel) || rel.startsWith('tile/') || /^index\/\d+-\d+\//.test(rel);

describe('a build killed at each point of its write order', { timeout: 300_000 }, () => {
  let pristine: string; // keys and both days imported, nothing built
  let afterDay1: string; // day 1 built
  let reference: Map<string, string>;

  const copyOf = (from: string, label: string): string => {
    const dir = tempProject(label);
    for (const sub of ['data', 'keys', 'ledgers'])
      if (fs.existsSync(path.join(from, sub)))
        fs.cpSync(path.join(from, sub), path.join(dir, sub), { recursive: true });
    return dir;
  };

  beforeAll(() => {
    pristine = tempProject('commit-pristine');
    expect(run(pristine, ['keys', 'init']).code).toBe(0);
    const r1 = run(pristine, ['import', writeHashFile(pristine, 'd1.txt', makeHashes('commit-day1', 3000))], {
      env: { TIMESEAL_NOW: `${DAY1}T12:00:00.000Z` },
    });
    expect(r1.code, r1.stderr).toBe(0);
    const r2 = run(pristine, ['import', writeHashFile(pristine, 'd2.txt', makeHashes('commit-day2', 1000))], {
      env: { TIMESEAL_NOW: `${DAY2}T12:00:00.000Z` },
    });
    expect(r2.code, r2.stderr).toBe(0);
    afterDay1 = copyOf(pristine, 'commit-day1');
    expect(run(afterDay1, ['ledger', 'build'], { env: BUILD_DAY1 }).code).toBe(0);
    const whole = copyOf(afterDay1, 'commit-reference');
    expect(run(whole, ['ledger', 'build'], { env: BUILD_DAY2 }).code).toBe(0);
    reference = treeDigest(path.join(whole, 'ledgers'));
  });

  /** `timeseal serve` on a copy of `dir` whose archive lock is held (so its schedule writes nothing), asked for `paths`. */
  async function serveAndFetch(dir: string, paths: string[]): Promise<Map<string, { status: number; body: Buffer }>> {
    const copy = copyOf(dir, 'commit-serve');
    const holder = spawn(
      NODE,
      [
        path.join(ROOT, 'test/cli/lock-racer.ts'),
        path.join(copy, 'data', 'archive.lock'),
        path.join(copy, 'inside'),
        '0',
        '-1',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const server = spawn(BIN, ['serve'], {
      cwd: copy,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...BUILD_DAY2,
        PORT: '0',
        TIMESEAL_SITE: path.join(copy, 'no-site'),
        OTS_CALENDARS: 'http://127.0.0.1:9/',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let held = '';
      holder.stdout.setEncoding('utf8').on('data', (s: string) => (held += s));
      let out = '';
      let err = '';
      server.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
      server.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
      await vi.waitFor(() => expect(held).toContain('held'), { timeout: 30_000, interval: 20 });
      const url = await listeningUrl(
        () => out,
        60_000,
        () => `serve did not start: ${out}${err}`,
      );
      const answers = new Map<string, { status: number; body: Buffer }>();
      for (const p of paths) {
        const res = await fetch(`${url}${p}`);
        answers.set(p, { status: res.status, body: Buffer.from(await res.arrayBuffer()) });
      }
      return answers;
    } finally {
      server.kill('SIGTERM');
      holder.kill('SIGKILL');
      await new Promise((resolve) => server.on('close', resolve));
    }
  }

  const points: Array<[string, string, string]> = [
    ['the first day, right after days.json', DAY1, 'days.json'],
    ['a later day, the entries of its ledger in a temp file, not the header', DAY2, 'ledger-entries'],
    ['a later day, all its files written, before days.json', DAY2, 'day-files'],
    ['a later day, right after days.json', DAY2, 'days.json'],
    ['a later day, after the index head', DAY2, 'head'],
    ['a later day, after the latest checkpoint', DAY2, 'checkpoint'],
  ];
  test.each(points)('%s (%s at %s)', async (_name, day, point) => {
    const dir = copyOf(day === DAY1 ? pristine : afterDay1, `commit-${point}`);
    const before = treeDigest(path.join(dir, 'ledgers'));
    const killed = run(dir, ['ledger', 'build'], {
      env: { ...(day === DAY1 ? BUILD_DAY1 : BUILD_DAY2), TIMESEAL_TEST_KILL_AT: `${point}@${day}` },
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const archive = path.join(dir, 'ledgers');
    const committed = (
      JSON.parse(fs.readFileSync(path.join(archive, 'days.json'), 'utf8')) as {
        days: Array<{ date: string; tree_size: number }>;
      }
    ).days;
    const published = committed.some((d) => d.date === day);
    expect(published).toBe(!['ledger-entries', 'day-files'].includes(point));
    // Nothing of the ledger file is in the archive before it is whole: its entries are in a temp file of .tmp/.
    if (point === 'ledger-entries') {
      expect(fs.existsSync(path.join(archive, `${day}.json`))).toBe(false);
      expect(fs.readdirSync(path.join(archive, '.tmp')).length).toBeGreaterThan(0);
    }

    // (a) The archive as left verifies.
    const left = runJson(dir, ['verify', '--json']);
    expect(left.result.code, left.result.stdout).toBe(0);
    expect(left.json.ok).toBe(true);

    // (b) Served as left: every file the killed build wrote once is there exactly when its day is published,
    // and the latest checkpoint is the last published day's.
    const added = [...treeDigest(archive).keys()].filter((rel) => immutable(rel) && !before.has(rel));
    expect(added.length, 'the killed build wrote nothing; nothing was tested').toBeGreaterThan(10);
    const answers = await serveAndFetch(dir, ['/ledgers/checkpoint', ...added.map((rel) => `/ledgers/${rel}`)]);
    const last = committed.at(-1)!.date;
    const latest = answers.get('/ledgers/checkpoint')!;
    expect(latest.status).toBe(200);
    expect(latest.body.equals(fs.readFileSync(path.join(archive, `${last}.checkpoint`)))).toBe(true);
    const wrong = added.filter((rel) => answers.get(`/ledgers/${rel}`)!.status !== (published ? 200 : 404));
    expect(wrong, `served ${published ? 'without' : 'with'} ${day} published`).toEqual([]);

    // (c) The next build completes it to the bytes of an uninterrupted build.
    if (day === DAY1) expect(run(dir, ['ledger', 'build'], { env: BUILD_DAY1 }).code).toBe(0);
    const again = run(dir, ['ledger', 'build'], { env: BUILD_DAY2 });
    expect(again.code, again.stderr).toBe(0);
    const verified = runJson(dir, ['verify', '--json']);
    expect(verified.json).toMatchObject({ ok: true, notes: [], days: 2, treeSize: 4000 });
    expect(treeDiff(reference, treeDigest(archive))).toEqual([]);
  });
});

describe('what the server counts as published (ingest/published-archive.ts isCommitted)', () => {
  const committed = { dates: new Set([DAY1]), last: DAY1, treeSize: 3000 };
  test.each([
    [`${DAY1}.json`, true],
    [`${DAY1}.json.ots`, true],
    [`${DAY2}.json`, false],
    [`${DAY2}.json.dilithium.sig`, false],
    [`${DAY2}.checkpoint`, false],
    [`${DAY2}.json.ots`, false],
    ['tile/0/011.p/184', true], // leaves up to 11·256 + 184 = 3000
    ['tile/0/011.p/185', false],
    ['tile/0/011', false],
    ['tile/entries/010', true],
    ['tile/entries/011.p/185', false],
    ['tile/1/000.p/11', true], // up to 11·256 = 2816
    ['tile/1/000.p/12', false], // up to 3072
    ['index/0-3000.idx', true],
    ['index/3000-4000.idx', false],
    ['days.json', true],
    ['checkpoint', true],
  ])('%s: %s', (rel, expected) => {
    expect(isCommitted(rel, committed)).toBe(expected);
  });
});
