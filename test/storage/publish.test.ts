// The archive writer publishing to S3 (pipeline/storage/publish.ts, pipeline/archive-publish.ts), against a real Ceph
// RADOS Gateway (test/support/ceph-rgw.ts, a bucket of this file's own): `timeseal ledger build` with
// TIMESEAL_ARCHIVE=s3://… builds in its working copy and publishes it. The same submissions built day after day
// into a folder and into RGW give the same objects, byte for byte, and `timeseal verify` passes on the bucket over
// HTTP. The other steps that write the archive publish too: `tsa stamp` (RFC 3161 tokens from a real `openssl ts`
// TSA), `witness cosign` (cosignatures and the latest checkpoint, from loopback witnesses), and `timeseal serve`'s
// schedule (its build, a child process under the node's lease, and its witness step), and a day's SCITT
// statements file, which `timeseal verify` reads from the bucket with the issuers' signatures. Crashes:
// publish-crash.test.ts; two writers: publish-lease.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import * as cose from '@transmute/cose';
import { afterAll, expect, it } from 'vitest';
import { parseVkey, vkeyVerifier } from '../../core/cosignature.ts';
import { openArchiveStore } from '../../pipeline/storage/open.ts';
import { openStore } from '../../store/index.ts';
import { arrayBuffer, entryOf, ISS, signStatement } from '../cli/cose-helpers.ts';
import { makeHashes, removeTempProjects, runAsync, runJson, start } from '../cli/helpers.ts';
import { cephForSuite, publicArchiveUrl } from '../support/ceph-rgw.ts';
import { startTsa } from '../support/openssl-tsa.ts';
import { startWitness } from '../support/witness.ts';
import { day, folderDigest, importDay, project, s3Env, storeDigest, verifyUrl } from './publish-project.ts';
import { until } from '../support/until.ts';

const ceph = cephForSuite();
afterAll(() => removeTempProjects());

it(
  'the same submissions built day after day into a folder and into RGW give the same objects, byte for byte',
  { timeout: 120_000 },
  async () => {
    const folder = project('publish-folder');
    const bucket = project('publish-s3', folder);
    const env = s3Env(ceph.current, 'same/ledgers');
    const store = await openArchiveStore(env.TIMESEAL_ARCHIVE!, ceph.current.env);
    const sizes = [130, 1, 300];
    let from = 0;
    for (const [i, count] of sizes.entries()) {
      const hashes = makeHashes('same', count, from);
      from += count;
      importDay(folder, i + 1, hashes);
      importDay(bucket, i + 1, hashes, env);
      const now = { TIMESEAL_NOW: `${day(i + 2)}T00:01:00Z` };
      const built = runJson(folder, ['ledger', 'build'], { env: now });
      expect(built.result.code, built.result.stderr).toBe(0);
      const published = runJson(bucket, ['ledger', 'build'], { env: { ...env, ...now } });
      expect(published.result.code, published.result.stderr).toBe(0);
      expect(published.json.days.map((d: { date: string }) => d.date)).toEqual([day(i + 1)]);
      expect(published.json.archive).toMatchObject({ store: env.TIMESEAL_ARCHIVE, catchUp: 'current' });
      expect(published.json.archive.publish.created).toBeGreaterThan(0);
      // Every object, compared with every file: the same paths, the same bytes.
      const files = folderDigest(path.join(folder, 'ledgers'));
      const objects = await storeDigest(store);
      expect([...objects.keys()]).toEqual([...files.keys()]);
      for (const [rel, sha] of files) expect(objects.get(rel), rel).toBe(sha);
      expect(objects.has(`${day(i + 1)}.json`)).toBe(true);
      // And the working copy it published from is that folder too.
      expect(folderDigest(path.join(bucket, 'data/archive-cache'))).toEqual(files);
    }
    // A run with nothing new sends nothing.
    const again = runJson(bucket, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${day(4)}T00:01:00Z` } });
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.json.archive.publish).toMatchObject({ created: 0, present: 0, replaced: 0 });
    // That run removed the index segments the merges had retired, from the folder and from the bucket alike.
    const idle = runJson(folder, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${day(4)}T00:01:00Z` } });
    expect(idle.result.code, idle.result.stderr).toBe(0);
    expect(again.json.archive.publish.removed).toBeGreaterThan(0);
    expect(await storeDigest(store)).toEqual(folderDigest(path.join(folder, 'ledgers')));
    const url = await publicArchiveUrl(ceph.current, 'same/ledgers');
    const verified = verifyUrl(bucket, url);
    expect(verified.result.code, verified.result.stderr).toBe(0);
    expect(verified.json).toMatchObject({ ok: true, days: 3, treeSize: 431, problems: [] });
    // `timeseal verify` on the s3:// archive itself reads the bucket, not the working copy: a ledger removed from
    // the copy changes nothing, and the report names the bucket.
    fs.rmSync(path.join(bucket, 'data/archive-cache', `${day(3)}.json`));
    const own = runJson(bucket, ['verify'], { env });
    expect(own.result.code, own.result.stderr).toBe(0);
    expect(own.json).toMatchObject({ ok: true, location: env.TIMESEAL_ARCHIVE, days: 3, treeSize: 431 });
  },
);

