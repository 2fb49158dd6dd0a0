// Witness cosignatures (pipeline/witness.ts; docs/FORMAT.md §4b) against loopback witnesses written from
// c2sp.org/tlog-witness (test/support/witness.ts), through the real CLI: two witnesses cosign each new
// checkpoint with a consistency proof from the size they last saw; `timeseal verify` checks every line; a
// witness that is down delays nothing and cosigns when it is back; a 409 is answered with a proof from the
// witness's size; a fork (another root at the same size) is refused by the witness; a cosignature of another
// checkpoint and garbage are rejected, nothing published.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeCheckpoint, parseCheckpoint } from '../../core/checkpoint.ts';
import { ed25519NoteSigner, parseVkey, seedFromPkcs8Pem, vkeyVerifier } from '../../core/cosignature.ts';
import { parseNote, signNote } from '../../core/note.ts';
import { readTlogPolicy } from '../support/tlog-policy.ts';
import { startWitness, type LoopbackWitness } from '../support/witness.ts';
import { flipByte, makeHashes, removeTempProjects, run, runAsync, runJson, tempProject } from './helpers.ts';

const ORIGIN = 'localhost:8080';
const lines = (file: string): string[] => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('witness cosignatures through the CLI', () => {
  let dir: string;
  let w1: LoopbackWitness;
  let w2: LoopbackWitness;
  let env: Record<string, string>;
  let day = 0;
  const ledgers = () => path.join(dir, 'ledgers');
  const dateOf = (n: number) => `2025-11-${String(2 + n).padStart(2, '0')}`;

  /** Publishes one more day of `n` hashes; returns its date. */
  const publishDay = (n = 40): string => {
    const date = dateOf(day++);
    expect(
      run(dir, ['import', '-'], {
        env: { TIMESEAL_NOW: `${date}T10:00:00.000Z` },
        input: `${makeHashes(`w-${date}`, n).join('\n')}\n`,
      }).code,
    ).toBe(0);
    const built = run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${dateOf(day)}T00:01:00.000Z` } });
    expect(built.code, built.stderr).toBe(0);
    return date;
  };
  /** The CLI, awaited (the witnesses answer from this process's event loop meanwhile). */
  const cosign = async (extra: Record<string, string> = {}) => {
    const result = await runAsync(dir, ['witness', 'cosign', '--json'], { env: { ...env, ...extra } });
    return { result, json: JSON.parse(result.stdout || 'null') };
  };

  beforeAll(async () => {
    dir = tempProject('witness');
    expect(run(dir, ['keys', 'init']).code).toBe(0);
    const logKey = vkeyVerifier(parseVkey(fs.readFileSync(path.join(dir, 'keys/ed25519.vkey'), 'utf8')));
    const logs = new Map([[ORIGIN, [logKey]]]);
    w1 = await startWitness({
      name: 'w1.example/witness',
      seed: new Uint8Array(32).fill(11),
      algorithm: 'ML-DSA-44',
      logs,
    });
    w2 = await startWitness({
      name: 'w2.example/witness',
      seed: new Uint8Array(32).fill(12),
      algorithm: 'Ed25519',
      logs,
    });
    env = { TIMESEAL_WITNESSES: `${w1.setting}, ${w2.setting}`, TIMESEAL_WITNESS_QUORUM: '2' };
  });
  afterAll(async () => {
    await w1.stop().catch(() => undefined);
    await w2.stop().catch(() => undefined);
    removeTempProjects();
  });

  test('with no witnesses configured there is nothing to do, and nothing is written', () => {
    publishDay();
    const { result, json } = runJson(dir, ['witness', 'cosign']);
    expect(result.code, result.stderr).toBe(0);
    expect(json).toMatchObject({ cosigned: [], met: true });
    expect(fs.existsSync(path.join(dir, 'keys/witnesses'))).toBe(false);
    expect(fs.readdirSync(ledgers()).filter((f) => f.endsWith('.cosignatures'))).toEqual([]);
  });

  test('both witnesses cosign; the day keeps its checkpoint, the latest checkpoint gains their lines; verify checks them', async () => {
    const date = dateOf(day - 1);
    const own = fs.readFileSync(path.join(ledgers(), `${date}.checkpoint`));
    const { result, json } = await cosign();
    expect(result.code, result.stderr).toBe(0);
    expect(json).toMatchObject({
      date,
      quorum: 2,
      cosigned: ['w1.example/witness', 'w2.example/witness'],
      failures: [],
      met: true,
    });
    const cosignatures = lines(path.join(ledgers(), `${date}.cosignatures`));
    expect(cosignatures.map((l) => l.split(' ')[1])).toEqual(['w1.example/witness', 'w2.example/witness']);
    expect(fs.readFileSync(path.join(ledgers(), `${date}.checkpoint`)).equals(own)).toBe(true);
    const latest = fs.readFileSync(path.join(ledgers(), 'checkpoint'), 'utf8');
    expect(latest).toBe(`${own}${cosignatures.map((l) => `${l}\n`).join('')}`);
    expect(parseNote(latest).signatures).toHaveLength(6);
    // The policy in the c2sp.org/tlog-policy format, read by the independent reader of the tests.
    const policy = readTlogPolicy(fs.readFileSync(path.join(dir, 'keys/witnesses'), 'utf8'));
    expect(policy.logs).toEqual([fs.readFileSync(path.join(dir, 'keys/ed25519.vkey'), 'utf8').trim()]);
    expect([...policy.witnesses]).toEqual([
      ['w1.example/witness', w1.vkey],
      ['w2.example/witness', w2.vkey],
    ]);
    expect(policy.satisfied(new Set(['w1.example/witness']))).toBe(false);
    expect(policy.satisfied(new Set(['w1.example/witness', 'w2.example/witness']))).toBe(true);
    expect(w1.state.get(ORIGIN)?.size).toBe(parseCheckpoint(parseNote(own).text).size);
    // A build with nothing new keeps the witnessed latest checkpoint; verify checks every line.
    expect(run(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: `${dateOf(day)}T00:05:00.000Z` } }).code).toBe(0);
    expect(fs.readFileSync(path.join(ledgers(), 'checkpoint'), 'utf8')).toBe(latest);
    const verify = runJson(dir, ['verify']);
    expect(verify.result.code, verify.result.stdout).toBe(0);
  });

  test('the next day is cosigned with a consistency proof from the size each witness saw', async () => {
    const before = w1.state.get(ORIGIN)!.size;
    const date = publishDay(70);
    const { json } = await cosign();
    expect(json).toMatchObject({ date, met: true });
    expect(w1.state.get(ORIGIN)!.size).toBeGreaterThan(before);
    expect(w1.statuses.at(-1)).toBe(200);
    expect(runJson(dir, ['verify']).json).toMatchObject({ ok: true });
  });

  test('a changed byte in a cosignature line fails verify, which names the file', () => {
    const copy = path.join(tempProject('witness-flip'), 'ledgers');
    fs.cpSync(ledgers(), copy, { recursive: true });
    const file = path.join(copy, `${dateOf(day - 1)}.cosignatures`);
    const text = fs.readFileSync(file, 'utf8');
    flipByte(file, text.indexOf(' ', 3) + 30);
    const { result, json } = runJson(dir, ['verify', '--archive', copy]);
    expect(result.code).toBe(1);
    expect(
      json.problems.some((p: string) => p.startsWith(`${dateOf(day - 1)}.cosignatures:`)),
      JSON.stringify(json.problems),
    ).toBe(true);
  });

  test('a witness that is down delays nothing; its cosignature is added when it is back', async () => {
    await w2.stop();
    const date = publishDay();
    const down = await cosign();
    expect(down.result.code).toBe(1);
    expect(down.json).toMatchObject({ date, cosigned: ['w1.example/witness'], met: false });
    expect(down.json.failures).toEqual([
      { witness: 'w2.example/witness', reason: expect.stringMatching(/no answer \(ECONNREFUSED\)/) },
    ]);
    expect(runJson(dir, ['verify']).json).toMatchObject({ ok: true });
    await w2.restart();
    const back = await cosign();
    expect(back.result.code, back.result.stderr).toBe(0);
    expect(back.json).toMatchObject({ date, cosigned: ['w1.example/witness', 'w2.example/witness'], met: true });
  });

  test('409: a log that lost its record of the witnesses learns their size and proves consistency from it', async () => {
    fs.rmSync(path.join(dir, 'data/witness-state.json'));
    publishDay();
    const statusesBefore = w1.statuses.length;
    const { result, json } = await cosign();
    expect(result.code, result.stderr).toBe(0);
    expect(json.met).toBe(true);
    expect(w1.statuses.slice(statusesBefore)).toEqual([409, 200]);
  });

  test('a cosignature of another checkpoint, or garbage, is rejected and nothing is published', async () => {
    const date = publishDay();
    w1.mode = 'wrong-checkpoint';
    w2.mode = 'garbage';
    const { result, json } = await cosign();
    w1.mode = 'ok';
    w2.mode = 'ok';
    expect(result.code).toBe(1);
    expect(json).toMatchObject({ date, cosigned: [], met: false });
    const reasons = Object.fromEntries(
      json.failures.map((f: { witness: string; reason: string }) => [f.witness, f.reason]),
    );
    expect(reasons['w1.example/witness']).toMatch(/line does not verify against this checkpoint .*not published/);
    expect(reasons['w2.example/witness']).toMatch(/not signature lines|no line from w2/);
    expect(fs.existsSync(path.join(ledgers(), `${date}.cosignatures`))).toBe(false);
    // A valid signature over the checkpoint, dated 2^53 - 1 seconds: refused, nothing published.
    w1.mode = 'future';
    const future = await cosign();
    w1.mode = 'ok';
    expect(future.json.failures.find((f: { witness: string }) => f.witness === 'w1.example/witness')?.reason).toMatch(
      /signed, but its timestamp 9007199254740991 is more than a day in the future; not published/,
    );
    expect(fs.readFileSync(path.join(ledgers(), `${date}.cosignatures`), 'utf8')).not.toContain('w1.example');
  });

  test('the witness refuses a log that presents another checkpoint of a size it has cosigned (a fork)', async () => {
    const latest = fs.readFileSync(path.join(ledgers(), 'checkpoint'), 'utf8');
    const cp = parseCheckpoint(parseNote(latest).text);
    const seed = seedFromPkcs8Pem(
      'Ed25519',
      fs.readFileSync(path.join(dir, 'data/private-keys/ed25519_private.pem'), 'utf8'),
    );
    // The witness holds this size already (its answers went unpublished above); the log's own key signs a fork.
    const size = w1.state.get(ORIGIN)!.size;
    const fork = signNote(encodeCheckpoint({ origin: cp.origin, size, root: new Uint8Array(32).fill(9) }), [
      ed25519NoteSigner(ORIGIN, seed),
    ]);
    const res = await fetch(`${w1.url}/add-checkpoint`, { method: 'POST', body: `old ${size}\n\n${fork}` });
    expect(res.status).toBe(422);
    expect(await res.text()).toMatch(/fork/);
    expect(w1.state.get(ORIGIN)!.size).toBe(size);
    // And a checkpoint not signed by the log's key is refused outright.
    const stranger = signNote(encodeCheckpoint({ origin: cp.origin, size: size + 1, root: new Uint8Array(32) }), [
      ed25519NoteSigner(ORIGIN, new Uint8Array(32).fill(1)),
    ]);
    expect(
      (await fetch(`${w1.url}/add-checkpoint`, { method: 'POST', body: `old ${size}\n\n${stranger}` })).status,
    ).toBe(403);
  });

  test('a witness rotated out: the new one is asked, the old one is recorded as retired, and verify passes on every past day', async () => {
    const cosignedBefore = fs.readdirSync(ledgers()).filter((f) => f.endsWith('.cosignatures'));
    expect(cosignedBefore.length).toBeGreaterThan(2);
    // An older archive's policy file, as published before the tlog-policy format: still read.
    fs.writeFileSync(path.join(dir, 'keys/witnesses'), `quorum 2\n${w1.vkey}\n${w2.vkey}\n`);
    const logKey = vkeyVerifier(parseVkey(fs.readFileSync(path.join(dir, 'keys/ed25519.vkey'), 'utf8')));
    const w3 = await startWitness({
      name: 'w3.example/witness',
      seed: new Uint8Array(32).fill(13),
      algorithm: 'Ed25519',
      logs: new Map([[ORIGIN, [logKey]]]),
    });
    try {
      // w2 leaves, w3 joins; the latest day still carries w2's line from before.
      const date = publishDay();
      const rotated = {
        TIMESEAL_WITNESSES: `${w1.setting}, ${w3.setting}`,
        TIMESEAL_WITNESS_QUORUM: '2',
        TIMESEAL_NOW: `${dateOf(day)}T00:03:00.000Z`,
      };
      const { result, json } = await cosign(rotated);
      expect(result.code, result.stderr).toBe(0);
      expect(json).toMatchObject({
        date,
        cosigned: ['w1.example/witness', 'w3.example/witness'],
        failures: [],
        met: true,
      });
      expect(w3.statuses).toEqual([200]);
      expect(fs.readFileSync(path.join(dir, 'keys/witnesses.retired'), 'utf8')).toBe(
        `retired ${dateOf(day)} ${w2.vkey}\n`,
      );
      expect([...readTlogPolicy(fs.readFileSync(path.join(dir, 'keys/witnesses'), 'utf8')).witnesses.keys()]).toEqual([
        'w1.example/witness',
        'w3.example/witness',
      ]);
      // Every past day's cosignatures (w2's among them) are checked with the key of their time.
      const verified = runJson(dir, ['verify']);
      expect(verified.result.code, JSON.stringify(verified.json.problems)).toBe(0);
      expect(verified.json.notes.filter((n: string) => /not checked/.test(n))).toEqual([]);
      // Without the retired witnesses' file, w2's lines are from a key verify does not know: ignored, said in a note.
      fs.renameSync(path.join(dir, 'keys/witnesses.retired'), path.join(dir, 'retired.bak'));
      const unknown = runJson(dir, ['verify']);
      fs.renameSync(path.join(dir, 'retired.bak'), path.join(dir, 'keys/witnesses.retired'));
      expect(unknown.result.code).toBe(0);
      expect(
        unknown.json.notes.some((n: string) =>
          /cosignature lines? from keys in neither keys\/witnesses nor keys\/witnesses\.retired, not checked/.test(n),
        ),
      ).toBe(true);
      // A retired witness's line that was changed is still a problem: its key is known.
      const copy = path.join(tempProject('witness-retired-flip'), 'ledgers');
      fs.cpSync(ledgers(), copy, { recursive: true });
      const old = path.join(copy, cosignedBefore[0]!);
      const text = fs.readFileSync(old, 'utf8');
      const w2Line = text.split('\n').findIndex((l) => l.includes('w2.example'));
      flipByte(old, text.split('\n').slice(0, w2Line).join('\n').length + 40);
      const flipped = runJson(dir, ['verify', '--archive', copy]);
      expect(flipped.result.code).toBe(1);
      expect(flipped.json.problems.some((p: string) => p.startsWith(`${cosignedBefore[0]}:`))).toBe(true);
      env = rotated;
    } finally {
      await w3.stop();
    }
  });

  test('bad settings stop the command with a message naming them', async () => {
    const bad = run(dir, ['witness', 'cosign'], { env: { TIMESEAL_WITNESSES: 'not-a-vkey http://127.0.0.1:1' } });
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/TIMESEAL_WITNESSES/);
    const quorum = (await cosign({ TIMESEAL_WITNESS_QUORUM: '3' })).result;
    expect(quorum.code).toBe(64);
    expect(quorum.stderr).toMatch(/TIMESEAL_WITNESS_QUORUM/);
  });
});
