// One exit-code vocabulary for both command lines (core/exit-codes.ts): each outcome of `timeseal` and of
// `timeseal-client`, met as a user meets it, ends with the code the table gives it (0 ok, 1 failed or invalid, 2
// pending, 3 not found, 64 usage, 75 temporary) — against a real `timeseal serve` on loopback, the client run from
// its sources (client/src/cli/bin.ts) on this Node (its packed form: test/client/), a loopback server answering
// 503 for the temporary failure. And no command chooses its exit code: only the two entry points set
// process.exitCode, from main(), and every `timeseal` command registers its action with act(), whose outcome
// main() maps (cli/command.ts).
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CODES, type Outcome } from '../core/exit-codes.ts';
import { projectEnv, startServer, type SpawnedServer } from '../ingest/test/fixture.ts';
import { removeTempProjects, ROOT, run, tempProject, type RunResult } from './cli/helpers.ts';

const DAY = '2025-11-02';
const NOW = `${DAY}T12:00:00.000Z`;
const NEXT = '2025-11-03T00:01:00.000Z';
const CLIENT_BIN = path.join(ROOT, 'client/src/cli/bin.ts');
const hex = (): string => crypto.randomBytes(32).toString('hex');

let dir: string;
let env: Record<string, string>;
let server: SpawnedServer | undefined;
/** Answers 503 to every request: a server that fails for now. */
let failing: http.Server;
let failingUrl: string;

/** `timeseal-client <args>` from its sources, in `dir`, with a trust store of the test's. */
function client(args: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLIENT_BIN, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, TIMESEAL_TRUST: path.join(dir, 'trust.json'), LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const timeseal = (args: string[], now = NEXT): RunResult => run(dir, args, { env: { ...env, TIMESEAL_NOW: now } });

/** The exit code of `r` is the table's for `outcome`. */
function expectOutcome(r: RunResult, outcome: Outcome): void {
  expect(r.code, `${outcome}: ${r.stdout}${r.stderr}`).toBe(EXIT_CODES[outcome]);
}

beforeAll(async () => {
  dir = tempProject('exit-codes');
  env = projectEnv(dir, { LOG_FORMAT: 'json' });
  const init = timeseal(['keys', 'init'], `${DAY}T00:00:00.000Z`);
  expect(init.code, init.stderr).toBe(0);
  fs.writeFileSync(path.join(dir, 'doc.txt'), 'a document\n');
  server = await startServer(dir, { ...env, TIMESEAL_NOW: NOW });
  failing = http.createServer((_req, res) => res.writeHead(503).end());
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
}, 90_000);

afterAll(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await new Promise((resolve) => failing?.close(resolve));
  removeTempProjects();
});

