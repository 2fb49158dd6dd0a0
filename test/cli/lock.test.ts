// pipeline/lock.ts across real processes: a lock whose owner died (a pid file naming a dead process) is
// raced for by several processes at the same instant, many rounds, and never lets two in at once; a holder
// killed with SIGKILL frees the lock at once; a live holder's lock is refused with its pid named.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import { ROOT, removeTempProjects, tempProject } from './helpers.ts';

afterAll(removeTempProjects);

/** The Node running the tests (the Makefile's). */
const NODE = process.execPath;
const RACER = path.join(ROOT, 'test/cli/lock-racer.ts');

function racer(file: string, marker: string, goAt: number, hold: number) {
  const child = spawn(NODE, [RACER, file, marker, String(goAt), String(hold)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<string>((resolve) => child.on('close', () => resolve(out.trim())));
  return { child, exited, output: () => out };
}

/** The pid of a process that has ended. */
function deadPid(): number {
  const r = spawnSync('sh', ['-c', 'echo $$']);
  return Number(String(r.stdout).trim());
}

test('racers for a lock whose owner died never get in two at a time', { timeout: 180_000 }, async () => {
  const dir = tempProject('lock-race');
  const file = path.join(dir, 'archive.lock');
  const marker = path.join(dir, 'inside');
  const rounds = 25;
  const racers = 6;
  const tally = { in: 0, overlap: 0, refused: 0, other: [] as string[] };
  for (let round = 0; round < rounds; round++) {
    fs.writeFileSync(file, String(deadPid())); // the stale lock a killed owner left
    fs.rmSync(marker, { force: true });
    const goAt = Date.now() + 700;
    const outputs = await Promise.all(Array.from({ length: racers }, () => racer(file, marker, goAt, 40).exited));
    for (const o of outputs) {
      if (o === 'in' || o === 'overlap' || o === 'refused') tally[o]++;
      else tally.other.push(o);
    }
  }
  expect(tally.overlap, JSON.stringify(tally)).toBe(0);
  expect(tally.other).toEqual([]);
  // Every round let someone in (the dead owner's lock did not block), and racing happened (some were refused).
  expect(tally.in).toBeGreaterThanOrEqual(rounds);
  expect(tally.refused).toBeGreaterThan(0);
});

test('a holder killed with SIGKILL frees the lock; a live holder is refused by pid', { timeout: 60_000 }, async () => {
  const dir = tempProject('lock-kill');
  const file = path.join(dir, 'archive.lock');
  const holder = racer(file, path.join(dir, 'inside'), 0, -1);
  await vi.waitFor(() => expect(holder.output()).toBe('held\n'), { timeout: 30_000, interval: 20 });
  const refusedWhileHeld = racer(file, path.join(dir, 'inside-2'), 0, 0);
  expect(await refusedWhileHeld.exited).toBe('refused');
  expect(fs.readFileSync(file, 'utf8')).toBe(String(holder.child.pid));
  holder.child.kill('SIGKILL');
  await holder.exited;
  const after = racer(file, path.join(dir, 'inside-3'), 0, 0);
  expect(await after.exited).toBe('in');
});
