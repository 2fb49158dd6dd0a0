// `timeseal import FILE|-`: enqueue hashes at the current clock. One hash a line, in either case; a line may
// also be `sha256sum` output ("HASH  NAME" or "HASH *NAME"), the name kept as the file name. Blank lines are
// skipped. Any size, from a file or stdin: the lines are read as a stream into the store (enqueueStream), which
// stores nothing before the stream's end. If any line is invalid nothing is enqueued, and the bad lines are
// reported with their numbers (the first LISTED_PROBLEMS, then how many more).
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { TimesealCommand } from '../command.ts';
import { isHashHex } from '../../core/hash.ts';
import { utcDate } from '../../core/ledger.ts';
import { TimesealError } from '../../core/errors.ts';
import type { Context } from '../context.ts';
import { InputError, output } from '../output.ts';
import { PartlyStoredError, type Submission } from '../../store/store.ts';
import { readState } from '../../pipeline/archive-state.ts';
import { refuseClockBehindArchive } from '../../runtime/clock-guard.ts';

const MAX_NAME = 255;
/** Bad lines listed by number at most; the rest are counted. */
export const LISTED_PROBLEMS = 20;
/** Bytes read at a time (a pipe gives 64 KiB): about a thousand rows a batch, so that a batch's objects die in
 * V8's young generation; at 1 MiB they were promoted and the old generation grew with the line count. */
const CHUNK = 1 << 16;
/** A line longer than this is bad without being held whole (a hash with a name of MAX_NAME is far shorter). */
const MAX_LINE = 4_096;

/**
 * The submissions of a stream of lines, in batches, read as it arrives: memory is bounded by a chunk and a
 * batch, whatever the number of lines. Once a line is bad, no further batch is yielded; the lines are still read
 * to the end to count the bad ones, and then an InputError lists the first LISTED_PROBLEMS of them (with their
 * numbers) and how many there are, so that a store's enqueueStream stores nothing. A stream without any hash is
 * an InputError too.
 */
export async function* hashBatches(input: AsyncIterable<Buffer | string>, at: Date): AsyncGenerator<Submission[]> {
  const problems: string[] = [];
  let bad = 0;
  let rows: Submission[] = [];
  let found = 0;
  let lineNo = 0;
  let rest = '';
  // The start of a line past MAX_LINE while its end is still to come.
  let long: string | undefined;
  const decoder = new StringDecoder('utf8');
  const problem = (text: string): void => {
    if (++bad <= LISTED_PROBLEMS) problems.push(text);
  };
  const take = (raw: string): void => {
    lineNo++;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.length === 64 && isHashHex(line)) {
      // The common line: a hash alone.
      found++;
      if (bad === 0) rows.push({ hash: line.toLowerCase(), submittedAt: at, fileName: null, source: 'import' });
      return;
    }
    if (line.trim() === '') return;
    const m = /^\s*(\S+)(?:\s+\*?(.*))?$/.exec(line)!;
    const hash = m[1]!;
    const name = m[2]?.trim() || null;
    if (!isHashHex(hash)) {
      const shown = hash.length > 70 ? `${hash.slice(0, 70)}…` : hash;
      problem(`line ${lineNo}: "${shown}" is not a SHA-256 hash (64 hexadecimal characters)`);
    } else if (name !== null && name.length > MAX_NAME) {
      problem(`line ${lineNo}: file name longer than ${MAX_NAME} characters`);
    } else {
      found++;
      if (bad === 0) rows.push({ hash: hash.toLowerCase(), submittedAt: at, fileName: name, source: 'import' });
    }
  };
  const takeLong = (): void => {
    lineNo++;
    const hash = /^\s*(\S*)/.exec(long!)![1]!;
    problem(
      isHashHex(hash)
        ? `line ${lineNo}: file name longer than ${MAX_NAME} characters`
        : `line ${lineNo}: "${hash.slice(0, 70)}…" is not a SHA-256 hash (64 hexadecimal characters)`,
    );
    long = undefined;
  };
  const scan = (text: string): void => {
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      if (long !== undefined) takeLong();
      else take(from === 0 ? rest + text.slice(0, nl) : text.slice(from, nl));
      from = nl + 1;
    }
    const tail = from === 0 ? rest + text : text.slice(from);
    if (long !== undefined) rest = '';
    else if (tail.length > MAX_LINE) {
      long = tail.slice(0, 80);
      rest = '';
    } else rest = tail;
  };
  for await (const chunk of input) {
    scan(typeof chunk === 'string' ? chunk : decoder.write(chunk));
    if (rows.length > 0) {
      const batch = rows;
      rows = [];
      yield batch;
    }
  }
  scan(decoder.end());
  if (long !== undefined) takeLong();
  else if (rest !== '') take(rest);
  if (bad > 0) {
    const more = bad - problems.length;
    throw new InputError(
      `${bad} invalid line${bad > 1 ? 's' : ''}; nothing was enqueued`,
      more > 0 ? [...problems, `… and ${more} more invalid line${more > 1 ? 's' : ''}`] : problems,
    );
  }
  if (found === 0) throw new InputError('no hashes found; nothing was enqueued', []);
  if (rows.length > 0) yield rows;
}

