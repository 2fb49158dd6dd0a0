// `timeseal ots verify-receipt` (pipeline/anchor/receipt-anchor.ts), black box: the verdict on a COSE receipt's
// Bitcoin anchor — valid, invalid or unverifiable — with the 6-confirmation gate. A receipt for a two-leaf day
// (signed with a node:crypto P-256 key, the day's root its payload) and the `.ots` of that root as the day's
// proofs have it (append F, sha256 to the day's commitment), attested in a block of a synthetic regtest chain with
// real proof of work (test/anchor/chain.ts) that a loopback Esplora serves.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiptFromDaySignature, signDayRoot } from '../../core/cose-receipt.ts';
import { leafHash, nodeHash } from '../../core/merkle.ts';
import {
  addAttestation,
  addOp,
  appendOp,
  bitcoinAttestation,
  newDetached,
  pendingAttestation,
  serializeDetached,
} from '../../core/ots.ts';
import { SyntheticChain } from './chain.ts';
import { cliJson, removeTempDirs, tempDir } from './helpers.ts';
import { LoopbackEsplora } from './servers.ts';

const sha256 = (data: Uint8Array) => new Uint8Array(crypto.createHash('sha256').update(data).digest());

describe('timeseal ots verify-receipt: valid, invalid, unverifiable, and 6 confirmations', () => {
  const chain = new SyntheticChain();
  const esplora = new LoopbackEsplora(chain);
  let dir: string;
  let env: Record<string, string>;
  const [e0, e1] = [crypto.randomBytes(32), crypto.randomBytes(32)];
  const root = nodeHash(leafHash(e0), leafHash(e1));
  const ledgerSha256 = crypto.randomBytes(32);
  let height = 0;
  const verdict = (args: string[] = []) =>
    cliJson(
      dir,
      [
        'ots',
        'verify-receipt',
        'anchor.ots',
        '--receipt',
        'r.cose',
        '--entry',
        e0.toString('hex'),
        '--keys',
        'keys',
        ...args,
      ],
      env,
    );
  /** The anchor of the root: append F, sha256 (the day's commitment), then `attest` on the commitment. */
  const writeAnchor = (attest: (commitment: ReturnType<typeof addOp>) => void) => {
    const anchor = newDetached('sha256', root);
    const commitment = addOp(addOp(anchor.timestamp, appendOp(ledgerSha256)), { kind: 'sha256' });
    attest(commitment);
    fs.writeFileSync(path.join(dir, 'anchor.ots'), serializeDetached(anchor));
  };

  beforeAll(async () => {
    dir = tempDir('receipt-anchor');
    const pair = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = pair.privateKey.export({ format: 'jwk' });
    const key = {
      alg: -7 as const,
      publicKey: new Uint8Array(
        Buffer.concat([Buffer.of(4), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]),
      ),
      secret: new Uint8Array(Buffer.from(jwk.d!, 'base64url')),
    };
    fs.mkdirSync(path.join(dir, 'keys'));
    fs.writeFileSync(path.join(dir, 'keys/receipt-es256.pem'), pair.publicKey.export({ format: 'pem', type: 'spki' }));
    // A receipt-keys folder holds both keys; this receipt is the ES256 one.
    const mldsa = crypto.generateKeyPairSync('ml-dsa-65' as never) as unknown as { publicKey: crypto.KeyObject };
    fs.writeFileSync(
      path.join(dir, 'keys/receipt-mldsa65.pem'),
      mldsa.publicKey.export({ format: 'pem', type: 'spki' }),
    );
    const receipt = receiptFromDaySignature(signDayRoot(root, key, 'timeseal.test', '2025-11-02'), {
      treeSize: 2,
      leafIndex: 0,
      path: [leafHash(e1)],
    });
    fs.writeFileSync(path.join(dir, 'r.cose'), receipt);
    await esplora.start();
    env = { BITCOIN_ESPLORA_URL: esplora.url, BITCOIN_NETWORK: 'regtest' };
  });
  afterAll(async () => {
    await esplora.stop();
    removeTempDirs();
  });

  it('unverifiable (exit 2) while the root is only pending at a calendar', async () => {
    writeAnchor((c) => addAttestation(c, pendingAttestation('https://calendar.example')));
    const { r, json } = await verdict();
    expect(r.code, r.stderr).toBe(2);
    expect(json).toMatchObject({ verdict: 'unverifiable', root: Buffer.from(root).toString('hex'), day: '2025-11-02' });
    expect(json.reason).toMatch(/not in Bitcoin yet/);
  });

  it('unverifiable with 1 and 5 confirmations, valid (exit 0) at 6', async () => {
    // The day's commitment SHA-256(root || F) is the block's merkle root.
    height = chain.mine(sha256(Buffer.concat([root, ledgerSha256]))).height;
    writeAnchor((c) => addAttestation(c, bitcoinAttestation(height)));
    const one = await verdict();
    expect(one.r.code).toBe(2);
    expect(one.json.reason).toMatch(new RegExp(`block ${height} attests the root with 1 confirmation; 6 are needed`));
    chain.extend(4);
    const five = await verdict();
    expect([five.r.code, five.json.verdict, five.json.block.confirmations]).toEqual([2, 'unverifiable', 5]);
    chain.extend(1);
    const six = await verdict();
    expect(six.r.code, six.r.stderr).toBe(0);
    expect(six.json).toMatchObject({
      verdict: 'valid',
      block: { height, confirmations: 6, block_hash: chain.blocks[height]!.hash },
    });
  });

  it('invalid (exit 1): the receipt for another entry, an anchor of another digest, a block header that contradicts it', async () => {
    const wrongEntry = await cliJson(
      dir,
      ['ots', 'verify-receipt', 'anchor.ots', '--receipt', 'r.cose', '--entry', e1.toString('hex'), '--keys', 'keys'],
      env,
    );
    expect([wrongEntry.r.code, wrongEntry.json.verdict]).toEqual([1, 'invalid']);
    expect(wrongEntry.json.reason).toMatch(/the receipt does not verify/);

    const attested = fs.readFileSync(path.join(dir, 'anchor.ots'));
    const elsewhere = newDetached('sha256', sha256(root));
    addAttestation(elsewhere.timestamp, bitcoinAttestation(height));
    fs.writeFileSync(path.join(dir, 'anchor.ots'), serializeDetached(elsewhere));
    const otherDigest = await verdict();
    expect([otherDigest.r.code, otherDigest.json.verdict]).toEqual([1, 'invalid']);
    expect(otherDigest.json.reason).toMatch(/not the receipt's root/);

    fs.writeFileSync(path.join(dir, 'anchor.ots'), attested);
    esplora.forged.set(height, chain.blocks[height - 1]!.header);
    try {
      const forged = await verdict();
      expect([forged.r.code, forged.json.verdict]).toEqual([1, 'invalid']);
    } finally {
      esplora.forged.clear();
    }
  });

  it('unverifiable (exit 75) when no block header can be had', async () => {
    esplora.down = true;
    try {
      const { r, json } = await verdict();
      expect([r.code, json.verdict]).toEqual([75, 'unverifiable']);
      expect(json.reason).toMatch(/no block header could be had/);
    } finally {
      esplora.down = false;
    }
  });
});
