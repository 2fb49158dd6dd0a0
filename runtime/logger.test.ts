// The readable log line: a record with a stack, a calendar's long answer and many fields is one
// short line; LOG_FORMAT chooses JSON or readable lines, whatever stderr is.
import { expect, it } from 'vitest';
import { logFormat, prettyLine } from './logger.ts';

it('a huge record becomes one short line with the message, the error message and a few fields', () => {
  const err = {
    type: 'Error',
    message: 'calendar https://a.pool.opentimestamps.org did not answer: ECONNREFUSED',
    stack: `Error: x\n${'    at somewhere (file.ts:1:1)\n'.repeat(200)}`,
  };
  const record = {
    level: 40,
    time: Date.parse('2025-11-03T00:02:00Z'),
    pid: 1,
    hostname: 'h',
    msg: 'anchoring 2025-11-02: 0 of 4 calendars answered',
    err,
    answers: 'x'.repeat(5000),
    day: '2025-11-02',
    a: 1,
    b: 2,
    c: 3,
  };
  const json = JSON.stringify(record);
  expect(json.length).toBeGreaterThan(10_000);
  const line = prettyLine(json);
  expect(line).not.toContain('\n');
  expect(line.length).toBeLessThan(500);
  expect(line).toMatch(
    /^00:02:00 WARN  anchoring 2025-11-02: 0 of 4 calendars answered {2}err=calendar https:\/\/a\.pool/,
  );
  expect(line).not.toContain('at somewhere');
  expect(line).toContain('(+2 more; LOG_FORMAT=json shows all)');
});

it('a structured field too long for the line is named by its shape, never cut in the middle of its JSON', () => {
  // What the schedule logs after a build and after an anchoring that failed (a first `make start` offline).
  const line = prettyLine(
    JSON.stringify({
      level: 30,
      time: 0,
      msg: 'scheduled ledger build done',
      step: 'ledger build',
      result: { days: [], index: { merged: [], removed: 0, segments: 1, filesWritten: 0, bytesWritten: 0 } },
      failed: [{ date: '2026-12-01', commitment: '52091ba23a5860778b423b3d724340c9cb2fe2768a4dd02c61329d00cca81142' }],
      short: { date: '2026-12-01', met: true },
    }),
  );
  expect(line).toBe(
    '00:00:00 INFO  scheduled ledger build done  step=ledger build result={days, index} failed=[1 item] short={"date":"2026-12-01","met":true} (LOG_FORMAT=json shows all)',
  );
  // A long message is cut between words.
  const long = prettyLine(JSON.stringify({ level: 40, time: 0, msg: `${'calendar unreachable; '.repeat(20)}end` }));
  expect(long).toMatch(/unreachable;…$|calendar…$/);
  expect(long.length).toBeLessThan(330);
});

it('a short record stays whole', () => {
  expect(prettyLine(JSON.stringify({ level: 30, time: 0, msg: 'stopped' }))).toBe('00:00:00 INFO  stopped');
});

it('LOG_FORMAT: json or pretty whatever the terminal; unset, pretty only on a terminal; anything else is refused', () => {
  expect(logFormat({}, true)).toBe('pretty');
  expect(logFormat({}, false)).toBe('json');
  expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
  expect(logFormat({ LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
  expect(() => logFormat({ LOG_FORMAT: 'yaml' }, true)).toThrow(/LOG_FORMAT/);
});
