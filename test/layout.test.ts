// The layout follows the architecture (docs/ARCHITECTURE.md): which folder's source may import which. Tests
// may import from anywhere (a fixture builds an archive with pipeline/); the rule is for the other source files.
//   core/      itself; npm: @noble/hashes, @noble/curves, @noble/post-quantum only; no node:* (pure, runs in the
//              browser)
//   runtime/   core/, npm, node
//   store/     core/, runtime/, npm, node
//   pipeline/  core/, store/, runtime/, npm, node: never ingest/ or cli/
//   ingest/    core/, store/, runtime/, npm, node: never pipeline/ or cli/ (what it needs of the archive writer
//              is injected: ArchiveAccess in ingest/services.ts, made by cli/archive-access.ts)
//   cli/       anything: the `timeseal` command composes pipeline/ and ingest/
//   site/      core/ and itself (.ts, .tsx and .astro files); npm: its packages (site/README.md) and what core/
//              uses; node:* and esbuild only in the files that run at build time
//   client/    core/ and itself; no npm package and no node:* in the library (it runs in browsers and its package
//              has no dependencies); its command line (client/src/cli/) node:* and commander, bundled when packed
// And store/ owns the database (docs/ARCHITECTURE.md): no other folder's source prepares a statement or
// imports better-sqlite3, except pipeline/lock.ts, whose SQLite file is a kernel lock on a lock file, not the
// database. Only store/, cli/ (the composition point: it chooses the engine through store/index.ts), the tests
// and the benchmarks name a storage engine (import store/sqlite/, store/postgres/ or an engine's client); every
// other source file of the repository sees the Store interface only. No source file imports itself through
// others, static, dynamic and type-only imports alike. And site/ names an archive file only through
// archiveUrl(<a name from core/archive-paths.ts>): no source of it writes a /ledgers/<file> URL by hand.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

const ALLOWED: Record<string, readonly string[]> = {
  core: ['core'],
  runtime: ['core', 'runtime'],
  store: ['core', 'runtime', 'store'],
  pipeline: ['core', 'store', 'runtime', 'pipeline'],
  ingest: ['core', 'store', 'runtime', 'ingest'],
  site: ['core', 'site'],
  client: ['core', 'client'],
};
/** Folders of the repository that source may name at all (anything else relative is an error too). */
const FOLDERS = ['core', 'runtime', 'store', 'pipeline', 'ingest', 'cli', 'site', 'client'];

/** The npm packages and node:* modules a folder's source may import (a package's subpaths included), and the
 * files (or folders, ending in /) that may import more, and what: build scripts and a command line. A folder
 * not listed may import any npm package and node:*. */
const PACKAGES: Record<string, { allowed: readonly string[]; why: string; more?: Record<string, readonly string[]> }> =
  {
    core: {
      allowed: ['@noble/hashes', '@noble/curves', '@noble/post-quantum'],
      why: 'core/ is pure: @noble/* only, no node:* (core/README.md)',
    },
    site: {
      allowed: [
        'astro',
        '@astrojs/react',
        'react',
        'react-dom',
        'tailwindcss',
        'hash-wasm',
        '@noble/hashes',
        '@noble/curves',
        '@noble/post-quantum',
      ],
      why: 'site/ imports its own npm packages and what core/ uses (site/README.md)',
      more: {
        'site/src/lib/sealed-document.ts': ['node:*'],
        'site/offline-verifier/build.ts': ['node:*', 'esbuild'],
      },
    },
    client: {
      allowed: ['@noble/hashes', '@noble/curves', '@noble/post-quantum'],
      why: "the client's package has no dependency: only what core/ uses, bundled in; node:* only in its command line (client/README.md)",
      more: { 'client/src/cli/': ['node:*', 'commander'] },
    },
  };

