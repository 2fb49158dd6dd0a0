// Writes test/durations.json, the wall time of each test file in seconds, from a Vitest JSON report
// (`npx vitest run --reporter=default --reporter=json --outputFile=REPORT.json`). test/support/sequencer.ts
// reads it to start the longest files first. Run it, in the folder where the tests ran, after a quiet full run
// when files were added or changed much:   node scripts/test-durations.ts REPORT.json
import fs from 'node:fs';
import path from 'node:path';

const [report] = process.argv.slice(2);
if (!report) {
  console.error('usage: node scripts/test-durations.ts REPORT.json');
  process.exit(2);
}
const root = path.resolve(import.meta.dirname, '..');
const parsed = JSON.parse(fs.readFileSync(report, 'utf8')) as { testResults: { name: string; startTime: number; endTime: number }[] };
const durations: Record<string, number> = {};
for (const r of [...parsed.testResults].sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime))) {
  durations[path.relative(process.cwd(), r.name).split(path.sep).join('/')] = Math.round((r.endTime - r.startTime) / 100) / 10;
}
fs.writeFileSync(path.join(root, 'test/durations.json'), JSON.stringify(durations, null, 2) + '\n');
console.log(`test/durations.json: ${Object.keys(durations).length} files, ${Math.round(Object.values(durations).reduce((a, b) => a + b, 0))} s in all`);
