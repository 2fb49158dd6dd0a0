// The service log (pino) on stderr, so stdout carries only the "listening" line. JSON lines when stderr is
// not a terminal (journald, files, log shippers) or when LOG_FORMAT=json; otherwise (a terminal, or
// LOG_FORMAT=pretty) one short readable line per record: time, level, message and a few fields, each cut to a
// readable length — an error shows its message, not its stack or a calendar's whole answer (a first
// `make start` without network printed multi-kilobyte JSON lines). A structured field that does not fit is named
// by its shape (`{days, index}`, `[3 items]`), never printed as JSON cut off in the middle, which reads as a
// broken line. LOG_LEVEL sets the level (default info).
// Records never hold client addresses next to hashes (app.ts).
import pino, { type Logger } from 'pino';
import { setting } from './settings.ts';

const LABELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const FIELD_MAX = 80;
const FIELDS_MAX = 4;
const MESSAGE_MAX = 300;

/** LOG_FORMAT: json or pretty; unset, pretty on a terminal and JSON otherwise. */
export function logFormat(env: NodeJS.ProcessEnv, isTTY: boolean): 'json' | 'pretty' {
  return setting(env, 'LOG_FORMAT') ?? (isTTY ? 'pretty' : 'json');
}

/** `text` on one line, at most `max` characters: cut at the last space that keeps a word whole, then "…". */
function cut(text: string, max: number): string {
  const one = text.replace(/\s*\n\s*/g, ' ');
  if (one.length <= max) return one;
  const head = one.slice(0, max - 1);
  const space = head.lastIndexOf(' ');
  return `${space > max / 2 ? head.slice(0, space) : head}…`;
}

/** A field's value, short; `summarized` is true when a structured value was named by its shape. */
function shortValue(value: unknown): { text: string; summarized: boolean } {
  if (value !== null && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string') {
    return { text: cut((value as { message: string }).message, FIELD_MAX), summarized: false }; // an error: its message
  }
  if (typeof value === 'string') return { text: cut(value, FIELD_MAX), summarized: false };
  const json = JSON.stringify(value) ?? String(value);
  if (json.length <= FIELD_MAX || value === null || typeof value !== 'object') return { text: json, summarized: false };
  const shape = Array.isArray(value)
    ? `[${value.length} item${value.length === 1 ? '' : 's'}]`
    : `{${cut(Object.keys(value).join(', '), FIELD_MAX - 2)}}`;
  return { text: shape, summarized: true };
}

/** One pino JSON record as one readable line (without the newline). */
export function prettyLine(json: string): string {
  const { time, level: n, msg, pid: _pid, hostname: _host, ...rest } = JSON.parse(json) as Record<string, unknown>;
  const keys = Object.keys(rest);
  const shown = keys.slice(0, FIELDS_MAX).map((k) => ({ k, ...shortValue(rest[k]) }));
  const fields = shown.map(({ k, text }) => `${k}=${text}`);
  if (keys.length > FIELDS_MAX) fields.push(`(+${keys.length - FIELDS_MAX} more; LOG_FORMAT=json shows all)`);
  else if (shown.some((f) => f.summarized)) fields.push('(LOG_FORMAT=json shows all)');
  const head = `${new Date(Number(time)).toISOString().slice(11, 19)} ${LABELS[Number(n)] ?? n} ${cut(String(msg ?? ''), MESSAGE_MAX)}`;
  return fields.length > 0 ? `${head}  ${fields.join(' ')}` : head;
}

export function createLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  const level = setting(env, 'LOG_LEVEL');
  if (logFormat(env, process.stderr.isTTY === true) === 'json') {
    // Buffered: one write per 4 KB of records instead of one blocking write per request (about 5 µs each on
    // the beta API). The buffer is written at least every second and on exit (pino flushes on 'exit'); a
    // kill -9 can lose the last second of log lines, never a submission.
    const destination = pino.destination({ dest: 2, sync: false, minLength: 4096 });
    setInterval(() => destination.flush(), 1000).unref();
    return pino({ level }, destination);
  }
  const terminal = {
    write(line: string): void {
      process.stderr.write(`${prettyLine(line)}\n`);
    },
  };
  return pino({ level }, terminal);
}
