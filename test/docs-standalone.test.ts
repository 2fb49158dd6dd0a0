// The repository's docs stand alone: a newcomer with only the clone can follow every reference. No tracked file
// names the design notes or the style guide kept outside the repository, an issue number of the project's
// tracker, or a numbered section of the product specification (which is not in the repository either): a
// comment or README points to a file in docs/ or names the behaviour it means.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The patterns, built so that this file does not match itself. */
const FORBIDDEN: Array<[string, RegExp]> = [
  ['the design notes', new RegExp(['DESIGN', 'md'].join('\\.'))],
  ['the style guide', new RegExp(['STYLE', 'md'].join('\\.'))],
  ['an issue number', new RegExp(['\\bissues?', '#?\\d+\\b'].join(' '), 'i')],
  ['a section of the product spec', new RegExp(['\\bspec', '§'].join(' '), 'i')],
];

/** Each line of `text` that breaks a rule, as "file:line: what (the line)". */
export function referencesOutside(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [what, re] of FORBIDDEN)
      if (re.test(line)) found.push(`${file}:${i + 1}: names ${what}: ${line.trim().slice(0, 120)}`);
  });
  return found;
}

test('the check finds each kind of reference (it can fail)', () => {
  const samples = [
    `see ${['DESIGN', 'md'].join('.')} §8`,
    `house rules in ${['STYLE', 'md'].join('.')}`,
    `fixed for ${'Issue'} 14, item 2`,
    `as the product ${'spec'} §9 says`,
  ];
  expect(samples.map((s) => referencesOutside('x.ts', s).length)).toEqual([1, 1, 1, 1]);
  expect(referencesOutside('x.ts', 'docs/OPERATIONS.md §1, "Clocks"; the issuer of 2 certificates')).toEqual([]);
});

test('no tracked text file refers to documents the repository does not hold', () => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  const found: string[] = [];
  for (const file of files) {
    if (file === 'package-lock.json' || file.startsWith('test/vectors/') || file.startsWith('test/fixtures/')) continue;
    const full = path.join(ROOT, file);
    if (!fs.existsSync(full) || fs.statSync(full).size > 2_000_000) continue;
    const bytes = fs.readFileSync(full);
    if (bytes.includes(0)) continue; // binary
    found.push(...referencesOutside(file, bytes.toString('utf8')));
  }
  expect(found).toEqual([]);
});
