// The client's install as client/README.md prints it: the commands of its "Install" block run as they are, in
// bash, from a copy of the repository's client/ (beside core/ and node_modules/), with the system's Node 20 and
// npm only on PATH and npm's global prefix moved into an empty temporary folder (npm_config_prefix: what `npm
// install -g` writes there instead of /usr), offline; then the installed `timeseal-client --version` runs on
// /usr/bin/node. And the release command (scripts/client-release.ts, `make client-release`): it packs, installs,
// runs the package on Node 20 and prints the publish command without running it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';
const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'client/package.json'), 'utf8')) as { version: string })
  .version;
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-client-install-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The shell commands of the first ```sh block under the README's "## Install" heading. */
function installBlock(readme: string): string {
  const section = /^## Install\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  expect(section, 'client/README.md has an "## Install" section').toBeDefined();
  const block = /```sh\n([\s\S]*?)```/.exec(section!)?.[1];
  expect(block, 'its first ```sh block').toBeDefined();
  return block!;
}

test("client/README.md's install block, run as printed with Node 20's npm, installs a timeseal-client that runs on /usr/bin/node", () => {
  const block = installBlock(fs.readFileSync(path.join(ROOT, 'client/README.md'), 'utf8'));
  expect(block).toMatch(/npm install -g/);
  const repo = path.join(tmp, 'repo');
  fs.mkdirSync(repo);
  fs.cpSync(path.join(ROOT, 'client'), path.join(repo, 'client'), {
    recursive: true,
    filter: (src) => !/[/\\](dist|node_modules)$|\.tgz$/.test(src),
  });
  for (const dir of ['core', 'node_modules']) fs.symlinkSync(path.join(ROOT, dir), path.join(repo, dir));
  const prefix = path.join(tmp, 'prefix');
  const env = {
    PATH: SYSTEM_PATH,
    HOME: path.join(tmp, 'home'),
    LANG: 'C.UTF-8',
    npm_config_prefix: prefix,
    npm_config_offline: 'true',
    npm_config_cache: path.join(tmp, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  const r = spawnSync('/bin/bash', ['-e', '-c', block], { cwd: repo, env, encoding: 'utf8' });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  const installed = spawnSync(path.join(prefix, 'bin/timeseal-client'), ['--version'], { env, encoding: 'utf8' });
  expect(installed.stderr).toBe('');
  expect(installed.stdout.trim()).toBe(version);
  // The shebang's `node` is the system's Node 20 (PATH holds no other).
  expect(spawnSync('/bin/sh', ['-c', 'command -v node'], { env, encoding: 'utf8' }).stdout.trim()).toBe(
    '/usr/bin/node',
  );
}, 180_000);

test('the release command packs, installs into an empty prefix, runs on Node 20, and prints the publish command without running it', () => {
  const out = path.join(tmp, 'release');
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/client-release.ts'), '--out', out], {
    cwd: ROOT,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_cache: path.join(tmp, 'npm-cache-2') },
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  const tarball = path.join(out, `timeseal-client-${version}.tgz`);
  expect(fs.statSync(tarball).size).toBeGreaterThan(10_000);
  expect(r.stdout).toContain(`timeseal-client --version says ${version} on Node v`);
  expect(r.stdout).toMatch(/and Node v20\./);
  expect(r.stdout).toContain(`  npm publish ${tarball}\n`);

  const bad = spawnSync(process.execPath, [path.join(ROOT, 'scripts/client-release.ts'), '--out'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(bad.status).toBe(64);
  expect(bad.stderr).toContain('--out needs a value');
}, 180_000);
