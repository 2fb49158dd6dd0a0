// The service log (pino) on stderr, so stdout carries only the "listening" line. JSON lines when stderr is
// not a terminal (journald, files, log shippers) or when LOG_FORMAT=json; otherwise (a terminal, or
// LOG_FORMAT=pretty) one short readable line per record: time, level, message and a few fields, each cut to a
// readable length — an error shows its message, not its stack or a calendar's whole answer (a first
// `make start` without network printed multi-kilobyte JSON lines). LOG_LEVEL sets the level (default info).
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

function cut(text: string, max: number): string {
  const one = text.replace(/\s*\n\s*/g, ' ');
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function shortValue(value: unknown): string {
  if (value !== null && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string') {
    return cut((value as { message: string }).message, FIELD_MAX); // an error: its message only
  }
  if (typeof value === 'string') return cut(value, FIELD_MAX);
  return cut(JSON.stringify(value) ?? String(value), FIELD_MAX);
}

/** One pino JSON record as one readable line (without the newline). */
export function prettyLine(json: string): string {
  const { time, level: n, msg, pid: _pid, hostname: _host, ...rest } = JSON.parse(json) as Record<string, unknown>;
  const keys = Object.keys(rest);
  const fields = keys.slice(0, FIELDS_MAX).map((k) => `${k}=${shortValue(rest[k])}`);
  if (keys.length > FIELDS_MAX) fields.push(`(+${keys.length - FIELDS_MAX} more; LOG_FORMAT=json shows all)`);
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
