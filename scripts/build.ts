// `make build`: the static site (Astro, when site/src/pages exists) into dist/site, then any extra build
// steps that live beside the site (site/*/build.ts, e.g. the offline verifier), in name order; then /verify is
// told the offline verifier's size as built. `--if-changed` (what `make start` runs) builds only when an input
// changed since the last build (scripts/build-inputs.ts), so a restart starts at once.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setting } from '../runtime/settings.ts';
import { buildFingerprint } from './build-inputs.ts';
import { verifierSizeText } from '../site/offline-verifier/size.ts';

const STAMP = 'dist/.build-inputs';
const keys = setting(process.env, 'TIMESEAL_KEYS');
const fingerprint = buildFingerprint(process.cwd(), keys);
const built = ['dist/site/index.html', 'dist/site/offline-verifier.html'].every((f) => fs.existsSync(f));
const previous = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8') : '';
if (process.argv.includes('--if-changed') && built && previous === fingerprint) {
  process.stdout.write('build: dist/site is up to date (no input changed since the last build)\n');
  process.exit(0);
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ASTRO_TELEMETRY_DISABLED: '1' } });
  if (result.status !== 0) {
    process.stderr.write(`build: ${command} ${args.join(' ')} failed\n`);
    process.exit(result.status ?? 1);
  }
}

if (fs.existsSync('site/src/pages')) run('npx', ['astro', 'build', '--silent']);
else process.stdout.write('build: no site yet (site/src/pages), skipping Astro\n');

for (const entry of fs.existsSync('site') ? fs.readdirSync('site').sort() : []) {
  const script = path.join('site', entry, 'build.ts');
  if (fs.existsSync(script)) run(process.execPath, [script, '--keys', keys]);
}

// The offline verifier's size, stated once, as built: /verify's card reads "about N KB" (data-verifier-size).
const verifier = 'dist/site/offline-verifier.html';
const verifyPage = 'dist/site/verify/index.html';
if (fs.existsSync(verifier) && fs.existsSync(verifyPage)) {
  const size = verifierSizeText(fs.statSync(verifier).size);
  const html = fs.readFileSync(verifyPage, 'utf8');
  fs.writeFileSync(verifyPage, html.replace(/(<span data-verifier-size>)[^<]*(<\/span>)/, `$1${size}$2`));
}
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync(STAMP, fingerprint);
