// `make client-release`: the release command of timeseal-client (client/README.md, "Releasing"). It packs the
// package from a staged copy of client/ (its prepack bundles src/ and core/ into dist/; the working tree is left
// as it was), checks the tarball (no dependencies, the files it must carry), installs it into an empty temporary
// prefix as `npm install -g` would, runs the installed `timeseal-client --version` on every Node it is given
// (the Node on PATH and the system's /usr/bin/node, Node 20 on these machines), and prints the command that
// publishes it. It never publishes: that is a person's step, after `npm login` as the package's owner.
//   node scripts/client-release.ts [--out DIR] [--node PATH]...
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EXIT_CODES } from '../core/exit-codes.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** What the package must carry: the command, the library and its declarations, the README. */
const REQUIRED = ['package/package.json', 'package/README.md', 'package/dist/cli.mjs', 'package/dist/index.mjs'];

function usage(message: string): never {
  process.stderr.write(
    `client-release: ${message}\nusage: node scripts/client-release.ts [--out DIR] [--node PATH]...\n`,
  );
  process.exit(EXIT_CODES.usage);
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`${command} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

let out = path.join(ROOT, 'dist/client');
const nodes: string[] = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  const value = argv[i + 1];
  if ((a === '--out' || a === '--node') && (value === undefined || value.startsWith('--'))) usage(`${a} needs a value`);
  if (a === '--out') out = path.resolve(argv[++i]!);
  else if (a === '--node') nodes.push(argv[++i]!);
  else usage(`unknown argument ${a}`);
}
if (nodes.length === 0) {
  nodes.push('node');
  if (fs.existsSync('/usr/bin/node')) nodes.push('/usr/bin/node');
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-client-release-'));
try {
  // 1. Pack a copy of client/ beside links to core/ and node_modules/, as in the repository.
  const stage = path.join(work, 'stage');
  fs.mkdirSync(stage);
  fs.cpSync(path.join(ROOT, 'client'), path.join(stage, 'client'), {
    recursive: true,
    filter: (src) => !/[/\\](dist|node_modules)$|\.tgz$/.test(src),
  });
  for (const dir of ['core', 'node_modules']) fs.symlinkSync(path.join(ROOT, dir), path.join(stage, dir));
  fs.mkdirSync(out, { recursive: true });
  const [packed] = JSON.parse(
    run('npm', ['pack', '--json', '--pack-destination', out], path.join(stage, 'client')),
  ) as [{ filename: string; version: string; size: number; unpackedSize: number; files: Array<{ path: string }> }];
  const tarball = path.join(out, packed.filename);

  // 2. What it carries.
  const listed = run('tar', ['-tzf', tarball], work).split('\n').filter(Boolean);
  const missing = REQUIRED.filter((f) => !listed.includes(f));
  if (missing.length > 0) throw new Error(`${packed.filename} lacks ${missing.join(', ')}`);
  const manifest = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json'], work)) as {
    version: string;
    dependencies?: Record<string, string>;
  };
  const deps = Object.keys(manifest.dependencies ?? {});
  if (deps.length > 0) throw new Error(`${packed.filename} has dependencies (${deps.join(', ')}); it must carry none`);

  // 3. Installed globally into an empty prefix, offline, and run on each Node.
  const prefix = path.join(work, 'prefix');
  const npmEnv = {
    ...process.env,
    npm_config_prefix: prefix,
    npm_config_cache: path.join(work, 'npm-cache'),
    npm_config_update_notifier: 'false',
  };
  run('npm', ['install', '-g', '--offline', '--no-audit', '--no-fund', tarball], work, npmEnv);
  const bin = path.join(prefix, 'bin/timeseal-client');
  const ran: string[] = [];
  for (const node of nodes) {
    const version = run(node, ['--version'], work).trim();
    const said = run(node, [bin, '--version'], work).trim();
    if (said !== manifest.version)
      throw new Error(`timeseal-client --version on Node ${version} said ${said}, not ${manifest.version}`);
    ran.push(`Node ${version}`);
  }

  process.stdout.write(
    [
      `${tarball}: ${packed.size} bytes packed, ${packed.unpackedSize} installed, ${listed.length} files, no dependencies`,
      `installed into an empty prefix; timeseal-client --version says ${manifest.version} on ${ran.join(' and ')}`,
      `to publish it (after npm login, as the owner of timeseal-client on the registry):`,
      `  npm publish ${tarball}`,
      '',
    ].join('\n'),
  );
} catch (err) {
  process.stderr.write(`client-release: ${(err as Error).message}\n`);
  process.exitCode = EXIT_CODES.failed;
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