it(
  'tsa stamp, witness cosign and the schedule of `timeseal serve` publish what they write, and the bucket verifies',
  { timeout: 120_000 },
  async () => {
    const dir = project('publish-steps');
    const env = s3Env(ceph.current, 'steps/ledgers');
    const store = await openArchiveStore(env.TIMESEAL_ARCHIVE!, ceph.current.env);
    const copy = path.join(dir, 'data/archive-cache');
    /** The object at `rel` is the working copy's file, byte for byte. */
    const sameAsCopy = async (rel: string): Promise<boolean> =>
      Buffer.from((await store.read(rel)) ?? []).equals(fs.readFileSync(path.join(copy, rel)));
    const tsa = await startTsa();
    const logKey = vkeyVerifier(parseVkey(fs.readFileSync(path.join(dir, 'keys/ed25519.vkey'), 'utf8')));
    const witness = await startWitness({
      name: 'w1.example/witness',
      seed: new Uint8Array(32).fill(7),
      algorithm: 'Ed25519',
      logs: new Map([['localhost:8080', [logKey]]]),
    });
    // The CLI, awaited: the TSA and the witness answer from this process meanwhile.
    const json = async (args: string[], extra: Record<string, string>) => {
      const result = await runAsync(dir, [...args, '--json'], { env: { ...env, ...extra } });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout);
    };
    try {
      importDay(dir, 1, makeHashes('steps', 60));
      await json(['ledger', 'build'], { TIMESEAL_NOW: `${day(2)}T00:01:00Z` });
      const stamped = await json(['tsa', 'stamp'], { TSA_URLS: tsa.url, TIMESEAL_NOW: `${day(2)}T00:04:00Z` });
      expect(stamped.days.map((d: { outcome: string }) => d.outcome)).toEqual(['stamped']);
      expect(stamped.archive.publish.created).toBe(1);
      expect(await sameAsCopy(`${day(1)}.json.tsr`)).toBe(true);
      const witnesses = { TIMESEAL_WITNESSES: witness.setting, TIMESEAL_WITNESS_QUORUM: '1' };
      const cosigned = await json(['witness', 'cosign'], { ...witnesses, TIMESEAL_NOW: `${day(2)}T00:03:00Z` });
      expect(cosigned).toMatchObject({ met: true, archive: { catchUp: 'current' } });
      for (const rel of [`${day(1)}.cosignatures`, 'checkpoint']) expect(await sameAsCopy(rel), rel).toBe(true);
      expect(new TextDecoder().decode(await store.read('checkpoint'))).toContain('w1.example/witness');

      // The schedule: day 2 built by serve's child build under the node's lease, then cosigned, both published.
      importDay(dir, 2, makeHashes('steps', 30, 60));
      const node = start(dir, ['serve'], {
        env: {
          ...env,
          ...witnesses,
          TIMESEAL_NOW: `${day(3)}T00:05:00Z`,
          PORT: '0',
          TIMESEAL_SITE: path.join(dir, 'no-site'),
          OTS_CALENDARS: 'http://127.0.0.1:9/',
        },
      });
      let log = '';
      node.child.stderr!.on('data', (s: string) => (log += s));
      const done = (step: string) =>
        log
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg: string; result?: { archive?: { publish: { created: number } } } })
          .find(
            (l) => l.msg === `scheduled ${step} done` || l.msg === `scheduled ${step} failed; the next run retries`,
          );
      try {
        const ran = () => {
          if (node.child.exitCode !== null) throw new Error(`the schedule did not run:\n${log}`);
          return done('ledger build') !== undefined && done('witness cosign') !== undefined;
        };
        await until('the scheduled build and cosigning', 60_000, ran, 100).catch((err: Error) => {
          throw new Error(`${err.message}:\n${log}`);
        });
      } finally {
        node.child.kill('SIGTERM');
        await node.exited;
      }
      expect(done('ledger build')?.msg, log).toBe('scheduled ledger build done');
      expect(done('ledger build')?.result?.archive?.publish.created).toBeGreaterThan(0);
      expect(done('witness cosign')?.msg, log).toBe('scheduled witness cosign done');
      expect(done('witness cosign')?.result?.archive?.publish).toBeDefined();
      for (const rel of ['days.json', `${day(2)}.json`, `${day(2)}.cosignatures`, 'checkpoint'])
        expect(await sameAsCopy(rel), rel).toBe(true);

      fs.copyFileSync(tsa.caFile, path.join(dir, 'keys/tsa-ca.pem'));
      const verified = verifyUrl(dir, await publicArchiveUrl(ceph.current, 'steps/ledgers'));
      expect(verified.result.code, verified.result.stderr).toBe(0);
      expect(verified.json).toMatchObject({ ok: true, days: 2, treeSize: 90, problems: [] });
    } finally {
      await tsa.stop();
      await witness.stop();
    }
  },
);