/** The file's bytes as a stream, or standard input's for "-" (read as a stream: a non-blocking pipe fails a
 * synchronous read with EAGAIN); opening and reading errors say which file could not be read. */
async function* inputOf(file: string): AsyncGenerator<Buffer> {
  let stream: NodeJS.ReadableStream;
  if (file === '-') stream = process.stdin;
  else {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch (err) {
      const absent = (err as NodeJS.ErrnoException).code === 'ENOENT';
      throw new TimesealError(absent ? 'not-found' : 'io', `cannot read ${file}: ${(err as Error).message}`);
    }
    stream = fs.createReadStream('', { fd, highWaterMark: CHUNK });
  }
  try {
    for await (const chunk of stream) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  } catch (err) {
    throw new TimesealError('io', `cannot read ${file}: ${(err as Error).message}`);
  }
}

export function registerImport(program: TimesealCommand, ctx: () => Context): void {
  program
    .command('import')
    .description('enqueue SHA-256 hashes (one 64-hex hash a line, or sha256sum output; "-" reads stdin)')
    .argument('<file>', 'file of hashes, or - for standard input')
    .option('--json', 'machine-readable output')
    .act(async (file: string, opts: { json?: boolean }) => {
      const c = ctx();
      const at = c.clock();
      const date = utcDate(at);
      // Only a clock set back can be on or before the last published day; an acknowledged hash must never miss
      // its ledger. (readState also checks the archive's origin.)
      refuseClockBehindArchive(
        date,
        readState(c.config.archive, c.config.logOrigin).days.at(-1)?.date ?? '',
        'Nothing was enqueued.',
      );
      // A bad line anywhere, or a read that fails, stores nothing: the store keeps every row until the stream
      // has ended. A failure while SQLite copies them in slices leaves a prefix of the lines, said here.
      const enqueued = await (
        await c.store()
      ).submissions
        .enqueueStream(hashBatches(inputOf(file), at))
        .catch((err: unknown) => {
          if (!(err instanceof PartlyStoredError)) throw err;
          const cause = err.cause instanceof Error ? err.cause.message : String(err.cause);
          throw new TimesealError(
            'io',
            `the import stopped after ${err.stored} of ${err.total} hashes were enqueued for the ledger of ${date} (the first ${err.stored} hash lines): ${cause}. Importing the same lines again enqueues them all again; a hash enqueued twice on a day is in that day's ledger once, at its earliest time.`,
            { cause: err },
          );
        });
      output(!!opts.json).result({ enqueued, submitted_at: at.toISOString(), ledger_date: date }, () => [
        `Enqueued ${enqueued} hash${enqueued === 1 ? '' : 'es'} for the ledger of ${date} (published after 00:00 UTC).`,
      ]);
      return 'ok';
    });
}
