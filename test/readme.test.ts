// The README is where a newcomer starts, not a reference: short, in the order a person needs it (what it is, run
// it, use it, deploy it, test it), and every file it sends them to exists. Tables and rationale live in docs/.
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The repository paths a text sends its reader to: docs/X.md, client/README.md, test/README.md, deploy/… */
export function pathsNamed(text: string): string[] {
  const found = text.match(/\b(?:docs|client|test|deploy)\/[\w./@-]*[\w/]/g) ?? [];
  return [...new Set(found.map((p) => p.replace(/[.]$/, '')))];
}

it('finds the paths a text names (the check can fail)', () => {
  expect(pathsNamed('see docs/DEPLOY.md, then client/README.md. And docs/NOPE.md, deploy/systemd/a@.service')).toEqual([
    'docs/DEPLOY.md',
    'client/README.md',
    'docs/NOPE.md',
    'deploy/systemd/a@.service',
  ]);
});

it('README.md starts a newcomer: short, its sections in order, every file it names there', () => {
  expect(README.length, 'README.md bytes').toBeLessThan(10_000);
  const headings = [...README.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  const order = ['Run it', 'Use it', 'Deploy it', 'Test it'].map((h) => headings.indexOf(h));
  expect(
    order.every((i) => i >= 0),
    `headings: ${headings.join(', ')}`,
  ).toBe(true);
  expect([...order].sort((a, b) => a - b)).toEqual(order);
  const named = pathsNamed(README);
  expect(named).toContain('docs/DEPLOY.md');
  expect(named.filter((p) => !fs.existsSync(path.join(ROOT, p)))).toEqual([]);
});

it('docs/DEPLOY.md, where the README sends an operator, takes one node, PostgreSQL behind nginx and S3 in turn', () => {
  const guide = fs.readFileSync(path.join(ROOT, 'docs/DEPLOY.md'), 'utf8');
  const headings = [...guide.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  const shapes = [/^1\. One node/, /^2\. .*PostgreSQL/, /^3\. .*S3/].map((h) => headings.findIndex((t) => h.test(t)));
  expect(
    shapes.every((i) => i >= 0),
    `headings: ${headings.join(', ')}`,
  ).toBe(true);
  expect([...shapes].sort((a, b) => a - b)).toEqual(shapes);
  // The settings that choose each shape, and the files an operator installs, by name.
  for (const named of ['TIMESEAL_DATABASE_URL', 'TIMESEAL_ARCHIVE=s3://', 'TRUST_PROXY', 'deploy/nginx/timeseal.conf'])
    expect(guide, named).toContain(named);
  expect(pathsNamed(guide).filter((p) => !fs.existsSync(path.join(ROOT, p)))).toEqual([]);
});
