// Build time only (Astro frontmatter and the download endpoint): the project's sealed disclosure document,
// docs/sealed-disclosure.md, and its SHA-256. The site never hard-codes the hash: it is recomputed from the
// document on every build, and every other value of the live proof is read from the archive in the browser.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const SEALED_DOCUMENT_SOURCE = 'docs/sealed-disclosure.md';
export const SEALED_DOCUMENT_URL = '/sealed-disclosure.md';

export function sealedDocument(): { bytes: Uint8Array<ArrayBuffer>; sha256: string; size: number } {
  const bytes = readFileSync(path.resolve(process.cwd(), SEALED_DOCUMENT_SOURCE));
  return { bytes: new Uint8Array(bytes), sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
}
