// COSE receipts of a day signed by a receipt key since retired (`timeseal keys rotate-receipt`, docs/FORMAT.md
// §11), in every reader that checks COSE receipts: an archive made by the real CLI, a day built, the receipt keys
// rotated, a second day built. The offline verifier under Node (inputs.ts, checks.ts): with the current keys
// alone the first day's receipt is not verified (its kid is none of them); with keys/receipt-keys.retired dropped
// beside them it is, and so is that day's receipt signature over its ledger's root; the retired keys are listed
// with their days; a damaged list is named; a changed byte still fails. In Chromium, from disk, with the network
// off: the page built with that keys folder verifies both days' receipts with its built-in keys alone.
// The Verify page (Chromium, a real server: /.well-known/scitt-keys), `timeseal receipt check` with the keys
// folder, and `timeseal-client verify` with `--keys` and with the keys it pinned from a server after the
// rotation: both days' receipts valid, a changed one not.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ecdsaPublicKeyFromPem, mldsaPublicKeyFromPem } from '../core/sig.ts';
import { verifyInputs, type Report, type VerifierInputs } from '../site/offline-verifier/src/checks.ts';
import { classifyFile } from '../site/offline-verifier/src/inputs.ts';
import type { ReceiptKeyEntry } from '../core/cose-receipt.ts';
import { projectEnv, startServer, type SpawnedServer } from '../ingest/test/fixture.ts';
import { ensureBuilt, SITE_DIR } from './site/helpers.ts';
import { launchChromium } from './support/chromium.ts';
import { clientFromSource } from './support/client-source.ts';
import {
  BIN,
  buildVerifier,
  corruptCopy,
  giveOfflinePage,
  openOffline,
  run,
  sha256Hex,
  tempDir,
} from './verifier/helpers.ts';

const DAY1 = '2025-11-01';
const DAY2 = '2025-11-02';
const LATER = '2025-11-03T09:00:00.000Z';

let dir: string;
const at = (name: string) => path.join(dir, name);
const read = (file: string) => classifyFile(path.basename(file), new Uint8Array(fs.readFileSync(file)));
/** The letter submitted on `day`. */
const letter = (day: string) => at(`letter-${day}.txt`);

