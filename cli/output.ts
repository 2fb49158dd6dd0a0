// Command output: with --json exactly one JSON document on stdout, otherwise lines for a person; and the error
// of bad input lines, which main() prints with every problem.
import { TimesealError } from '../core/errors.ts';
import type { Published } from '../pipeline/archive-publish.ts';

/** Bad input lines (import): the message, then each problem on a line of its own. */
export class InputError extends TimesealError {
  readonly problems: string[];
  constructor(message: string, problems: string[]) {
    super('format', message);
    this.name = 'InputError';
    this.problems = problems;
  }
}

export interface Output {
  json: boolean;
  /** Prints `data` as JSON, or `human()`'s lines. */
  result(data: unknown, human: () => string[]): void;
}

export function output(json: boolean): Output {
  return {
    json,
    result(data, human) {
      process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human().join('\n')}\n`);
    },
  };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** The text output's line on what was published (none on a folder archive: pipeline/archive-publish.ts). */
export function publishedLines(archive: Published<unknown>['archive']): string[] {
  if (archive === undefined) return [];
  const { created, present, replaced, bytes } = archive.publish;
  if (created + present + replaced === 0) return [`Published: ${archive.store} already holds the working copy.`];
  return [
    `Published to ${archive.store}: ${created} object${created === 1 ? '' : 's'} created, ${replaced} replaced (${formatBytes(bytes)})${present > 0 ? `; ${present} already there` : ''}.`,
  ];
}
