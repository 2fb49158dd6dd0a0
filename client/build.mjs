// Builds the package into dist/ (run by `npm pack` through prepack, and by `npm run build`). Plain JavaScript so
// that any Node ≥ 20 runs it; it needs the repository's development dependencies (esbuild, typescript), which
// the published package does not: everything it runs is bundled.
//   dist/index.mjs        the library (browser-safe: a browser build of it must resolve no node: module)
//   dist/cli.mjs          the `timeseal-client` command: its options and help; each command's code is a chunk it
//                         loads when that command runs (a quick `--help`)
//   dist/chunks/*.mjs     those, and what the library and the command share (core/, @noble/*)
//   dist/types/*.d.mts    the library's type declarations
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const esbuild = await import(require.resolve('esbuild'));
const pkg = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));
const dist = path.join(here, 'dist');
const started = Date.now();

fs.rmSync(dist, { recursive: true, force: true });

// The library must run in a browser: bundling it for one fails on any node: import.
await esbuild.build({
  entryPoints: [path.join(here, 'src/index.ts')],
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  write: false,
  logLevel: 'error',
});

const result = await esbuild.build({
  entryPoints: { index: path.join(here, 'src/index.ts'), cli: path.join(here, 'src/cli/bin.ts') },
  outdir: dist,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['import', 'default'],
  external: ['node:*'],
  target: ['es2022', 'node20'],
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  minify: true,
  legalComments: 'eof',
  define: { CLIENT_VERSION: JSON.stringify(pkg.version) },
  metafile: true,
  logLevel: 'error',
});
const cli = path.join(dist, 'cli.mjs');
fs.writeFileSync(cli, `#!/usr/bin/env node\n${fs.readFileSync(cli, 'utf8')}`);
fs.chmodSync(cli, 0o755);

// Declarations, file by file without a type check (TypeScript's transpileDeclaration: every exported signature
// states its types; `make typecheck` and `make test` check client/ with tsc -p client/tsconfig.json). The package
// takes the modules the library's entry reaches, which must name only each other (a public type that is one of
// core/'s would leave a consumer an import it lacks); members marked @internal are left out.
const ts = require('typescript');
const outTypes = path.join(dist, 'types');
fs.mkdirSync(outTypes, { recursive: true });
const todo = ['index'];
const done = new Set();
while (todo.length > 0) {
  const name = todo.pop();
  if (done.has(name)) continue;
  done.add(name);
  const fileName = path.join(here, 'src', `${name}.ts`);
  const out = ts.transpileDeclaration(fs.readFileSync(fileName, 'utf8'), {
    fileName,
    reportDiagnostics: true,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      allowImportingTsExtensions: true,
      stripInternal: true,
      isolatedDeclarations: true,
      declaration: true,
    },
  });
  const problems = (out.diagnostics ?? []).map(
    (d) => `${name}.ts: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
  );
  if (problems.length > 0) throw new Error(`types:\n${problems.join('\n')}`);
  const text = out.outputText.replace(/(from\s+|import\()(['"])\.\/([\w-]+)\.(?:ts|js)\2/g, (_, lead, q, mod) => {
    todo.push(mod);
    return `${lead}${q}./${mod}.mjs${q}`;
  });
  const foreign = /(?:from\s+|import\()['"](\.\.?\/[^'"]*)['"]/.exec(text.replace(/['"]\.\/[\w-]+\.mjs['"]/g, ''));
  if (foreign) throw new Error(`types: ${name}.d.ts names ${foreign[1]}: a public type must be declared in client/src`);
  fs.writeFileSync(path.join(outTypes, `${name}.d.mts`), text);
}

let bytes = 0;
let files = 0;
const count = (dir) => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) count(p);
    else {
      files++;
      bytes += fs.statSync(p).size;
    }
  }
};
count(dist);
process.stderr.write(
  `timeseal-client ${pkg.version}: dist/ ${files} files, ${bytes} bytes, built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
void result;