/** The package a bare specifier names: `@scope/name` or `name` (a subpath dropped), or `node:*`. */
function packageOf(spec: string): string {
  if (spec.startsWith('node:')) return 'node:*';
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Each npm or node:* import of `file` that its folder's list does not allow, as "file: specifier (why)". */
export function packageViolationsOf(file: string, source: string): string[] {
  const rule = PACKAGES[file.split('/')[0]!];
  if (rule === undefined) return [];
  const more = Object.entries(rule.more ?? {})
    .filter(([where]) => (where.endsWith('/') ? file.startsWith(where) : file === where))
    .flatMap(([, names]) => names);
  return importsOf(source)
    .filter((spec) => !spec.startsWith('.') && ![...rule.allowed, ...more].includes(packageOf(spec)))
    .map((spec) => `${file}: ${spec} (${rule.why})`);
}

/** An import or re-export statement (from a line's start to its `from '…'`: import lists hold no semicolon), a
 * side-effect import, or a dynamic import. Text such as `from '2025-11-02'` inside a string is none of them. */
const SPECIFIER =
  /^[ \t]*(?:import|export)\b[^;'"`]*?\bfrom\s*(['"])([^'"]+)\1|^[ \t]*import\s*(['"])([^'"]+)\3|\bimport\s*\(\s*(['"])([^'"]+)\5\s*\)/gm;

/** The module specifiers a source file names: static imports and re-exports, side-effect and dynamic imports. */
export function importsOf(source: string): string[] {
  return [...source.matchAll(SPECIFIER)].map((m) => (m[2] ?? m[4] ?? m[6])!);
}

/** Each import of `file` (a path relative to the repository) that breaks the folder rules, as "file: specifier (why)". */
export function violationsOf(file: string, source: string): string[] {
  const folder = file.split('/')[0]!;
  const allowed = ALLOWED[folder];
  if (allowed === undefined) return [];
  const found = packageViolationsOf(file, source);
  for (const spec of importsOf(source)) {
    if (spec.startsWith('.')) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).split('/')[0]!;
      if (!allowed.includes(target))
        found.push(
          `${file}: ${spec} (${folder}/ may import only ${allowed.map((f) => `${f}/`).join(', ')}${FOLDERS.includes(target) ? '' : ', not outside the code folders'})`,
        );
    }
  }
  return found;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'test' && entry.name !== 'node_modules') yield* sourceFiles(rel);
    } else if (/\.(?:ts|tsx|astro)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
      yield rel;
    }
  }
}

