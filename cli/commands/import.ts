// `timeseal import FILE|-`: enqueue hashes at the current clock. One hash a line, in either case; a line may
// also be `sha256sum` output ("HASH  NAME" or "HASH *NAME"), the name kept as the file name. Blank lines are
// skipped. If any line is invalid nothing is enqueued and every bad line is reported with its number.
import fs from 'node:fs';
import type { Command } from 'commander';
import { isHashHex } from '../../core/hash.ts';
import { utcDate } from '../../core/ledger.ts';
import { TimesealError } from '../../core/errors.ts';
import type { Context } from '../context.ts';
import { InputError, output } from '../output.ts';
import type { Submission } from '../../store/store.ts';
import { readState } from '../../pipeline/archive-state.ts';
import { refuseClockBehindArchive } from '../../runtime/clock-guard.ts';

const MAX_NAME = 255;

export function parseHashLines(text: string, at: Date): Submission[] {
  const rows: Submission[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const m = /^\s*(\S+)(?:\s+\*?(.*))?$/.exec(line)!;
    const hash = m[1]!;
    const name = m[2]?.trim() || null;
    if (!isHashHex(hash)) {
      const shown = hash.length > 70 ? `${hash.slice(0, 70)}…` : hash;
      problems.push(`line ${i + 1}: "${shown}" is not a SHA-256 hash (64 hexadecimal characters)`);
    } else if (name !== null && name.length > MAX_NAME) {
      problems.push(`line ${i + 1}: file name longer than ${MAX_NAME} characters`);
    } else {
      rows.push({ hash: hash.toLowerCase(), submittedAt: at, fileName: name, source: 'import' });
    }
  });
  if (problems.length > 0) {
    throw new InputError(
      `${problems.length} invalid line${problems.length > 1 ? 's' : ''}; nothing was enqueued`,
      problems,
    );
  }
  if (rows.length === 0) throw new InputError('no hashes found; nothing was enqueued', []);
  return rows;
}

/** All of standard input, read as a stream: readFileSync(0) fails with EAGAIN when stdin is a non-blocking
 *  pipe whose writer has not yet written everything (anything past the pipe's 64 KB buffer). */
export async function readStdin(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

export function registerImport(program: Command, ctx: () => Context): void {
  program
    .command('import')
    .description('enqueue SHA-256 hashes (one 64-hex hash a line, or sha256sum output; "-" reads stdin)')
    .argument('<file>', 'file of hashes, or - for standard input')
    .option('--json', 'machine-readable output')
    .action(async (file: string, opts: { json?: boolean }) => {
      const c = ctx();
      let text: string;
      try {
        text = file === '-' ? await readStdin() : fs.readFileSync(file, 'utf8');
      } catch (err) {
        throw new TimesealError('io', `cannot read ${file}: ${(err as Error).message}`);
      }
      const at = c.clock();
      const date = utcDate(at);
      const rows = parseHashLines(text, at);
      // Only a clock set back can be on or before the last published day; an acknowledged hash must never miss
      // its ledger. (readState also checks the archive's origin.)
      refuseClockBehindArchive(
        date,
        readState(c.config.archive, c.config.logOrigin).days.at(-1)?.date ?? '',
        'Nothing was enqueued.',
      );
      await (await c.store()).submissions.enqueue(rows);
      output(!!opts.json).result({ enqueued: rows.length, submitted_at: at.toISOString(), ledger_date: date }, () => [
        `Enqueued ${rows.length} hash${rows.length === 1 ? '' : 'es'} for the ledger of ${date} (published after 00:00 UTC).`,
      ]);
    });
}