it(
  "a day's SCITT statements file is published like its ledger, and timeseal verify reads it from the bucket: signatures checked, a changed byte refused",
  { timeout: 120_000 },
  async () => {
    const dir = project('publish-statements');
    const env = s3Env(ceph.current, 'statements/ledgers');
    const store = await openArchiveStore(env.TIMESEAL_ARCHIVE!, ceph.current.env);
    // Three statements by @transmute/cose's signer, registered as POST /entries does (the form on the log).
    const issuerKey = await cose.key.generate<cose.SecretKeyJwk>('ES256', 'application/jwk+json');
    const issuerPublic = await cose.key.publicFromPrivate<cose.PublicKeyJwk>(issuerKey);
    fs.writeFileSync(path.join(dir, 'issuers.json'), JSON.stringify({ [ISS]: [issuerPublic] }));
    const db = await openStore({ db: path.join(dir, 'data/timeseal.db') });
    const entries: string[] = [];
    try {
      for (const n of [1, 2, 3]) {
        const statement = await signStatement(issuerKey, new TextEncoder().encode(`{"release":${n}}`));
        const bytes = new Uint8Array(await cose.receipt.remove(arrayBuffer(statement)));
        const entry = await entryOf(statement);
        entries.push(entry);
        await db.statements.register({ entry, bytes, registeredAt: new Date(`${day(1)}T12:00:0${n}Z`) });
      }
    } finally {
      await db.close();
    }
    const built = runJson(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: `${day(2)}T00:01:00Z` } });
    expect(built.result.code, built.result.stderr).toBe(0);
    const rel = `${day(1)}.statements.cbor`;
    const object = await store.read(rel);
    expect(object, rel).toBeDefined();
    expect(Buffer.from(object!).equals(fs.readFileSync(path.join(dir, 'data/archive-cache', rel)))).toBe(true);
    const listed = await Promise.all((cose.cbor.decode(object!) as Uint8Array[]).map((b) => entryOf(b)));
    expect(listed).toEqual([...entries].sort());

    // Read from the bucket: with the issuer's keys every signature is checked, without them they are named.
    const checked = runJson(dir, ['verify'], { env: { ...env, SCITT_ISSUER_KEYS: path.join(dir, 'issuers.json') } });
    expect(checked.result.code, checked.result.stdout).toBe(0);
    expect(checked.json).toMatchObject({ ok: true, location: env.TIMESEAL_ARCHIVE, days: 1, problems: [] });
    expect(checked.json.notes.join('\n')).not.toContain(rel);
    const unchecked = runJson(dir, ['verify'], { env });
    expect(unchecked.json.notes).toContain(
      `${rel}: the signature of 3 statements not checked: no x5chain and no key for its iss (SCITT_ISSUER_KEYS)`,
    );
    // One byte of the object changed (the last: a signature's), the working copy left as it was: refused.
    const changed = Buffer.from(object!);
    changed[changed.length - 1]! ^= 1;
    await store.replace(rel, changed);
    const refused = runJson(dir, ['verify'], { env: { ...env, SCITT_ISSUER_KEYS: path.join(dir, 'issuers.json') } });
    expect(refused.result.code).toBe(1);
    // A statement's entry is a hash of its bytes, so the changed statement has another entry: where that falls
    // before its neighbour's, the file's order is refused first (a run in two saw it), else its signature.
    expect(refused.json.problems.join('\n')).toMatch(
      new RegExp(
        `${rel.replace(/\./g, '\\.')}: (the statement of entry [0-9a-f]{64}: the ES256 signature does not verify|statements file\\[2\\]: entry [0-9a-f]{64} is not after [0-9a-f]{64})`,
      ),
    );
  },
);