describe('layout: what each folder may import', () => {
  it('finds a forbidden import in an example (the check can fail)', () => {
    expect(violationsOf('ingest/routes/proof.ts', "import { buildProof } from '../../pipeline/proof.ts';")).toEqual([
      'ingest/routes/proof.ts: ../../pipeline/proof.ts (ingest/ may import only core/, store/, runtime/, ingest/)',
    ]);
    expect(violationsOf('pipeline/x.ts', "const { serve } = await import('../cli/serve.ts');")).toHaveLength(1);
    expect(
      violationsOf('store/sqlite/db.ts', "import type { Services } from '../../ingest/services.ts';"),
    ).toHaveLength(1);
    expect(violationsOf('runtime/clock.ts', "export { openDatabase } from '../store/sqlite/db.ts';")).toHaveLength(1);
    expect(violationsOf('core/hash.ts', "import crypto from 'node:crypto';")).toHaveLength(1);
    expect(violationsOf('core/hash.ts', "import { x } from '../scripts/x.ts';")).toHaveLength(1);
    expect(
      violationsOf(
        'pipeline/build.ts',
        "import { openDatabase } from '../store/sqlite/db.ts';\nimport fs from 'node:fs';",
      ),
    ).toEqual([]);
    expect(violationsOf('cli/serve.ts', "import { buildApp } from '../ingest/app.ts';")).toEqual([]);
  });

  it('finds an npm package or node:* module a folder may not import in an example (the check can fail)', () => {
    expect(violationsOf('core/tsa-client.ts', "import * as pkijs from 'pkijs';")).toEqual([
      'core/tsa-client.ts: pkijs (core/ is pure: @noble/* only, no node:* (core/README.md))',
    ]);
    expect(violationsOf('core/sig.ts', "import { p256 } from '@noble/curves/nist.js';")).toEqual([]);
    expect(violationsOf('core/x.ts', "import { x } from '@noble-fake/hashes';")).toHaveLength(1);
    expect(violationsOf('site/src/lib/x.ts', "import * as pkijs from 'pkijs';")).toHaveLength(1);
    expect(violationsOf('site/src/lib/x.ts', "import fs from 'node:fs';")).toHaveLength(1);
    expect(violationsOf('site/src/lib/sealed-document.ts', "import fs from 'node:fs';")).toEqual([]);
    expect(violationsOf('site/offline-verifier/build.ts', "import * as esbuild from 'esbuild';")).toEqual([]);
    expect(violationsOf('site/offline-verifier/src/main.ts', "import * as esbuild from 'esbuild';")).toHaveLength(1);
    expect(
      violationsOf(
        'site/src/islands/X.tsx',
        "import { useState } from 'react';\nimport { createRoot } from 'react-dom/client';",
      ),
    ).toEqual([]);
    expect(violationsOf('client/src/stamp.ts', "import fs from 'node:fs';")).toHaveLength(1);
    expect(violationsOf('client/src/stamp.ts', "import { Command } from 'commander';")).toHaveLength(1);
    expect(
      violationsOf('client/src/cli/main.ts', "import { Command } from 'commander';\nimport fs from 'node:fs';"),
    ).toEqual([]);
    expect(violationsOf('runtime/tsa-client.ts', "import * as pkijs from 'pkijs';")).toEqual([]);
  });

  it('finds a folder site/ or client/ may not import in an example, in .ts, .tsx and .astro (the check can fail)', () => {
    expect(violationsOf('site/src/lib/x.ts', "import { buildProof } from '../../../pipeline/proof.ts';")).toEqual([
      'site/src/lib/x.ts: ../../../pipeline/proof.ts (site/ may import only core/, site/)',
    ]);
    expect(
      violationsOf(
        'site/src/pages/x.astro',
        "---\nimport { loadConfig } from '../../../runtime/config.ts';\n---\n<p />",
      ),
    ).toHaveLength(1);
    expect(violationsOf('site/src/islands/X.tsx', "const m = await import('../../../ingest/app.ts');")).toHaveLength(1);
    expect(violationsOf('site/src/islands/X.tsx', "import { x } from '../../../store/store.ts';")).toHaveLength(1);
    expect(
      violationsOf('client/src/stamp.ts', "import { loadSigningKeys } from '../../runtime/keys.ts';"),
    ).toHaveLength(1);
    expect(violationsOf('client/src/stamp.ts', "import { verifyBundle } from '../../core/proof.ts';")).toEqual([]);
    expect(violationsOf('site/src/lib/x.ts', "import { sha256 } from '../../../core/hash.ts';")).toEqual([]);
  });

  it('every code folder, site/ and client/ included, imports only what its README allows', () => {
    const files = Object.keys(ALLOWED).flatMap((folder) => [...sourceFiles(folder)]);
    const counted = Object.fromEntries(
      Object.keys(ALLOWED).map((folder) => [folder, files.filter((f) => f.startsWith(`${folder}/`)).length]),
    );
    for (const [folder, n] of Object.entries(counted)) expect(n, `source files found in ${folder}/`).toBeGreaterThan(0);
    let imports = 0;
    const violations: string[] = [];
    for (const file of files) {
      const source = fs.readFileSync(path.join(ROOT, file), 'utf8');
      imports += importsOf(source).length;
      violations.push(...violationsOf(file, source));
    }
    expect(imports).toBeGreaterThan(files.length);
    expect(violations).toEqual([]);
  });
});

/** Source outside store/ that may use SQLite anyway, and why. */
const SQL_ALLOWED: Record<string, string> = {
  'pipeline/lock.ts':
    'a kernel file lock held through an exclusive SQLite transaction on <lock>.sqlite, not the database',
};

