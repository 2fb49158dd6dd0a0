// Writes test/durations.json, the wall time of each test file in seconds, from a full run's output: a Vitest
// JSON report (`--reporter=json --outputFile=REPORT.json`) or the console log of `make test` (its lines
// " ✓ path/file.test.ts (N tests) 1234ms", with the project's name before the path: " ✓  shared  path…"). test/support/sequencer.ts reads it to start the longest files first.
// Run it after a quiet full run when files were added or changed much:
//   node scripts/test-durations.ts REPORT.json|make-test.log
import fs from 'node:fs';
import path from 'node:path';

const [input] = process.argv.slice(2);
if (!input) {
  console.error('usage: node scripts/test-durations.ts REPORT.json|make-test.log');
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '..');
const text = fs.readFileSync(input, 'utf8');
const seconds = new Map<string, number>();
if (text.trimStart().startsWith('{')) {
  const parsed = JSON.parse(text) as { testResults: { name: string; startTime: number; endTime: number }[] };
  for (const r of parsed.testResults) {
    seconds.set(path.relative(process.cwd(), r.name).split(path.sep).join('/'), (r.endTime - r.startTime) / 1000);
  }
} else {
  const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
  // After the mark, the Vitest project's name when there are several (vitest.config.ts: shared, isolated).
  for (const m of plain.matchAll(/^ [✓❯×] +(?:[a-z-]+ +)?(\S+\.test\.ts) \(\d+ tests?[^)]*\) (\d+)ms/gmu))
    seconds.set(m[1]!, Number(m[2]) / 1000);
}
if (seconds.size === 0) {
  console.error(`${input}: no test file times found`);
  process.exit(1);
}
const durations = Object.fromEntries(
  [...seconds].sort((a, b) => b[1] - a[1]).map(([f, s]) => [f, Math.round(s * 10) / 10]),
);
fs.writeFileSync(path.join(root, 'test/durations.json'), JSON.stringify(durations, null, 2) + '\n');
const total = Object.values(durations).reduce((a, b) => a + b, 0);
console.log(`test/durations.json: ${seconds.size} files, ${Math.round(total)} s in all`);
