// docs/CONFIGURATION.md's tables from the settings table (runtime/settings.ts): `node scripts/configuration-doc.ts`
// rewrites each section's table in place (the prose around them is the page's own), and `pageProblems` is what
// test/configuration.test.ts holds the page to: every variable of the table in its section's table with its
// default and meaning, and no other variable.
import fs from 'node:fs';
import path from 'node:path';
import { SECTIONS, SETTINGS, type Setting } from '../runtime/settings.ts';

export const CONFIGURATION_PAGE = path.resolve(import.meta.dirname, '../docs/CONFIGURATION.md');

const HEAD = ['| variable | default | meaning |', '|---|---|---|'];

const entries = (): Array<[string, Setting<unknown>]> => Object.entries(SETTINGS);

/** A setting's default as the page says it: the text read in its place, or what the table says instead. */
export function defaultCell(entry: Setting<unknown>): string {
  return entry.default === undefined ? (entry.defaultText ?? '(unset)') : `\`${entry.default}\``;
}

/** One setting's row. */
export function settingRow(name: string, entry: Setting<unknown>): string {
  return `| \`${name}\` | ${defaultCell(entry)} | ${entry.text} |`;
}

/** The table of one section, in the order of the settings table. */
export function sectionTable(section: keyof typeof SECTIONS): string[] {
  return [...HEAD, ...entries().flatMap(([name, e]) => (e.section === section ? [settingRow(name, e)] : []))];
}

/** `markdown` with the table after each section's heading replaced by the one the settings table makes. */
export function rewritePage(markdown: string): string {
  const lines = markdown.split('\n');
  for (const [section, title] of Object.entries(SECTIONS) as Array<[keyof typeof SECTIONS, string]>) {
    const heading = lines.indexOf(`## ${title}`);
    if (heading < 0) throw new Error(`${CONFIGURATION_PAGE}: no heading "## ${title}"`);
    let start = heading + 1;
    while (start < lines.length && !lines[start]!.startsWith('|') && !lines[start]!.startsWith('## ')) start++;
    let end = start;
    while (end < lines.length && lines[end]!.startsWith('|')) end++;
    const table = sectionTable(section);
    lines.splice(start, end - start, ...(start === end ? [...table, ''] : table));
  }
  return lines.join('\n');
}

/**
 * What is wrong with the page against the settings table, one sentence a problem: a variable missing, under
 * another section, with another default or meaning, or named although the table has no such variable.
 */
export function pageProblems(markdown: string): string[] {
  const rows = new Map<string, { section: string; cells: string[] }>();
  let section = '';
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3);
    const cells = /^\|(.*)\|$/.exec(line)?.[1]?.split(' | ');
    const name = cells && /^ ?`([A-Z][A-Z0-9_]*)`$/.exec(cells[0]!)?.[1];
    if (name) rows.set(name, { section, cells: cells.map((c) => c.trim()) });
  }
  const problems: string[] = [];
  for (const [name, entry] of entries()) {
    const row = rows.get(name);
    const title = SECTIONS[entry.section];
    if (row === undefined) problems.push(`${name}: not in the page (its row: ${settingRow(name, entry)})`);
    else if (row.section !== title) problems.push(`${name}: under "${row.section}", the table says "${title}"`);
    else if (row.cells[1] !== defaultCell(entry))
      problems.push(`${name}: default ${row.cells[1]} in the page, ${defaultCell(entry)} in the table`);
    else if (row.cells.slice(2).join(' | ') !== entry.text)
      problems.push(`${name}: the meaning differs from the table's: ${entry.text}`);
  }
  for (const name of rows.keys())
    if (!(name in SETTINGS)) problems.push(`${name}: in the page, but runtime/settings.ts has no such setting`);
  return problems;
}

if (import.meta.main) {
  const before = fs.readFileSync(CONFIGURATION_PAGE, 'utf8');
  const after = rewritePage(before);
  fs.writeFileSync(CONFIGURATION_PAGE, after);
  process.stdout.write(
    `${path.relative(process.cwd(), CONFIGURATION_PAGE)}: ${after === before ? 'up to date' : 'tables rewritten'}\n`,
  );
}