/** Where `source` touches SQL directly: a prepared statement or better-sqlite3 itself. */
export function sqlUsesOf(source: string): string[] {
  const found: string[] = [];
  if (/\.prepare\(/.test(source)) found.push('.prepare(');
  if (importsOf(source).includes('better-sqlite3')) found.push('better-sqlite3');
  return found;
}

describe('layout: only store/ speaks SQL', () => {
  it('finds SQL in an example (the check can fail)', () => {
    expect(sqlUsesOf("const row = db.prepare('SELECT 1').get();")).toEqual(['.prepare(']);
    expect(sqlUsesOf("import Database from 'better-sqlite3';")).toEqual(['better-sqlite3']);
    expect(sqlUsesOf("import type Database from 'better-sqlite3';\nawait store.users.get(id);")).toEqual([
      'better-sqlite3',
    ]);
    expect(sqlUsesOf('await store.submissions.queueSize(last);')).toEqual([]);
  });

  it('no source of core/, runtime/, pipeline/, ingest/ or cli/ prepares a statement or imports better-sqlite3', () => {
    const files = ['core', 'runtime', 'pipeline', 'ingest', 'cli'].flatMap((folder) => [...sourceFiles(folder)]);
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((file) => {
      if (SQL_ALLOWED[file] !== undefined) return [];
      return sqlUsesOf(fs.readFileSync(path.join(ROOT, file), 'utf8')).map((use) => `${file}: ${use}`);
    });
    expect(found).toEqual([]);
    for (const file of Object.keys(SQL_ALLOWED))
      expect(fs.existsSync(path.join(ROOT, file)), `${file} (allowed) exists`).toBe(true);
  });
});

/** Folders whose source may name a storage engine: the storage module itself, the composition point (the
 * `timeseal` command opens the configured engine and, for `timeseal db`, an engine's own commands), the tests,
 * and the benchmarks (which measure the engines themselves). */
const ENGINE_NAMING = ['store', 'cli', 'test', 'bench'];
/** Folders that hold no source (data, generated files, tools), at any depth. */
const NOT_SOURCE = new Set(['node_modules', 'dist', 'data', 'ledgers', 'keys', 'bench-out', 'test-results']);
const CODE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs|astro)$/;

/** Source elsewhere that names an engine anyway: the engine names it may import, and why. */
const ENGINE_ALLOWED: Record<string, { names: readonly string[]; why: string }> = {
  'pipeline/lock.ts': {
    names: ['better-sqlite3'],
    why: 'a kernel file lock held through an exclusive SQLite transaction on <lock>.sqlite, not the database',
  },
};

/** The storage engines' clients: better-sqlite3 and Node's own SQLite, pg (and its pg-* companions) and postgres. */
const ENGINE_PACKAGE = /^(?:better-sqlite3|node:sqlite|pg|pg-[a-z-]+|postgres)(?:\/|$)/;

/** The imports of `file` (a path relative to the repository) that name a storage engine: an engine's client, or a
 * module of store/sqlite/ or store/postgres/. */
export function engineImportsOf(file: string, source: string): string[] {
  return importsOf(source).filter((spec) =>
    spec.startsWith('.')
      ? /^store\/(?:sqlite|postgres)(?:\/|$)/.test(
          path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)),
        )
      : ENGINE_PACKAGE.test(spec),
  );
}

/** Each engine `file` names that it may not, as "file: specifier": anything outside ENGINE_NAMING except what
 * ENGINE_ALLOWED grants that file. */
export function engineViolationsOf(file: string, source: string): string[] {
  if (ENGINE_NAMING.includes(file.split('/')[0]!)) return [];
  const granted = ENGINE_ALLOWED[file]?.names ?? [];
  return engineImportsOf(file, source)
    .filter((spec) => !granted.includes(spec))
    .map((spec) => `${file}: ${spec}`);
}

/** Every source file of the repository outside ENGINE_NAMING, tests excluded: the top level's own files and each
 * folder's, at any depth (a new folder is covered without being listed). */
function* engineFreeFiles(dir = ''): Generator<string> {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.name.startsWith('.') || NOT_SOURCE.has(entry.name)) continue;
    if (entry.isDirectory()) {
      if (entry.name !== 'test' && !(dir === '' && ENGINE_NAMING.includes(entry.name))) yield* engineFreeFiles(rel);
    } else if (CODE.test(entry.name) && !/\.(?:test|bench)\.[a-z]+$/.test(entry.name)) {
      yield rel;
    }
  }
}