describe('every outcome ends with the exit code of core/exit-codes.ts', () => {
  test('timeseal-client: stamp, verify and the failures a user meets', async () => {
    expectOutcome(await client(['stamp', 'doc.txt', '--server', server!.url]), 'ok');
    expect(fs.existsSync(path.join(dir, 'doc.txt.timeseal.json'))).toBe(true);
    expectOutcome(await client(['verify', 'doc.txt']), 'pending');
    const invalid = await client(['verify', '--digest', hex(), '--proof', 'doc.txt.timeseal.json', '--json']);
    expectOutcome(invalid, 'failed');
    expect(JSON.parse(invalid.stdout)).toMatchObject({ state: 'invalid', exitCode: EXIT_CODES.failed });
    const missing = await client(['verify', 'no-such-file.txt', '--json']);
    expectOutcome(missing, 'not-found');
    expect(JSON.parse(missing.stdout)).toMatchObject({ state: 'not-found', exitCode: EXIT_CODES['not-found'] });
    expectOutcome(await client(['verify', '--no-such-option']), 'usage');
    expectOutcome(await client(['stamp', 'doc.txt', '--batch-size', '0', '--server', server!.url]), 'usage');
    fs.writeFileSync(path.join(dir, 'other.txt'), 'another document\n');
    expectOutcome(await client(['stamp', 'other.txt', '--server', failingUrl]), 'temporary');
    expectOutcome(await client(['--help']), 'ok');
  }, 60_000);

  test('timeseal: a receipt pending, then kept; invalid, not found, bad usage', async () => {
    const proof = JSON.parse(fs.readFileSync(path.join(dir, 'doc.txt.timeseal.json'), 'utf8')) as { receipt: string };
    fs.writeFileSync(path.join(dir, 'doc.tsr'), Buffer.from(proof.receipt, 'base64'));
    expectOutcome(timeseal(['receipt', 'check', 'doc.tsr', '--file', 'doc.txt']), 'pending');
    expectOutcome(timeseal(['receipt', 'check', 'doc.tsr', '--digest', hex()]), 'failed');
    server!.child.kill('SIGTERM');
    await server!.exited;
    expectOutcome(timeseal(['ledger', 'build']), 'ok');
    expectOutcome(timeseal(['receipt', 'check', 'doc.tsr', '--file', 'doc.txt']), 'ok');
    expectOutcome(timeseal(['proof', hex()]), 'not-found');
    expectOutcome(timeseal(['receipt', 'check', 'no-such.tsr', '--file', 'doc.txt']), 'not-found');
    // A file named that is not there is "not found" in every command that reads one (the system's ENOENT).
    const noProof = timeseal(['ots', 'info', 'no-such.ots']);
    expectOutcome(noProof, 'not-found');
    expect(noProof.stderr).toMatch(/reading no-such\.ots: ENOENT/);
    // An archive whose server cannot be reached is temporary: the same command later goes on.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`;
    await new Promise((r) => closed.close(r));
    const unreachable = timeseal(['verify', '--archive', closedUrl]);
    expectOutcome(unreachable, 'temporary');
    expect(unreachable.stderr).toMatch(/unreachable \(ECONNREFUSED\)/);
    expectOutcome(timeseal(['ledger', 'build', '--date', 'yesterday']), 'usage');
    expectOutcome(timeseal(['no-such-command']), 'usage');
  }, 60_000);

  test('timeseal: a build while another run holds the archive lock is temporary (75), and goes on once it ends', async () => {
    // A second process holds the archive's lock (pipeline/lock.ts, beside the database) until its stdin closes.
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { withLockAsync } from ${JSON.stringify(path.join(ROOT, 'pipeline/lock.ts'))};
         await withLockAsync(process.argv[1], async () => {
           process.stdout.write('held\\n');
           await new Promise((r) => process.stdin.once('end', r).resume());
         });`,
        path.join(path.dirname(path.resolve(dir, env.TIMESEAL_DB!)), 'archive.lock'),
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    await new Promise((r) => holder.stdout.once('data', r));
    const busy = timeseal(['ledger', 'build'], '2025-11-04T00:01:00.000Z');
    expectOutcome(busy, 'temporary');
    expect(busy.stderr).toMatch(/another timeseal run holds .*archive\.lock \(pid \d+\); try again when it ends/);
    holder.stdin.end();
    await new Promise((r) => holder.once('close', r));
    expectOutcome(timeseal(['ledger', 'build'], '2025-11-04T00:01:00.000Z'), 'ok');
  });
});

describe('a usage mistake is 64, and only a usage mistake', () => {
  test('timeseal: a file that is no proof, missing receipt keys, a missing or damaged key at serve, a metrics port taken', () => {
    const big = path.join(dir, 'big.ots');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 5 * 1024 * 1024);
    const tooLarge = timeseal(['ots', 'info', 'big.ots']);
    expectOutcome(tooLarge, 'failed');
    expect(tooLarge.stderr).toMatch(/big\.ots: 5242880 bytes is too large for an OpenTimestamps proof/);

    const noKeys = path.join(dir, 'no-receipt-keys');
    fs.mkdirSync(noKeys, { recursive: true });
    const vector = path.join(ROOT, 'test/vectors/ots/opentimestamps-client/merkle1.txt.ots');
    const receiptKeys = timeseal([
      'ots',
      'verify-receipt',
      vector,
      '--receipt',
      'doc.txt',
      '--entry',
      hex(),
      '--keys',
      noKeys,
    ]);
    expectOutcome(receiptKeys, 'not-found');
    expect(receiptKeys.stderr).toMatch(/holds no receipt keys/);

    const serve = (extra: Record<string, string>) =>
      run(dir, ['serve'], { env: { ...env, TIMESEAL_NOW: NEXT, PORT: '0', ...extra } });
    const keys = path.join(dir, 'serve-keys');
    fs.cpSync(env.TIMESEAL_KEYS!, keys, { recursive: true });
    fs.rmSync(path.join(keys, 'public.pem'));
    const missing = serve({ TIMESEAL_KEYS: keys });
    expectOutcome(missing, 'not-found');
    expect(missing.stderr).toMatch(/cannot serve without the public keys/);
    fs.writeFileSync(path.join(keys, 'public.pem'), 'not a key\n');
    const damaged = serve({ TIMESEAL_KEYS: keys });
    expectOutcome(damaged, 'failed');
    expect(damaged.stderr).toMatch(/cannot serve without the public keys/);
    const taken = serve({ METRICS_LISTEN: `127.0.0.1:${(failing.address() as AddressInfo).port}` });
    expectOutcome(taken, 'failed');
    expect(taken.stderr).toMatch(/cannot listen for metrics on 127\.0\.0\.1:\d+ \(METRICS_LISTEN\): .*EADDRINUSE/);

    // A setting that is not valid is a usage mistake wherever it is read (here when the archive store is opened).
    const s3 = run(dir, ['ledger', 'build'], { env: { ...env, TIMESEAL_NOW: NEXT, TIMESEAL_ARCHIVE: 's3://' } });
    expectOutcome(s3, 'usage');
    expect(s3.stderr).toMatch(/TIMESEAL_ARCHIVE: not an S3 location/);
  }, 90_000);

  test('timeseal keys rotate-receipt before the receipt keys signed a day is refused (1), no usage mistake', () => {
    const fresh = tempProject('exit-codes-rotate');
    const freshEnv = projectEnv(fresh);
    expect(run(fresh, ['keys', 'init'], { env: freshEnv }).code).toBe(0);
    const r = run(fresh, ['keys', 'rotate-receipt'], { env: freshEnv });
    expectOutcome(r, 'failed');
    expect(r.stderr).toMatch(/the receipt keys have signed no published day yet/);
  });

  test('timeseal-client: a --digests-from list that is not sha256sum output is invalid, not bad usage', async () => {
    fs.writeFileSync(path.join(dir, 'list.txt'), 'these are not hashes\n');
    const r = await client(['stamp', '--digests-from', 'list.txt', '--server', failingUrl]);
    expectOutcome(r, 'failed');
    expect(r.stderr).toMatch(/list\.txt: not sha256sum output \(line 1\)/);
  });

  test("scripts/client-release.ts: an unknown argument is bad usage, with the table's code", () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/client-release.ts'), '--no-such-option'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(EXIT_CODES.usage);
    expect(r.stderr).toMatch(/^client-release: unknown argument --no-such-option\nusage: /);
  });
});

/** The files among `sources` (path → text) that choose an exit code themselves, other than `entryPoints`: they set
 * process.exitCode or exit, or (a `timeseal` command) register an action with commander's action(), whose
 * outcome main() would never see, instead of act(). */
function exitCodeChoosers(sources: Map<string, string>, entryPoints: string[]): string[] {
  return [...sources]
    .filter(
      ([file, text]) =>
        !entryPoints.includes(file) &&
        (/process\.exitCode\s*=|process\.exit\(/.test(text) ||
          (file.startsWith('cli/commands/') && /\.action\(/.test(text))),
    )
    .map(([file]) => file);
}

function sourcesOf(folders: string[]): Map<string, string> {
  const sources = new Map<string, string>();
  for (const folder of folders)
    for (const rel of fs.readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' }))
      if (rel.endsWith('.ts') && !rel.endsWith('.test.ts'))
        sources.set(`${folder}/${rel}`, fs.readFileSync(path.join(ROOT, folder, rel), 'utf8'));
  return sources;
}

describe('only the entry points set the exit code', () => {
  const ENTRY_POINTS = ['cli/cli.ts', 'client/src/cli/bin.ts'];

  test('finds a command that chooses its exit code itself (the check can fail)', () => {
    const example = new Map([
      ['cli/cli.ts', 'process.exitCode = await main(process.argv.slice(2));'],
      ['cli/commands/witness.ts', 'if (!report.met) process.exitCode = 1;'],
      ['client/src/cli/stamp.ts', 'process.exit(75);'],
      ['cli/commands/status.ts', "program.command('status').action(async () => {});"],
      ['cli/commands/ledger.ts', "ledger.command('build').act(async () => 'ok');"],
    ]);
    expect(exitCodeChoosers(example, ENTRY_POINTS)).toEqual([
      'cli/commands/witness.ts',
      'client/src/cli/stamp.ts',
      'cli/commands/status.ts',
    ]);
  });

  test('no file of cli/ or client/src/ but cli/cli.ts and client/src/cli/bin.ts', () => {
    const sources = sourcesOf(['cli', 'client/src']);
    expect(sources.size).toBeGreaterThan(30);
    expect(exitCodeChoosers(sources, ENTRY_POINTS)).toEqual([]);
  });
});
