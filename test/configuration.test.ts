// The configuration reference is complete and true: runtime/settings.ts is the one table of every environment
// variable the service, the operator CLI and the build scripts read; docs/CONFIGURATION.md says what that table
// says (each variable in its section, with its default and meaning, and no other); no source reads a variable
// but through the table (`setting`); and client/README.md names every variable timeseal-client reads.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../runtime/settings.ts';
import { CONFIGURATION_PAGE, pageProblems, rewritePage } from '../scripts/configuration-doc.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Variables of the platform, read by the code but no setting of ours. */
const PLATFORM = new Set(['PATH', 'HOME', 'CI', 'NODE_COMPILE_CACHE', 'NODE_OPTIONS', 'NODE_ENV', 'TERM', 'TZ']);

const PREFIXES =
  'TIMESEAL|TSA|OTS|BITCOIN|HTTP|STRIPE|SMTP|ANCHOR|BETA|AWS|LOG|METRICS|FREE|DONATION|MAIL|CONTACT|TRUST|XDG';
const READ = new RegExp(
  [
    /\benv(?:\?\.|\.)([A-Z][A-Z0-9_]*)\b/.source,
    /\benv\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/.source,
    `['"\`]((?:${PREFIXES})_[A-Z0-9_]+|PORT|HOST)['"\`]`,
  ].join('|'),
  'g',
);

/** The variables a source file reads: `env.X`, `env['X']`, and names of our prefixes passed as strings. */
export function variablesRead(source: string): Set<string> {
  const found = new Set<string>();
  for (const m of source.matchAll(READ)) {
    const name = m[1] ?? m[2] ?? m[3]!;
    if (!PLATFORM.has(name)) found.add(name);
  }
  return found;
}

/** The one file that reads the environment by name (every other source asks it). */
const TABLE = 'runtime/settings.ts';

const DIRECT = new RegExp(
  [
    /\benv(?:\?\.|\.)([A-Z][A-Z0-9_]*)\b(?!\s*(?:\?\?)?=[^=])/.source,
    /\benv\[\s*([^\]]+?)\s*\](?!\s*(?:\?\?)?=[^=])/.source,
    /(\{[^{}]*\})\s*=\s*(?:process\.)?env\b/.source,
  ].join('|'),
  'g',
);

/**
 * The reads of the environment in `source` that go around the table: `env.X` and `env['X']` (but a variable of
 * the platform), `env[name]`, and a destructuring of `env`. Writes (`env.X = …`, a child's `{ ...env, X }`) are
 * no reads.
 */
export function directReads(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(DIRECT)) if (!(m[1] !== undefined && PLATFORM.has(m[1]))) found.push(m[0]);
  return found;
}

/** The variables a Markdown page documents: backquoted names in the first column of its tables. */
export function variablesDocumented(markdown: string): Set<string> {
  const found = new Set<string>();
  for (const line of markdown.split('\n')) {
    const first = /^\|([^|]+)\|/.exec(line)?.[1];
    if (first) for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) found.add(m[1]!);
  }
  return found;
}

function* sources(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!['test', 'node_modules', 'dist'].includes(entry.name)) yield* sources(rel);
    } else if (/\.(ts|tsx|mjs|astro)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) yield rel;
  }
}

const readAll = (dirs: string[]) => {
  const names = new Map<string, string>();
  for (const dir of dirs)
    for (const file of sources(dir))
      for (const name of variablesRead(fs.readFileSync(path.join(ROOT, file), 'utf8'))) names.set(name, file);
  return names;
};

const sourcesOf = (dirs: string[]) =>
  dirs.flatMap((dir) => [...sources(dir)]).map((file) => [file, fs.readFileSync(path.join(ROOT, file), 'utf8')]);
const SOURCES = sourcesOf([
  'core',
  'runtime',
  'store',
  'pipeline',
  'ingest',
  'cli',
  'scripts',
  'site/src',
  'site/offline-verifier',
]);
const PAGE = fs.readFileSync(CONFIGURATION_PAGE, 'utf8');