describe('layout: only store/, cli/ and the tests name a storage engine', () => {
  it('finds an engine named elsewhere in an example (the check can fail)', () => {
    expect(
      engineViolationsOf('ingest/routes/submit.ts', "import { openSqliteStore } from '../../store/sqlite/engine.ts';"),
    ).toEqual(['ingest/routes/submit.ts: ../../store/sqlite/engine.ts']);
    expect(engineViolationsOf('pipeline/build.ts', "import type { DB } from '../store/sqlite/db.ts';")).toHaveLength(1);
    expect(
      engineViolationsOf('runtime/config.ts', "export { migratePostgres } from '../store/postgres/migrations.ts';"),
    ).toHaveLength(1);
    expect(engineViolationsOf('ingest/app.ts', "import pg from 'pg';")).toEqual(['ingest/app.ts: pg']);
    expect(
      engineViolationsOf('site/src/lib/x.ts', "const { default: Database } = await import('better-sqlite3');"),
    ).toHaveLength(1);
    expect(engineViolationsOf('scripts/build.ts', "import { DatabaseSync } from 'node:sqlite';")).toHaveLength(1);
    // The exception is for its one engine name only.
    expect(engineViolationsOf('pipeline/lock.ts', "import Database from 'better-sqlite3';")).toEqual([]);
    expect(engineViolationsOf('pipeline/lock.ts', "import pg from 'pg';")).toEqual(['pipeline/lock.ts: pg']);
    expect(engineViolationsOf('pipeline/build.ts', "import Database from 'better-sqlite3';")).toHaveLength(1);
    // The interface and the engine choice are not an engine; store/, cli/ and tests may name one.
    expect(
      engineViolationsOf(
        'ingest/app.ts',
        "import { openStore, type Store } from '../store/index.ts';\nimport { storageFault } from '../store/faults.ts';\nimport { sha256 } from '@noble/hashes/sha2.js';",
      ),
    ).toEqual([]);
    expect(
      engineViolationsOf('cli/commands/db.ts', "import { copySqliteToPostgres } from '../../store/postgres/copy.ts';"),
    ).toEqual([]);
    expect(engineViolationsOf('store/index.ts', "import { openSqliteStore } from './sqlite/engine.ts';")).toEqual([]);
    expect(engineViolationsOf('test/support/postgres.ts', "import pg from 'pg';")).toEqual([]);
  });

  it('no source outside store/, cli/, the tests and the benchmarks imports an engine (pipeline/lock.ts: better-sqlite3 only)', () => {
    const files = [...engineFreeFiles()];
    for (const folder of ['core', 'runtime', 'pipeline', 'ingest', 'site', 'client', 'scripts']) {
      expect(
        files.filter((f) => f.startsWith(`${folder}/`)).length,
        `source files found in ${folder}/`,
      ).toBeGreaterThan(0);
    }
    expect(files.filter((f) => f.endsWith('.astro')).length, '.astro files read').toBeGreaterThan(0);
    const found = files.flatMap((file) => engineViolationsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
    // Each exception is still needed: its file exists and names what it is allowed to.
    for (const [file, { names }] of Object.entries(ENGINE_ALLOWED)) {
      expect(files, `${file} (allowed) is read`).toContain(file);
      expect(
        engineImportsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8')),
        `${file} still needs its exception`,
      ).toEqual(names);
    }
  });
});

/** The import cycles among `files` (path -> its relative imports resolved to paths): each as a list of files. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's strongly connected components; a component of two or more files, or a file importing itself, is a
  // cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (let w = ''; w !== v;) {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      }
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}

/** Each file's relative imports (static, dynamic, type-only), resolved to paths from the repository's root. */
export function importGraph(sources: Record<string, string>): Map<string, string[]> {
  return new Map(
    Object.entries(sources).map(([file, source]) => [
      file,
      importsOf(source)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec))),
    ]),
  );
}

