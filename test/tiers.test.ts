// The quick tier's promise (test/README.md): the files of the Vitest project `shared`, which `make check` runs,
// leave nothing behind in the worker they share (no module replaced, no environment changed, no fake timers,
// no global stubbed) and need no Debian package beyond the base system's programs. The lists live in
// test/support/tiers.ts; vitest.config.ts builds its projects from them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NEEDS_TEST_TOOLS, SHARED_WORKERS, TEST_TOOLS, TEST_TOOL_CALLS, TEST_TOOL_HELPERS } from './support/tiers.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** What a file may not do in a worker that other files share, each with the reason a reader is given. */
const LEAVES_BEHIND: Array<[RegExp, string]> = [
  [/\bvi\.(?:mock|doMock|unmock|hoisted)\s*\(/, 'replaces a module (vi.mock): the next file in the worker gets it'],
  [/\bvi\.(?:stubEnv|stubGlobal)\s*\(/, 'stubs the environment or a global'],
  [/\bvi\.useFakeTimers\s*\(/, 'fakes the timers'],
  [/\bprocess\.env(?:\.\w+|\[[^\]]+\])\s*(?:=(?!=)|\?\?=|\|\|=)/, 'assigns to process.env'],
  [/\bdelete\s+process\.env\b/, 'deletes from process.env'],
  [/\bObject\.assign\(\s*process\.env\b/, 'assigns to process.env'],
];
const TOOL = new RegExp(`['"\`](?:/usr/s?bin/)?(${TEST_TOOLS.map(escape).join('|')})['"\` ]`);
const HELPER = new RegExp(`['"][./]*(${TEST_TOOL_HELPERS.map(escape).join('|')})(?:\\.ts)?['"]`);

/** Why a file (its source) cannot be in the quick tier: one line per broken promise, empty when it can. */
export function brokenPromises(file: string, source: string): string[] {
  const found: string[] = [];
  for (const [pattern, why] of LEAVES_BEHIND) if (pattern.test(source)) found.push(`${file}: ${why}`);
  const tool = TOOL.exec(source);
  if (tool) found.push(`${file}: runs ${tool[1]}, from a Debian package a fresh machine lacks`);
  const helper = HELPER.exec(source);
  if (helper) found.push(`${file}: imports ${helper[1]}, which starts a Debian package's program`);
  for (const [name, pkg] of TEST_TOOL_CALLS)
    if (new RegExp(`\\b${name}\\s*\\(`).test(source)) found.push(`${file}: runs ${pkg} through ${name}()`);
  return found;
}

const matching = (patterns: readonly string[]) =>
  new Set(patterns.flatMap((p) => fs.globSync(p, { cwd: ROOT })).map((f) => f.split(path.sep).join('/')));

describe('the quick tier (Vitest project shared, make check)', () => {
  it('finds each broken promise in an example (the check can fail)', () => {
    const cases: Array<[string, string]> = [
      ["vi.mock('../store/index.ts', () => ({}));", 'replaces a module'],
      ["vi.stubEnv('PORT', '0');", 'stubs'],
      ['vi.useFakeTimers();', 'fakes the timers'],
      ["process.env.TIMESEAL_NOW = '2025-01-01T00:00:00Z';", 'assigns to process.env'],
      ["process.env['PORT'] ??= '0';", 'assigns to process.env'],
      ['delete process.env.TZ;', 'deletes'],
      ['Object.assign(process.env, extra);', 'assigns to process.env'],
      ["spawnSync('pdftotext', ['-layout', file, '-']);", 'runs pdftotext'],
      ["execFileSync('/usr/bin/qpdf', ['--check', f]);", 'runs qpdf'],
      ["import { startPostgres } from '../support/postgres.ts';", 'imports support/postgres'],
      ["import { launch } from './support/chromium.ts';", 'imports support/chromium'],
      ['const [ref] = referenceRead([file]);', 'runs python3-opentimestamps'],
    ];
    for (const [source, why] of cases) {
      const found = brokenPromises('x.test.ts', source);
      expect(found, source).toHaveLength(1);
      expect(found[0]).toContain(why);
    }
    // What stays allowed: reading the environment, comparing it, the base system's programs.
    expect(brokenPromises('x.test.ts', "const port = process.env.PORT ?? '0'; if (process.env.CI === '1') {}")).toEqual(
      [],
    );
    expect(brokenPromises('x.test.ts', "spawnSync('openssl', ['dgst']); spawnSync('python3', ['-c', s]);")).toEqual([]);
    expect(brokenPromises('x.test.ts', "const engine = 'postgresql://'; // pdftotext reads it")).toEqual([]);
  });

  it('holds in every file of the tier', () => {
    const needsTools = matching(NEEDS_TEST_TOOLS);
    // This file itself is left out: its examples are the broken promises.
    const quick = [...matching(SHARED_WORKERS)].filter((f) => !needsTools.has(f) && f !== 'test/tiers.test.ts');
    expect(quick.length).toBeGreaterThan(50);
    const broken = quick.flatMap((f) => brokenPromises(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(broken).toEqual([]);
  });

  it('runs the files that need test tools in workers of their own project, and names only files that exist', () => {
    const shared = matching(SHARED_WORKERS);
    for (const f of NEEDS_TEST_TOOLS) {
      expect(shared.has(f), `${f} is one of SHARED_WORKERS`).toBe(true);
      const source = fs.readFileSync(path.join(ROOT, f), 'utf8');
      expect(brokenPromises(f, source).join('\n'), `${f} needs a test tool`).toMatch(/runs |imports /);
    }
  });
});

describe('test/README.md', () => {
  /** The repository paths a text names in backquotes (`test/support/x.ts`, `scripts/y.sh`). */
  const pathsIn = (text: string) =>
    [
      ...text.matchAll(
        /`((?:test|scripts|core|ingest|pipeline|cli|site|store|runtime|deploy)\/[\w./-]+\.(?:ts|sh|json|conf))`/g,
      ),
    ].map((m) => m[1]!);

  it('names only files that exist (the check can fail)', () => {
    expect(pathsIn('`test/support/nope.ts` and `scripts/x.sh`, not `npm`')).toEqual([
      'test/support/nope.ts',
      'scripts/x.sh',
    ]);
    const named = pathsIn(fs.readFileSync(path.join(ROOT, 'test/README.md'), 'utf8'));
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((f) => !fs.existsSync(path.join(ROOT, f)))).toEqual([]);
  });
});