describe('the configuration reference', () => {
  it('finds what a source reads, how, and what a page documents (the checks can fail)', () => {
    const source = `const a = env.TIMESEAL_DB ?? 'x'; const b = process.env['PORT']; positiveInt(env, 'OTS_TIMEOUT_MS', 1);
      const c = env.PATH; const d = 'SHA256_DIGEST';`;
    expect([...variablesRead(source)].sort()).toEqual(['OTS_TIMEOUT_MS', 'PORT', 'TIMESEAL_DB']);
    expect([...variablesDocumented('| `A_B`, `C` | x | `D` in the text |\n`E` outside a table')].sort()).toEqual([
      'A_B',
      'C',
    ]);
    expect(
      directReads(`const a = env.TSA_MIN; const b = process.env['PORT']; const c = env[NAME];
        const { AWS_REGION: region } = env; const d = setting(env, 'TSA_MIN'); env.X = '1'; env[key] = v;
        process.env.NODE_COMPILE_CACHE ??= dir; const e = env.PATH; if (env.Y === '1') f();`),
    ).toEqual(['env.TSA_MIN', "env['PORT']", 'env[NAME]', '{ AWS_REGION: region } = env', 'env.Y']);
  });

  it('the check of the page finds a missing variable, a wrong default or meaning, and a variable of no setting', () => {
    expect(pageProblems(PAGE)).toEqual([]);
    const row = PAGE.split('\n').find((line) => line.startsWith('| `OTS_TIMEOUT_MS` |'))!;
    expect(pageProblems(PAGE.replace(`${row}\n`, ''))).toEqual([
      expect.stringMatching(/^OTS_TIMEOUT_MS: not in the page/),
    ]);
    expect(pageProblems(PAGE.replace(row, row.replace('`10000`', '`5000`')))).toEqual([
      'OTS_TIMEOUT_MS: default `5000` in the page, `10000` in the table',
    ]);
    expect(pageProblems(PAGE.replace(row, row.replace("request's limit", "request's deadline")))).toEqual([
      expect.stringMatching(/^OTS_TIMEOUT_MS: the meaning differs/),
    ]);
    expect(pageProblems(PAGE.replace(row, `${row}\n| \`OTS_RETRIES\` | \`3\` | retries |`))).toEqual([
      'OTS_RETRIES: in the page, but runtime/settings.ts has no such setting',
    ]);
    const moved = PAGE.replace(`${row}\n`, '').replace('| `TIMESEAL_NOW` |', `${row}\n| \`TIMESEAL_NOW\` |`);
    expect(pageProblems(moved)).toEqual([
      'OTS_TIMEOUT_MS: under "The clock, and what is for tests", the table says "Outside services of the daily schedule"',
    ]);
  });

  it('docs/CONFIGURATION.md says what runtime/settings.ts says (node scripts/configuration-doc.ts writes its tables)', () => {
    expect(pageProblems(PAGE)).toEqual([]);
    expect(rewritePage(PAGE)).toBe(PAGE);
  });

  it('no source reads a variable outside the table, and every variable of the table is read', () => {
    const around = SOURCES.filter(([file]) => file !== TABLE).flatMap(([file, text]) =>
      directReads(text!).map((read) => `${file}: ${read}`),
    );
    expect(around).toEqual([]);
    const unknown = SOURCES.flatMap(([file, text]) =>
      [...variablesRead(text!)].filter((name) => !(name in SETTINGS)).map((name) => `${name} (read in ${file})`),
    );
    expect(unknown).toEqual([]);
    const asked = SOURCES.filter(([file]) => file !== TABLE)
      .map(([, text]) => text!)
      .join('\n');
    expect(Object.keys(SETTINGS).filter((name) => !new RegExp(`['"\`]${name}['"\`]`).test(asked))).toEqual([]);
  });

  it('client/README.md names every variable timeseal-client reads', () => {
    const read = readAll(['client/src']);
    // The client's page says them in its prose: any backquoted name counts.
    const text = fs.readFileSync(path.join(ROOT, 'client/README.md'), 'utf8');
    const documented = new Set([...text.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
    expect([...read].filter(([name]) => !documented.has(name)).map(([n, f]) => `${n} (read in ${f})`)).toEqual([]);
  });
});
