// `make build`: the static site (Astro, when site/src/pages exists) into dist/site, then any extra build
// steps that live beside the site (site/*/build.ts, e.g. the offline verifier), in name order.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

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
  if (fs.existsSync(script)) run(process.execPath, [script]);
}
