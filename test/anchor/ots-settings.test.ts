// Commands that do not stamp do not validate stamping settings: with OTS_CALENDARS naming one
// calendar and OTS_MIN_CALENDARS=2 (a stamping setting that is wrong here, or right only on the server),
// `timeseal ots info`, `ots verify` and `ots upgrade` still work; `timeseal anchor`, which stamps, still refuses.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ROOT, removeTempProjects, run, tempProject } from '../cli/helpers.ts';

afterAll(removeTempProjects);

const VECTORS = path.join(ROOT, 'test/vectors/ots/opentimestamps-client');
// One calendar, two required; headers from a closed port (nothing here needs them).
const env = {
  OTS_CALENDARS: 'https://calendar.example',
  OTS_MIN_CALENDARS: '2',
  BITCOIN_ESPLORA_URL: 'http://127.0.0.1:9',
};
const DIGEST = 'd32fee9a827f5a0d580f80beb7edce662dd99fcd6591e4ef8a6244403df0b7c9';

it('ots info', () => {
  const r = run(tempProject('ots-settings'), ['ots', 'info', path.join(VECTORS, 'merkle1.txt.ots')], { env });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`File sha256 hash: ${DIGEST}`);
});

it('ots verify: a pending proof is reported as pending (exit 2), not refused for a stamping setting (exit 64)', () => {
  const r = run(
    tempProject('ots-settings'),
    ['ots', 'verify', path.join(VECTORS, 'merkle1.txt.ots'), '--digest', DIGEST, '--json'],
    { env },
  );
  expect(r.stderr).not.toContain('OTS_MIN_CALENDARS');
  expect(r.code).toBe(2);
  const json = JSON.parse(r.stdout) as { ok: boolean; verified: unknown[]; pending: string[] };
  expect(json.ok).toBe(false);
  expect(json.pending).toContain('https://alice.btc.calendar.opentimestamps.org');
});

it('ots upgrade: a complete proof needs no calendar and is left as it is', () => {
  const dir = tempProject('ots-settings');
  const file = path.join(dir, 'hello-world.txt.ots');
  fs.copyFileSync(path.join(VECTORS, 'hello-world.txt.ots'), file);
  const r = run(dir, ['ots', 'upgrade', file, '--json'], { env });
  expect(r.stderr).not.toContain('OTS_MIN_CALENDARS');
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ complete: true, upgraded_from: [] });
});

it('timeseal anchor, which stamps, still refuses the setting (exit 64)', () => {
  const r = run(tempProject('ots-settings'), ['anchor'], { env });
  expect(r.code).toBe(64);
  expect(r.stderr).toContain('OTS_MIN_CALENDARS is 2 but OTS_CALENDARS names only 1 calendar');
});
