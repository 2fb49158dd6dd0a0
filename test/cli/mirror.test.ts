// `timeseal mirror pull URL DIR`, black box: real `timeseal serve` processes on loopback publish small archives
// built with `import` + `ledger build` under TIMESEAL_NOW, and the real CLI mirrors them.
// - A first pull gives a folder that `timeseal verify` passes and whose files are byte for byte the source's.
// - A witness quorum the checkpoint lacks, and keys other than the pinned ones, are refused.
// - After a day more, a second pull fetches and checks that day only: far fewer requests, bytes and files
//   checked than a full pull.
// - A source whose history was rewritten (a copy of the project that built its second day with other entries)
//   is refused, naming the problem, and the mirror is left exactly as it was.
// - A file of a new day that differs from what the signed log commits to (an entry bundle) is refused, naming it.
// - `timeseal serve` on the mirror answers a proof of a mirrored hash, and the site's verified search (in
//   Chromium) finds it with both signatures checked in the browser.
// About 30 s on a 2-core machine (27–36 s measured with other work running), most of it in the builds and the
// servers' starts.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  BIN,
  flipByte,
  makeHashes,
  removeTempProjects,
  ROOT,
  run,
  runJson,
  tempProject,
  treeDiff,
  treeDigest,
  writeHashFile,
} from './helpers.ts';
import { launchChromium } from '../support/chromium.ts';

interface Server {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
}
const servers: Server[] = [];

afterAll(async () => {
  for (const s of servers) {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
    await s.exited;
  }
  removeTempProjects();
});

/** `timeseal serve` in `cwd` on a free loopback port with its clock at `now` (the day before is closed: its
 * catch-up build closes every finished day, and nothing can be imported for them afterwards), resolved once its start-up steps (the schedule's catch-up
 * run, which may write status files) have all logged their end, so the archive no longer changes under a pull. */
