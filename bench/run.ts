// `make bench`: runs every bench/*.bench.ts in turn (each prints a Markdown section) and writes them, with the
// machine they ran on, to docs/BENCHMARKS.md, followed by bench/NOTES.md (how to read them). Extra arguments after `--only NAME` pick one benchmark.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { machine, ROOT } from './common.ts';

const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const benches = fs
  .readdirSync(path.join(ROOT, 'bench'))
  .filter((f) => f.endsWith('.bench.ts') && (!only || f.startsWith(only)))
  .sort();
const sections: string[] = [];
for (const file of benches) {
  process.stderr.write(`bench: ${file}\n`);
  const started = Date.now();
  const result = spawnSync(process.execPath, [path.join(ROOT, 'bench', file)], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 24,
  });
  if (result.status !== 0) {
    sections.push(`## ${file}\n\nFailed (exit ${result.status}); see the console output of \`make bench\`.\n`);
    continue;
  }
  sections.push(`${result.stdout.trim()}\n\n_(${file}, ${((Date.now() - started) / 1000).toFixed(0)} s)_\n`);
}
const notes = fs.readFileSync(path.join(ROOT, 'bench/NOTES.md'), 'utf8').trim();
const docPath = path.join(ROOT, 'docs/BENCHMARKS.md');
let doc: string;
if (only !== undefined && fs.existsSync(docPath)) {
  // One benchmark rerun: its section replaces the one it wrote before (found by the file named in its footer),
  // or goes before the notes; every other section stays as it was.
  doc = fs.readFileSync(docPath, 'utf8');
  const parts = doc.split(/(?=^## )/m);
  const notesHeading = notes.split('\n')[0]!;
  for (const [i, file] of benches.entries()) {
    const at = parts.findIndex((part) => part.includes(`_(${file}`));
    const notesAt = parts.findIndex((part) => part.startsWith(notesHeading));
    if (at >= 0) parts[at] = `${sections[i]}\n`;
    else parts.splice(notesAt >= 0 ? notesAt : parts.length, 0, `${sections[i]}\n`);
  }
  doc = parts.join('');
} else {
  doc = [
    '# Benchmarks',
    '',
    `Measured by \`make bench\` (\`node bench/run.ts\`) on ${new Date().toISOString().slice(0, 10)}.`,
    `Machine: ${machine()}. Other processes may share the machine; figures are from one run.`,
    '',
    ...sections,
    notes,
  ].join('\n');
}
fs.writeFileSync(docPath, `${doc.trimEnd()}\n`);
process.stdout.write(doc);
