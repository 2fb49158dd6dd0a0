// A reader of the output that goes away: `timeseal-client verify … | head -1` and `timeseal … | head -1`. Node
// ignores SIGPIPE, so a write to a pipe whose reader closed fails with EPIPE, which crashed both programs with a
// stack trace on stderr; each now ends quietly with 141 (128 + SIGPIPE, what a shell reports for a tool a closed
// pipe ended; core/exit-codes.ts endWhenOutputCloses). The real programs, from source, with their stdout piped to
// a reader that closes after the first line (the client, whose 6,000 lines are more than a pipe holds) or before
// anything is written (`timeseal`, whose answers here are one write).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { CLOSED_OUTPUT_STATUS } from '../../core/exit-codes.ts';
import { BIN, removeTempProjects, ROOT, tempProject } from './helpers.ts';

const CLIENT = path.join(ROOT, 'client/src/cli/bin.ts');

afterAll(() => removeTempProjects());

/** Runs `command`, reads its stdout up to `lines` lines (0: none), then closes the reading end; what it ended with. */
function readThenClose(
  command: string,
  args: string[],
  cwd: string,
  lines: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; read: string; stderr: string }> {
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, TIMESEAL_TRUST: path.join(cwd, 'trust.json') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let read = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  if (lines === 0) child.stdout.destroy();
  else
    child.stdout.on('data', (d: Buffer) => {
      read += d.toString();
      if (read.split('\n').length > lines) child.stdout.destroy();
    });
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, read: read.split('\n')[0]!, stderr })),
  );
}

describe('a reader of the output that goes away ends the program quietly', () => {
  test('timeseal-client verify of 6,000 files, piped to a reader that closes after one line: no stack trace, exit 141', async () => {
    const dir = tempProject('closed-output');
    const files = Array.from({ length: 6000 }, (_, i) => `missing-${i}.txt`);
    const r = await readThenClose(process.execPath, [CLIENT, 'verify', ...files], dir, 1);
    expect(r.read).toBe('missing-0.txt: NOT FOUND: no such file or folder');
    expect(r.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
    expect({ code: r.code, signal: r.signal }).toEqual({ code: CLOSED_OUTPUT_STATUS, signal: null });
  }, 60_000);

  test.each([
    {
      what: 'timeseal ots info',
      args: ['ots', 'info', path.join(ROOT, 'test/vectors/ots/opentimestamps-client/hello-world.txt.ots')],
    },
    { what: 'timeseal --help', args: ['--help'] },
  ])(
    '$what, piped to a reader gone before it writes: no stack trace, exit 141',
    async ({ args }) => {
      const r = await readThenClose(BIN, args, tempProject('closed-output'), 0);
      expect(r.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
      expect({ code: r.code, signal: r.signal }).toEqual({ code: CLOSED_OUTPUT_STATUS, signal: null });
    },
    60_000,
  );
});