beforeAll(() => {
  dir = tempDir('retired-receipt');
  const others = (label: string) => Array.from({ length: 4 }, (_, i) => sha256Hex(`${label}-${i}`));
  run(dir, BIN, ['keys', 'init'], { TIMESEAL_NOW: `${DAY1}T00:00:00.000Z` });
  for (const [day, built] of [
    [DAY1, `${DAY2}T00:01:00.000Z`],
    [DAY2, '2025-11-03T00:01:00.000Z'],
  ] as const) {
    const doc = letter(day);
    fs.writeFileSync(doc, `A letter written on ${day}.\n`);
    const hashes = [sha256Hex(fs.readFileSync(doc)), ...others(day)];
    run(dir, BIN, ['import', '-'], { TIMESEAL_NOW: `${day}T10:00:00.000Z` }, `${hashes.join('\n')}\n`);
    run(dir, BIN, ['ledger', 'build'], { TIMESEAL_NOW: built });
    // The first day's keys retire before the second day is submitted.
    if (day === DAY1) run(dir, BIN, ['keys', 'rotate-receipt'], { TIMESEAL_NOW: `${DAY2}T08:00:00.000Z` });
  }
  for (const day of [DAY1, DAY2])
    run(dir, BIN, ['proof', sha256Hex(fs.readFileSync(letter(day))), '--receipt', `${letter(day)}.receipt.cose`], {
      TIMESEAL_NOW: LATER,
    });
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The inputs the page checks: the log's keys and the current receipt keys as dropped, and the retired receipt keys
 * when given. */
function given(files: string[], doc: string | null, retired: boolean): VerifierInputs {
  const pem = (name: string) => fs.readFileSync(at(`keys/${name}`), 'utf8');
  const list = read(at('keys/receipt-keys.retired'));
  expect(list.kind).toBe('retired-receipt-keys');
  return {
    ...(doc === null ? {} : { document: { hash: sha256Hex(fs.readFileSync(doc)), source: 'the document' } }),
    files: files.map(read),
    keys: {
      ecdsa: { key: ecdsaPublicKeyFromPem(pem('public.pem')), source: 'public.pem' },
      mldsa: { key: new Uint8Array(fs.readFileSync(at('keys/dilithium_public.key'))), source: 'dilithium_public.key' },
      receiptEs256: { key: ecdsaPublicKeyFromPem(pem('receipt-es256.pem')), source: 'receipt-es256.pem' },
      receiptMldsa65: { key: mldsaPublicKeyFromPem(pem('receipt-mldsa65.pem')), source: 'receipt-mldsa65.pem' },
      ...(retired ? { retiredReceipt: { keys: list.value as ReceiptKeyEntry[], source: list.name } } : {}),
    },
  };
}
const rows = (r: Report) => r.sections.flatMap((s) => s.checks.map((c) => `${s.title} | ${c.label} | ${c.verdict}`));

describe('under Node: the checks the page runs', () => {
  test("the first day's receipt: refused with the current keys alone, verified with receipt-keys.retired", async () => {
    const receipt = `${letter(DAY1)}.receipt.cose`;
    const without = await verifyInputs(given([receipt], letter(DAY1), false));
    expect(without.summary.state).toBe('fail');
    expect(without.summary.text).toMatch(/kid: [0-9a-f]{64} is none of the published ES256 receipt keys/);

    const withRetired = await verifyInputs(given([receipt], letter(DAY1), true));
    expect(withRetired.summary.state, withRetired.summary.text).toBe('ok');
    expect(rows(withRetired).join('\n')).toMatch(/COSE receipt \(ES256\) \| Verified/);
    const listed = rows(withRetired).filter((r) => r.startsWith('Public keys | Retired'));
    expect(listed).toEqual([
      expect.stringMatching(
        new RegExp(`^Public keys \\| Retired ES256 receipt key \\| kid [0-9a-f]{64}, signed ${DAY1} to ${DAY1}$`),
      ),
      expect.stringMatching(
        new RegExp(`^Public keys \\| Retired ML-DSA-65 receipt key \\| kid [0-9a-f]{64}, signed ${DAY1} to ${DAY1}$`),
      ),
    ]);
    // The second day's receipt is signed by the current key, with or without the retired ones.
    for (const retired of [false, true])
      expect((await verifyInputs(given([`${letter(DAY2)}.receipt.cose`], letter(DAY2), retired))).summary.state).toBe(
        'ok',
      );

    const changed = corruptCopy(receipt, tempDir('retired-changed'), fs.statSync(receipt).size - 5);
    const bad = await verifyInputs(given([changed], letter(DAY1), true));
    expect(bad.summary.text).toMatch(/^Not verified: receipt \(ES256, kid [0-9a-f]{16}…\) over root/);
  });

  test("the first day's receipt signatures over its ledger's root, with the retired keys", async () => {
    const day = ['.json', '.json.sig', '.json.dilithium.sig', '.json.signatures.json', '.checkpoint'].map((s) =>
      at(`ledgers/${DAY1}${s}`),
    );
    const signatures = ['es256', 'mldsa65'].map((k) => at(`ledgers/${DAY1}.receipt-${k}.cose`));
    const without = await verifyInputs(given([...day, ...signatures], null, false));
    expect(rows(without).filter((r) => r.includes('COSE receipt signature of the day'))).toEqual([
      expect.stringMatching(/is none of the ES256 receipt keys$/),
      expect.stringMatching(/is none of the ML-DSA-65 receipt keys$/),
    ]);
    const withRetired = await verifyInputs(given([...day, ...signatures], null, true));
    const sig = rows(withRetired).filter((r) => r.includes('COSE receipt signature of the day'));
    expect(sig).toHaveLength(2);
    expect(
      sig.every((r) => r.endsWith('| Verified')),
      sig.join('\n'),
    ).toBe(true);
  });

  test('a damaged receipt-keys.retired is named as a key file that could not be read', async () => {
    const damaged = path.join(tempDir('retired-damaged'), 'receipt-keys.retired');
    fs.writeFileSync(damaged, 'retired ES256 2025-11-02 2025-11-01 AAAA\n');
    const input = read(damaged);
    expect(input).toMatchObject({ kind: 'retired-receipt-keys', problem: expect.stringContaining('line 1') });
    const r = await verifyInputs({ files: [input], keys: {} });
    expect(r.summary.text).toMatch(/^Not verified: receipt-keys\.retired line 1: expected "retired/);
  });
});

describe('in Chromium, from disk, with the network off', () => {
  test("the page built with the keys folder verifies both days' receipts with its built-in keys", async () => {
    const out = tempDir('retired-page');
    buildVerifier(out, at('keys'));
    const { browser, page } = await openOffline(out);
    try {
      for (const day of [DAY1, DAY2]) {
        const summary = await giveOfflinePage(page, [`${letter(day)}.receipt.cose`], letter(day));
        expect(summary, day).toMatch(/^Verified/);
      }
      expect(await page.textContent('#keys-status')).toContain(
        'Retired receipt keys (2): from the keys built into this file',
      );
    } finally {
      await browser.close();
    }
  }, 120_000);
});

describe('the other readers: the Verify page, timeseal receipt check and timeseal-client verify', () => {
  let server: SpawnedServer | undefined;
  beforeAll(async () => {
    ensureBuilt();
    server = await startServer(dir, { ...projectEnv(dir), TIMESEAL_SITE: SITE_DIR, TIMESEAL_NOW: LATER });
  }, 120_000);
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
  const receipts = () => [DAY1, DAY2].map((day) => `${letter(day)}.receipt.cose`);
  const changed = () => {
    const receipt = `${letter(DAY1)}.receipt.cose`;
    const sub = tempDir('retired-changed-client');
    fs.copyFileSync(letter(DAY1), path.join(sub, path.basename(letter(DAY1))));
    return corruptCopy(receipt, sub, fs.statSync(receipt).size - 5);
  };
  const clientState = (cwd: string, args: string[]) => {
    const r = clientFromSource(cwd, [...args, '--json']);
    return (JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { state: string }).state;
  };

  test("the Verify page's “Check a receipt” (the key set it serves lists the retired keys): both days valid, a changed receipt not", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ baseURL: server!.url });
      const check = async (receipt: string, doc: string) => {
        await page.goto('/verify');
        await page.locator('#receipt-file').scrollIntoViewIfNeeded();
        await page.waitForFunction(
          () => !document.querySelector('#receipt-file')?.closest('astro-island')?.hasAttribute('ssr'),
        );
        await page.setInputFiles('#receipt-file', receipt);
        await page.locator('[data-testid=receipt-name]').waitFor();
        await page.setInputFiles('#receipt-target', doc);
        await page.locator('[data-testid=receipt-target-hash]').waitFor();
        await page.getByRole('button', { name: 'Check receipt' }).click();
        const result = page.locator('[data-testid=receipt-result]');
        await result.waitFor({ timeout: 30_000 });
        return result.getAttribute('data-state');
      };
      for (const [i, day] of [DAY1, DAY2].entries())
        expect(await check(receipts()[i]!, letter(day)), day).toBe('valid');
      expect(await check(changed(), letter(DAY1))).not.toBe('valid');
    } finally {
      await browser.close();
    }
  }, 120_000);

  test('receipt check with the keys folder: both days valid, a changed receipt invalid', () => {
    const state = (receipt: string, doc: string) =>
      (
        JSON.parse(run(dir, BIN, ['receipt', 'check', receipt, '--file', doc, '--json'], {}).trim()) as {
          state: string;
        }
      ).state;
    for (const [i, day] of [DAY1, DAY2].entries()) expect(state(receipts()[i]!, letter(day)), day).toBe('valid');
    expect(() => state(changed(), letter(DAY1))).toThrow(/"state": "invalid"/);
  });

  test('timeseal-client verify with --keys: both days valid, a changed receipt invalid', () => {
    const home = tempDir('retired-client-keys');
    for (const receipt of receipts())
      expect(clientState(home, ['verify', receipt, '--keys', at('keys')]), receipt).toBe('complete');
    expect(clientState(home, ['verify', changed(), '--keys', at('keys')])).toBe('invalid');
  });

  test('timeseal-client pinning the keys after the rotation (stamp): the retired ones are pinned too, both days valid', async () => {
    const home = tempDir('retired-client-pin');
    fs.writeFileSync(path.join(home, 'note.txt'), 'written after the rotation\n');
    const r = clientFromSource(home, ['stamp', 'note.txt', '--server', server!.url]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const trust = JSON.parse(fs.readFileSync(path.join(home, 'trust.json'), 'utf8')) as {
      servers: Record<string, { keys: { receiptKeysRetired?: string } }>;
    };
    expect(Object.values(trust.servers)[0]!.keys.receiptKeysRetired).toBe(
      fs.readFileSync(at('keys/receipt-keys.retired'), 'utf8'),
    );
    for (const receipt of receipts()) expect(clientState(home, ['verify', receipt]), receipt).toBe('complete');
  }, 120_000);
});
