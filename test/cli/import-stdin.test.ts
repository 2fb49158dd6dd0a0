// `timeseal import -` through a real shell pipe (`cat FILE | timeseal import -`) with more than the pipe's
// 64 KB buffer: reading stdin with readFileSync(0) failed with EAGAIN as soon as the writer was slower than the
// reader (found by probing it).
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { BIN, removeTempProjects, runJson, tempProject } from './helpers.ts';

afterAll(removeTempProjects);

test('cat 20,000 hashes | timeseal import - enqueues them all', () => {
  const dir = tempProject('import-pipe');
  const lines: string[] = [];
  for (let i = 0; i < 20_000; i++) lines.push(crypto.createHash('sha256').update(`pipe-${i}`).digest('hex'));
  const file = path.join(dir, 'hashes.txt');
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  expect(fs.statSync(file).size).toBeGreaterThan(1_000_000);

  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('TIMESEAL_') && k !== 'NODE_OPTIONS') env[k] = v;
  env.PATH = `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  env.TIMESEAL_NOW = '2025-11-02T10:00:00Z';
  // `cat` writes in pieces while the CLI starts: the CLI's stdin is a real pipe, not a file or a buffer.
  const r = spawnSync('sh', ['-c', 'cat "$1" | "$2" import - --json', 'sh', file, BIN], {
    cwd: dir,
    env,
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ enqueued: 20_000, ledger_date: '2025-11-02' });

  const { json } = runJson(dir, ['status']);
  expect(json.queue_size).toBe(20_000);
});
