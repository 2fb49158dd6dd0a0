// scripts/build-inputs.ts: `make start` rebuilds the site only when an input changed (scripts/build.ts
// --if-changed). The fingerprint is stable while nothing changes, and changes with a source edited, a file added,
// the keys the offline verifier embeds, and nothing outside the inputs. The build states the offline verifier's
// size in the one form /verify's card uses.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILD_INPUTS, buildFingerprint } from '../scripts/build-inputs.ts';
import { VERIFIER_KEY_FILES } from '../site/offline-verifier/key-files.ts';
import { verifierSizeText } from '../site/offline-verifier/size.ts';
import { ROOT } from './cli/helpers.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-build-inputs-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const write = (rel: string, text: string, mtime = new Date('2025-11-02T10:00:00Z')) => {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
  fs.utimesSync(path.join(root, rel), mtime, mtime);
};

describe('the build fingerprint', () => {
  it('stays the same while no input changes, and changes with each kind of input', () => {
    expect(BUILD_INPUTS).toEqual(expect.arrayContaining(['site', 'core', 'docs/sealed-disclosure.md']));
    write('site/src/pages/index.astro', 'home');
    write('core/hash.ts', 'export {}');
    write('docs/sealed-disclosure.md', 'sealed');
    write('keys/public.pem', 'key');
    const first = buildFingerprint(root, 'keys');
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(buildFingerprint(root, 'keys')).toBe(first);

    write('README.md', 'not an input');
    write('site/node_modules/x.js', 'not an input either');
    expect(buildFingerprint(root, 'keys')).toBe(first);

    write('site/src/pages/index.astro', 'home', new Date('2025-11-03T10:00:00Z'));
    const edited = buildFingerprint(root, 'keys');
    expect(edited).not.toBe(first);
    write('core/merkle.ts', 'export {}');
    const added = buildFingerprint(root, 'keys');
    expect(added).not.toBe(edited);
    write('keys/public.pem', 'another key');
    expect(buildFingerprint(root, 'keys')).not.toBe(added);
    expect(buildFingerprint(root, 'other-keys')).not.toBe(buildFingerprint(root, 'keys'));
  });
  it('changes with every key file the offline verifier embeds: its receipt keys, the retired ones, the vkeys', () => {
    // The page embeds the COSE receipt keys, the retired receipt keys and the vkeys too (site/offline-verifier/
    // build.ts); with only the log's two keys counted, `timeseal keys rotate-receipt` then `make start` served a
    // page without the key it had just retired.
    const keys = path.join(root, 'keys-all');
    write('keys-all/public.pem', 'key');
    let before = buildFingerprint(root, 'keys-all');
    for (const name of [
      'dilithium_public.key',
      'dilithium_public.pem',
      'receipt-es256.pem',
      'receipt-mldsa65.pem',
      'receipt-keys.retired',
      'ed25519.vkey',
      'mldsa44.vkey',
    ]) {
      write(`keys-all/${name}`, name);
      const after = buildFingerprint(root, 'keys-all');
      expect(after, name).not.toBe(before);
      before = after;
    }
    expect(Object.values(VERIFIER_KEY_FILES).sort()).toEqual(fs.readdirSync(keys).sort());
    // The build reads each key file by the one list's name: none named in build.ts itself.
    const build = fs.readFileSync(path.join(ROOT, 'site/offline-verifier/build.ts'), 'utf8');
    expect(build.match(/['"`][\w.-]+\.(?:pem|key|vkey|retired)['"`]/g) ?? []).toEqual([]);
  });
});

describe("the offline verifier's size", () => {
  it('the build states it as /verify does (about N KB, and its bytes), and its limit in bytes and KiB', () => {
    // Before, the build said "143.4 KB" (KiB) for a file /verify called "about 147 KB".
    const out = path.join(root, 'verifier-out');
    const r = spawnSync(process.execPath, ['site/offline-verifier/build.ts', '--out', out], {
      cwd: ROOT,
      env: { ...process.env, TIMESEAL_KEYS: path.join(root, 'no-keys') },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const size = fs.statSync(path.join(out, 'offline-verifier.html')).size;
    expect(r.stdout).toContain(
      `offline-verifier.html, ${verifierSizeText(size)} (${size.toLocaleString('en-US')} bytes; limit 163,840 bytes, 160 KiB)`,
    );
    expect(verifierSizeText(151_484)).toBe('about 151 KB');
  });
});