function serve(cwd: string, now: string, env: Record<string, string> = {}): Promise<Server> {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('TIMESEAL_') && k !== 'NODE_OPTIONS') childEnv[k] = v;
  const child = spawn(BIN, ['serve'], {
    cwd,
    env: {
      ...childEnv,
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
      TIMESEAL_NOW: now,
      // Calendars on closed loopback ports: the anchoring step fails at once instead of reaching out.
      OTS_CALENDARS: 'http://127.0.0.1:9/,http://127.0.0.1:7/',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const server = new Promise<Server>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not settle:\n${out}`)), 30_000);
    const check = () => {
      const url = /Timeseal listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url && /"step":"tsa stamp"/.test(out)) {
        clearTimeout(timer);
        resolve({ child, url, exited });
      }
    };
    child.stdout!.setEncoding('utf8').on('data', (s: string) => ((out += s), check()));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => ((out += s), check()));
    void exited.then(() => reject(new Error(`serve exited:\n${out}`)));
  });
  return server.then((s) => (servers.push(s), s));
}

function timeseal(dir: string, args: string[], now?: string) {
  const r = run(dir, args, { env: now ? { TIMESEAL_NOW: now } : {} });
  expect(r.code, `timeseal ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

interface PullReport {
  ok: boolean;
  days: { before: number; after: number; fetched: string[] };
  treeSize: { before: number; after: number };
  files: number;
  filesChecked: number;
  bytes: number;
  requests: number;
  problem?: string;
}

/** Every published file of an archive folder (temp files, the lock and the mirror's keys/ left out). */
function published(dir: string): Map<string, string> {
  return new Map([...treeDigest(dir)].filter(([rel]) => !rel.startsWith('.') && !rel.startsWith('keys/')));
}

const DATES = ['2025-11-01', '2025-11-02', '2025-11-03', '2025-11-04', '2025-11-05', '2025-11-06'];
let source: string;
let rewritten: string;
let work: string;
let url: string;

beforeAll(async () => {
  source = tempProject('mirror-source');
  work = tempProject('mirror-work');
  timeseal(source, ['keys', 'init'], '2025-11-01T00:00:00.000Z');
  DATES.forEach((date, i) => {
    timeseal(
      source,
      ['import', writeHashFile(source, `${date}.txt`, makeHashes(date, 3 + i))],
      `${date}T10:00:00.000Z`,
    );
    // The first day alone, then a copy of the project: the copy builds its own second day (a rewritten history).
    if (i === 0) {
      timeseal(source, ['ledger', 'build'], '2025-11-02T00:01:00.000Z');
      rewritten = tempProject('mirror-rewritten');
      fs.cpSync(source, rewritten, { recursive: true });
    }
  });
  timeseal(source, ['ledger', 'build'], '2025-11-07T00:01:00.000Z');
  url = `${(await serve(source, '2025-11-07T00:05:00.000Z')).url}/ledgers/`;
}, 120_000);

describe('timeseal mirror pull', () => {
  const mirror = () => path.join(work, 'mirror');

  test('the first pull needs pinned keys; then it copies the archive, which verifies and equals the source byte for byte', () => {
    const unpinned = run(work, ['mirror', 'pull', url, mirror()]);
    expect(unpinned.code, unpinned.stderr).toBe(64);
    expect(unpinned.stderr).toMatch(/--keys/);
    expect(fs.existsSync(path.join(mirror(), 'days.json'))).toBe(false);

    const { result, json } = runJson<PullReport>(work, [
      'mirror',
      'pull',
      url,
      mirror(),
      '--keys',
      path.join(source, 'keys'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(json.days.fetched).toEqual(DATES);
    const sourceFiles = published(path.join(source, 'ledgers'));
    expect(treeDiff(sourceFiles, published(mirror()))).toEqual([]);
    expect(sourceFiles.size).toBeGreaterThan(30);

    const verified = runJson(work, ['verify', '--archive', mirror(), '--keys', path.join(mirror(), 'keys')]);
    expect(verified.result.code, verified.result.stdout).toBe(0);
    expect(verified.json.days).toBe(DATES.length);
  });

  test('a witness quorum the checkpoint lacks, and keys other than the pinned ones, are refused', () => {
    // The source's keys plus a witness policy (c2sp.org/tlog-policy) asking for one witness's cosignature, which
    // the source never got: a first pull with these keys fails and writes nothing.
    const witnessed = path.join(work, 'keys-with-witness');
    fs.cpSync(path.join(source, 'keys'), witnessed, { recursive: true });
    const name = 'witness.test';
    const raw = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
    const typed = Buffer.concat([Buffer.of(0x04), raw]);
    const keyId = crypto
      .createHash('sha256')
      .update(Buffer.concat([Buffer.from(`${name}\n`), typed]))
      .digest()
      .subarray(0, 4);
    const vkey = `${name}+${keyId.toString('hex')}+${typed.toString('base64')}`;
    fs.writeFileSync(
      path.join(witnessed, 'witnesses'),
      `witness w1 ${vkey} http://127.0.0.1:9/\ngroup witnesses 1 w1\nquorum witnesses\n`,
    );
    const elsewhere = path.join(work, 'witnessed-mirror');
    const refused = runJson<PullReport>(work, ['mirror', 'pull', url, elsewhere, '--keys', witnessed]);
    expect(refused.result.code).toBe(1);
    expect(refused.json.problem).toBe(
      `${DATES.at(-1)}: the witness policy's quorum (1) is not met (cosigned by: none); try again once the witnesses have cosigned`,
    );
    expect(published(elsewhere)).toEqual(new Map());
    expect(fs.existsSync(path.join(elsewhere, 'keys'))).toBe(false);

    // Another log's keys given to a pinned mirror.
    const other = tempProject('mirror-other-keys');
    timeseal(other, ['keys', 'init']);
    const before = treeDigest(mirror());
    const wrong = run(work, ['mirror', 'pull', url, mirror(), '--keys', path.join(other, 'keys')]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/public\.pem is not the key the mirror pinned/);
    expect(treeDiff(before, treeDigest(mirror()))).toEqual([]);
  });

  test('a day later, only the new day is fetched', () => {
    const next = '2025-11-07';
    const extra = makeHashes(next, 4);
    timeseal(source, ['import', writeHashFile(source, `${next}.txt`, extra)], `${next}T10:00:00.000Z`);
    timeseal(source, ['ledger', 'build'], '2025-11-08T00:01:00.000Z');

    const { result, json } = runJson<PullReport>(work, ['mirror', 'pull', url, mirror()]);
    expect(result.code, result.stderr).toBe(0);
    expect(json.days).toEqual({ before: DATES.length, after: DATES.length + 1, fetched: [next] });
    expect(json.treeSize.after).toBe(json.treeSize.before + extra.length);
    // A full pull of the same archive, into a fresh folder, for comparison.
    const fresh = runJson<PullReport>(work, [
      'mirror',
      'pull',
      url,
      path.join(work, 'fresh'),
      '--keys',
      path.join(source, 'keys'),
    ]);
    expect(fresh.result.code, fresh.result.stderr).toBe(0);
    expect(json.requests * 3).toBeLessThan(fresh.json.requests);
    expect(json.bytes * 3).toBeLessThan(fresh.json.bytes);
    // It checked what came after the mirror's last checkpoint, not the whole archive again.
    expect(json.filesChecked * 3).toBeLessThan(fresh.json.filesChecked);
    expect(treeDiff(published(path.join(source, 'ledgers')), published(mirror()))).toEqual([]);
    expect(run(work, ['verify', '--archive', mirror(), '--keys', path.join(mirror(), 'keys')]).code).toBe(0);

    // Nothing new, and a published file of an old day removed from the mirror by hand: a pull checks what came
    // after the mirror's checkpoint and writes nothing; `verify` names the file; --full checks the whole mirror
    // again and fetches it.
    const removed = path.join(mirror(), `${DATES[0]}.json.sig`);
    const signature = fs.readFileSync(removed);
    fs.rmSync(removed);
    const again = runJson<PullReport>(work, ['mirror', 'pull', url, mirror()]);
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.json.files).toBe(0);
    expect(again.json.days.fetched).toEqual([]);
    const damaged = runJson(work, ['verify', '--archive', mirror(), '--keys', path.join(mirror(), 'keys')]);
    expect(damaged.result.code).toBe(1);
    expect(damaged.json.problems).toContain(`${DATES[0]}.json.sig: missing`);
    const repaired = runJson<PullReport>(work, ['mirror', 'pull', url, mirror(), '--full']);
    expect(repaired.result.code, repaired.result.stderr).toBe(0);
    expect(repaired.json.files).toBe(1);
    expect(repaired.json.filesChecked).toBe(fresh.json.filesChecked);
    expect(fs.readFileSync(removed)).toEqual(signature);
  });

  test('a rewritten history is refused and the mirror is left as it was', async () => {
    // The copy made after the first day builds its second day with other entries (more of them, so its tree is
    // larger than the mirror's and only the consistency proof can tell).
    timeseal(
      rewritten,
      ['import', writeHashFile(rewritten, 'other.txt', makeHashes('other', 60))],
      '2025-11-02T11:00:00.000Z',
    );
    timeseal(rewritten, ['ledger', 'build'], '2025-11-03T00:01:00.000Z');
    const forged = `${(await serve(rewritten, '2025-11-03T00:05:00.000Z')).url}/ledgers/`;

    const before = treeDigest(mirror());
    const { result, json } = runJson<PullReport>(work, ['mirror', 'pull', forged, mirror()]);
    expect(result.code).toBe(1);
    expect(json.ok).toBe(false);
    expect(json.problem).toMatch(
      /^the remote's checkpoint \(tree size 63, .* is not consistent with the mirror's \(tree size 37, .*the log rewrote its history/,
    );
    expect(result.stderr).toMatch(/rewrote its history/);
    expect(treeDiff(before, treeDigest(mirror()))).toEqual([]);
    expect(fs.readdirSync(path.join(mirror(), '.tmp'))).toEqual([]);

    // A mirror pull from the honest source still works afterwards.
    expect(run(work, ['mirror', 'pull', url, mirror()]).code).toBe(0);
  });

  test('a published file that differs from what the log commits to is refused, naming it', () => {
    const next = '2025-11-08';
    timeseal(source, ['import', writeHashFile(source, `${next}.txt`, makeHashes(next, 2))], `${next}T10:00:00.000Z`);
    timeseal(source, ['ledger', 'build'], '2025-11-09T00:01:00.000Z');
    const days = JSON.parse(fs.readFileSync(path.join(source, 'ledgers/days.json'), 'utf8')) as {
      days: Array<{ tree_size: number }>;
    };
    const bundle = `tile/entries/000.p/${days.days.at(-1)!.tree_size}`;
    const file = path.join(source, 'ledgers', bundle);
    const honest = fs.readFileSync(file);
    flipByte(file, honest.length - 1);
    const before = treeDigest(mirror());
    const { result, json } = runJson<PullReport>(work, ['mirror', 'pull', url, mirror()]);
    expect(result.code).toBe(1);
    expect(json.problem).toBe(`${bundle}: differs from the ledger's entries`);
    expect(treeDiff(before, treeDigest(mirror()))).toEqual([]);

    fs.writeFileSync(file, honest);
    const pulled = runJson<PullReport>(work, ['mirror', 'pull', url, mirror()]);
    expect(pulled.result.code, pulled.result.stderr).toBe(0);
    expect(pulled.json.days.fetched).toEqual([next]);
  });

  test('`timeseal serve` serves the mirror: its days and a proof of a mirrored hash', async () => {
    const node = tempProject('mirror-node');
    const server = await serve(node, '2025-11-08T00:05:00.000Z', {
      TIMESEAL_ARCHIVE: mirror(),
      TIMESEAL_KEYS: path.join(mirror(), 'keys'),
      TIMESEAL_ORIGIN: 'http://localhost:8080',
      TIMESEAL_SITE: path.join(ROOT, 'dist/site'),
    });
    const days = (await (await fetch(`${server.url}/ledgers/days.json`)).json()) as { days: Array<{ date: string }> };
    expect(days.days.map((d) => d.date)).toEqual([...DATES, '2025-11-07', '2025-11-08']);
    const hash = makeHashes(DATES[2]!, 5)[1]!;
    const proof = await fetch(`${server.url}/api/proof/${hash}`);
    expect(proof.status).toBe(200);
    expect(((await proof.json()) as { date: string }).date).toBe(DATES[2]);

    // The site's verified search, in Chromium, on the mirror: the proof checked in the browser against the
    // mirrored checkpoint and keys; a hash the source never had is not found.
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${server.url}/verify?hash=${hash}&search=true`);
      const result = page.locator('[data-testid=search-result]');
      await result.waitFor();
      await expect(result.getAttribute('data-found')).resolves.toBe('true');
      await expect(result.locator('[data-testid=result-date]').textContent()).resolves.toBe(DATES[2]);
      for (const flag of ['Quantum shield', 'Dual signature'])
        await expect(result.locator(`[data-flag="${flag}"]`).getAttribute('data-ok'), flag).resolves.toBe('true');
      await page.goto(`${server.url}/verify?hash=${'ab'.repeat(32)}&search=true`);
      await page.locator('[data-testid=search-result][data-found=false]').waitFor();
    } finally {
      await browser.close();
    }
  });
});
