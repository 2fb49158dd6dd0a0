// The configuration reference is complete: every environment variable the source of the service, the operator CLI
// and the scripts reads is named in docs/CONFIGURATION.md, every one the client reads in client/README.md, and
// neither page names a variable nothing reads (a renamed or removed setting leaves the page).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Variables of the platform, read by the code but no setting of ours. */
const PLATFORM = new Set(['PATH', 'HOME', 'CI', 'NODE_COMPILE_CACHE', 'NODE_OPTIONS', 'NODE_ENV', 'TERM', 'TZ']);

/** Variables documented for our settings but read by a library, not by our code: the AWS SDK's credential chain. */
const READ_BY_LIBRARIES = new Set(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']);

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
const page = (file: string) => variablesDocumented(fs.readFileSync(path.join(ROOT, file), 'utf8'));

describe('the configuration reference', () => {
  it('finds what a source reads and what a page documents (the checks can fail)', () => {
    const source = `const a = env.TIMESEAL_DB ?? 'x'; const b = process.env['PORT']; positiveInt(env, 'OTS_TIMEOUT_MS', 1);
      const c = env.PATH; const d = 'SHA256_DIGEST';`;
    expect([...variablesRead(source)].sort()).toEqual(['OTS_TIMEOUT_MS', 'PORT', 'TIMESEAL_DB']);
    expect([...variablesDocumented('| `A_B`, `C` | x | `D` in the text |\n`E` outside a table')].sort()).toEqual([
      'A_B',
      'C',
    ]);
  });

  it('docs/CONFIGURATION.md names every variable the service, the CLI and the scripts read, and no other', () => {
    const read = readAll(['core', 'runtime', 'store', 'pipeline', 'ingest', 'cli', 'scripts', 'site/src']);
    const documented = page('docs/CONFIGURATION.md');
    expect([...read].filter(([name]) => !documented.has(name)).map(([n, f]) => `${n} (read in ${f})`)).toEqual([]);
    expect([...documented].filter((name) => !read.has(name) && !READ_BY_LIBRARIES.has(name))).toEqual([]);
  });

  it('client/README.md names every variable timeseal-client reads', () => {
    const read = readAll(['client/src']);
    // The client's page says them in its prose: any backquoted name counts.
    const text = fs.readFileSync(path.join(ROOT, 'client/README.md'), 'utf8');
    const documented = new Set([...text.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
    expect([...read].filter(([name]) => !documented.has(name)).map(([n, f]) => `${n} (read in ${f})`)).toEqual([]);
  });
});