describe('layout: no import cycles', () => {
  it('finds a cycle in an example (the check can fail)', () => {
    const g = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(importCycles(g)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
    expect(
      importCycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('finds a cycle closed by a dynamic import, or by a type-only one, in example sources (the check can fail)', () => {
    expect(
      importCycles(
        importGraph({
          'site/src/lib/a.ts': "import { b } from './b.ts';",
          'site/src/lib/b.ts': "export async function b() { return (await import('./a.ts')).a; }",
        }),
      ),
    ).toEqual([['site/src/lib/a.ts', 'site/src/lib/b.ts']]);
    expect(
      importCycles(
        importGraph({
          'core/a.ts': "import type { B } from './b.ts';",
          'core/b.ts': "import { type A } from './a.ts';",
          'core/c.ts': "import { a } from './a.ts';",
        }),
      ),
    ).toEqual([['core/a.ts', 'core/b.ts']]);
    expect(
      importCycles(importGraph({ 'site/src/lib/a.ts': "const b = await import('./b.ts');", 'site/src/lib/b.ts': '' })),
    ).toEqual([]);
  });

  it('no source file imports itself through others (every code folder, site/ and client/; dynamic and type-only imports count)', () => {
    const files = FOLDERS.flatMap((folder) => [...sourceFiles(folder)]);
    for (const folder of ['site', 'client'])
      expect(files.filter((f) => f.startsWith(`${folder}/`)).length, `source files in ${folder}/`).toBeGreaterThan(0);
    const graph = importGraph(
      Object.fromEntries(files.map((file) => [file, fs.readFileSync(path.join(ROOT, file), 'utf8')])),
    );
    expect([...graph.values()].flat().length).toBeGreaterThan(files.length);
    expect(importCycles(graph)).toEqual([]);
  });
});

/** Comments of a .ts, .tsx or .astro source: block and JSDoc comments, HTML comments, and `//` comments that start
 * a line or follow a space (a URL's `://` in a string is not one). */
const COMMENT = /\/\*[\s\S]*?\*\/|<!--[\s\S]*?-->|(?:^|(?<=\s))\/\/.*$/gm;
/** An archive file's URL written out: `/ledgers/` and a file name after it (the page `/ledgers/` itself is not one). */
const ARCHIVE_FILE_URL = /\/ledgers\/[\w${}.-][^\s'"`<>)]*/g;

/** Each archive file URL that `source` (a site source file) writes by hand outside its comments, instead of
 * archiveUrl(<a name from core/archive-paths.ts>) (site/src/lib/archive-url.ts). */
export function handWrittenArchiveUrlsOf(source: string): string[] {
  return [...source.replace(COMMENT, '').matchAll(ARCHIVE_FILE_URL)].map((m) => m[0]);
}

describe('layout: the site names archive files only through core/archive-paths.ts', () => {
  it('finds a hand-written archive file URL in an example (the check can fail)', () => {
    expect(handWrittenArchiveUrlsOf("const res = await fetch('/ledgers/ots_status.json');")).toEqual([
      '/ledgers/ots_status.json',
    ]);
    expect(handWrittenArchiveUrlsOf('<a href={`/ledgers/${item.date}.checkpoint`} download>')).toEqual([
      '/ledgers/${item.date}.checkpoint',
    ]);
    expect(handWrittenArchiveUrlsOf('ledgerUrl: `${PLACEHOLDER}/ledgers/${day}.json`,')).toHaveLength(1);
    expect(handWrittenArchiveUrlsOf("getJson('/ledgers/block-info/' + month + '.json')")).toHaveLength(1);
    expect(handWrittenArchiveUrlsOf("net.get('/ledgers/checkpoint') // the latest")).toHaveLength(1);
    expect(handWrittenArchiveUrlsOf('<link rel="alternate" href="/ledgers/feed.xml" />')).toHaveLength(1);
    // Names from core joined by archiveUrl, the page /ledgers/ and comments are not hand-written archive URLs.
    expect(
      handWrittenArchiveUrlsOf(
        [
          "fetch(archiveUrl(blockInfoMonthPath(month)), { credentials: 'include' });",
          "const links = [{ href: '/ledgers/', label: 'Ledgers' }, { href: 'https://example.com/x' }];",
          '// the static archive: /ledgers/days.json when the API fails',
          "const base = '/ledgers/'; // then /ledgers/ots_status.json",
          '/** /ledgers/ots_status.json, or null\n *  when there is none (/ledgers/block_info.json too). */',
          '<!-- /ledgers/feed.xml -->',
        ].join('\n'),
      ),
    ).toEqual([]);
  });

  it('no source file of site/ writes an archive file URL by hand', () => {
    const files = [...sourceFiles('site')];
    expect(files.filter((f) => f.endsWith('.astro')).length, '.astro files read').toBeGreaterThan(0);
    expect(files.filter((f) => f.endsWith('.tsx')).length, '.tsx files read').toBeGreaterThan(0);
    const found = files.flatMap((file) =>
      handWrittenArchiveUrlsOf(fs.readFileSync(path.join(ROOT, file), 'utf8')).map((url) => `${file}: ${url}`),
    );
    expect(found).toEqual([]);
  });
});
