// Offline verification of a proof file, layer by layer, with the pinned keys (or keys given) and no network:
//   document     the document's SHA-256 is the proof's hash;
//   keys         keys are pinned for the proof's server (or given);
//   receipt      each RFC 3161 receipt: sound, chained to the pinned TSA root, for this hash — and its promise
//                (the ledger of its day holds the hash no later than its time) as far as the bundle shows it;
//   ledger       the bundle: key fingerprints, the checkpoint's ECDSA P-256 and ML-DSA-65 signatures, the leaf in
//                the day's range, the inclusion path to the signed root (core/proof.ts verifyProofBundle);
//   log-signatures  every line of the log's keys on the checkpoint (Ed25519 and ML-DSA-44 too);
//   witnesses    the cosignatures against the pinned witness policy and its quorum;
//   log-view     the checkpoint against the checkpoints this client saw before (one size, two roots: a fork),
//                and the consistency proof the file carries to a later checkpoint;
//   rfc3161      the day's RFC 3161 tokens of the ledger file, when the bundle carries them;
//   cose-receipt the leaf's COSE receipts (RFC 9942) the bundle carries, with the pinned receipt keys (cose.ts);
//   bitcoin      the per-hash .ots follows the path through the checkpoint root to the day's commitment, and
//                each Bitcoin attestation's block header (kept in the file) has its proof of work and merkle root.
// A proof file of a promise broken by omission (version 2, `omittedFrom`) keeps the day's signed ledger beside it:
// its `ledger` layer reads that file in pieces (options.readBeside) and checks its length and SHA-256, both
// signatures with the pinned keys, its date and origin, and that the hash is not in it (omission.ts); the receipt
// of that day then fails as a broken promise.
// Complete (exit 0) when every layer checked; pending (2) when all that checked is valid and something is still to
// come (publication, witnesses, Bitcoin); broken (1) when all that checked is valid and the kept signed ledger of
// the receipt's day does not hold the hash; invalid (1) when anything else failed.
import { blockHash, verifyBitcoinAttestation } from '../../core/bitcoin.ts';
import { fromBase64, fromHex, toHex } from '../../core/encoding.ts';
import { EXIT_CODES, type Outcome } from '../../core/exit-codes.ts';
import { verifyConsistency } from '../../core/merkle.ts';
import type { ProofBundle, VerifiedProof } from '../../core/proof.ts';
import { checkReceipt } from '../../core/receipt.ts';
import { checkToken } from '../../core/rfc3161.ts';
import { VerifyCache } from './cache.ts';
import { coseReceiptLayers } from './cose.ts';
import { readBundleOts } from './checks.ts';
import { throwIfAborted } from './errors.ts';
import { bundleOf } from './bundle.ts';
import { loadKeys, type LoadedKeys } from './keys.ts';
import { checkKeptLedger } from './omission.ts';
import type { MessageDigests } from '../../core/day.ts';
import { rememberCheckpoint, seenRoot } from './trust.ts';
import type {
  BitcoinNetwork,
  KeyFiles,
  LayerReport,
  ProofFile,
  ReadBeside,
  TrustData,
  VerifyReport,
  VerifyState,
} from './types.ts';

const STATE_OUTCOMES = {
  complete: 'ok',
  pending: 'pending',
  invalid: 'failed',
  broken: 'failed',
} as const satisfies Record<VerifyState, Outcome>;

/** @internal The outcome of a verification's state (core/exit-codes.ts), whose exit code a report carries:
 * complete ok, pending pending (valid so far), invalid and broken failed. */
export function outcomeOfState(state: VerifyState): 'ok' | 'pending' | 'failed' {
  return STATE_OUTCOMES[state];
}

export interface VerifyOptions {
  /** The trust store: keys pinned per server, checkpoints seen per log. */
  trust?: TrustData;
  /** Keys to use instead of the pinned ones. */
  keys?: KeyFiles;
  /** The document's SHA-256 (hex), when a document is at hand; without it the proof's hash is checked alone. */
  hash?: string;
  /** The Bitcoin network whose proof-of-work limit applies (default mainnet). */
  network?: BitcoinNetwork;
  /** Record the checkpoints verified in `trust` (default true when a trust store is given). */
  remember?: boolean;
  /** Shared across the proofs of one run, so that a checkpoint's signatures are verified once (VerifyCache). */
  cache?: VerifyCache;
  signal?: AbortSignal;
  now?: Date;
  /** Reads a file beside the proof file by its relative path, in pieces (the kept ledger of a version 2 proof
   * file); without it such a proof's ledger is not checked, and the report says which reader checks it. */
  readBeside?: ReadBeside;
  /** @internal The SHA-256 and ML-DSA-65 μ of a kept ledger (the command line's are node:crypto's). */
  digests?: MessageDigests;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Verifies one proof file offline. Never throws for a proof that does not check: the report says why. */
export async function verify(proof: ProofFile, options: VerifyOptions = {}): Promise<VerifyReport> {
  throwIfAborted(options.signal);
  const layers: LayerReport[] = [];
  const add = (layer: LayerReport) => layers.push(layer);
  const hash = proof.hash;
  const network = options.network ?? 'mainnet';
  const cache = options.cache ?? new VerifyCache();

  if (options.hash === undefined)
    add({
      layer: 'document',
      status: 'skipped',
      checked: `no document given: the proof is checked for the hash ${hash} alone`,
    });
  else if (options.hash.toLowerCase() !== hash)
    add({
      layer: 'document',
      status: 'failed',
      checked: `the document's SHA-256 is ${options.hash.toLowerCase()}, but the proof is for ${hash}: the document changed since it was stamped, or this is another document's proof`,
    });
  else add({ layer: 'document', status: 'ok', checked: `the document's SHA-256 is the proof's hash ${hash}` });

  let keys: LoadedKeys | null = null;
  const files = options.keys ?? options.trust?.servers[proof.server]?.keys;
  if (files === undefined) {
    add({
      layer: 'keys',
      status: 'failed',
      checked: `no keys are pinned for ${proof.server} in the trust store: run stamp or upgrade online once (it pins them), or give the keys folder (--keys DIR)`,
    });
  } else {
    try {
      keys = loadKeys(files);
      add({
        layer: 'keys',
        status: 'ok',
        checked:
          options.keys !== undefined
            ? 'the keys given'
            : `the keys pinned for ${proof.server} on ${options.trust!.servers[proof.server]!.pinnedAt}`,
      });
    } catch (err) {
      add({ layer: 'keys', status: 'failed', checked: message(err) });
    }
  }

  let bundle: ProofBundle | null = null;
  try {
    bundle = bundleOf(proof);
    if (bundle !== null && bundle.hash !== hash)
      throw new Error(`the bundle is for ${bundle.hash}, not the proof's hash ${hash}`);
  } catch (err) {
    add({ layer: 'ledger', status: 'failed', checked: message(err) });
    bundle = null;
  }

  // A promise broken by omission: the kept signed ledger of the day, checked before the receipts (whose promise it
  // judges).
  let omitted: { date: string; ledger: string; leaves: number } | null = null;
  if (proof.omittedFrom !== undefined) {
    const o = proof.omittedFrom;
    if (keys === null)
      add({ layer: 'ledger', status: 'failed', checked: `the kept ledger ${o.ledger} is not checked: no keys` });
    else {
      const pinnedOrigin = options.keys === undefined ? (options.trust?.servers[proof.server]?.origin ?? null) : null;
      const kept = await checkKeptLedger(o, hash, keys, pinnedOrigin, options.readBeside, options.digests);
      if ('problem' in kept) add({ layer: 'ledger', status: 'failed', checked: kept.problem });
      else if (kept.facts.present.has(hash))
        add({
          layer: 'ledger',
          status: 'failed',
          checked: `the kept signed ledger ${o.ledger} of ${o.date} holds the hash at leaf ${kept.facts.present.get(hash)}: this proof file's broken promise is not one`,
        });
      else {
        const { head } = kept.facts;
        omitted = { date: o.date, ledger: o.ledger, leaves: head.treeSize - head.firstIndex };
        add({
          layer: 'ledger',
          status: 'ok',
          checked: `the signed ledger of ${o.date} kept in ${o.ledger} (${o.size} bytes, SHA-256 ${o.sha256}): its ECDSA P-256 (${o.ledger}.sig) and ML-DSA-65 (${o.ledger}.dilithium.sig) signatures verify with the pinned keys, its log is ${head.origin}, and none of its ${omitted.leaves} hashes is ${hash}`,
        });
      }
    }
  }
  const brokenLayers = new Set<LayerReport>();

  // Receipts: the one kept at stamping, and those the bundle carries (the same token is checked once).
  const receipts = [...new Set([...(proof.receipt === null ? [] : [proof.receipt]), ...(bundle?.receipts ?? [])])];
  if (receipts.length === 0)
    add({ layer: 'receipt', status: 'skipped', checked: 'the proof holds no RFC 3161 receipt' });
  for (const [i, b64] of receipts.entries()) {
    const label = receipts.length > 1 ? `receipt ${i + 1}: ` : '';
    if (keys === null) {
      add({ layer: 'receipt', status: 'failed', checked: `${label}not checked: no keys` });
      continue;
    }
    if (keys.tsaRoots.length === 0) {
      add({
        layer: 'receipt',
        status: 'failed',
        checked: `${label}not checked: no TSA root (timeseal-tsa-root.pem) is pinned for ${proof.server}`,
      });
      continue;
    }
    try {
      const facts = await checkReceipt(fromBase64(b64, 'receipt'), keys.tsaRoots, fromHex(hash));
      const genTime = facts.genTime.toISOString();
      const token = `RFC 3161 token of ${facts.tsaName} (serial ${facts.serialNumber}), signature and chain to the pinned TSA root checked, for SHA-256 ${hash}`;
      let promise = '';
      let status: LayerReport['status'] = 'ok';
      if (omitted !== null && omitted.date === facts.date) {
        status = 'failed';
        promise = `; broken promise: the signed ledger of ${facts.date} (kept in ${omitted.ledger}) does not hold the hash`;
      } else if (bundle === null) {
        status = 'pending';
        promise = `; its promise (the ledger of ${facts.date} holds the hash) is not shown yet: the day is not in this proof`;
      } else if (bundle.date === facts.date) {
        if (Date.parse(bundle.submittedAt) > facts.genTime.getTime()) {
          status = 'failed';
          promise = `; the ledger of ${facts.date} records the hash at ${bundle.submittedAt}, after the receipt's time: a broken promise`;
        } else promise = `; promise kept: the ledger of ${facts.date} holds it (recorded ${bundle.submittedAt})`;
      } else if (bundle.date < facts.date) {
        promise = `; the hash was published earlier, in the ledger of ${bundle.date}`;
      } else {
        status = 'failed';
        promise = `; broken promise: the ledger of ${facts.date} should hold the hash, but its first published day is ${bundle.date}`;
      }
      const layer: LayerReport = {
        layer: 'receipt',
        status,
        checked: `${label}${token}${promise}`,
        bound: { time: genTime, by: `the RFC 3161 receipt of ${facts.tsaName}` },
      };
      add(layer);
      if (omitted !== null && omitted.date === facts.date) brokenLayers.add(layer);
    } catch (err) {
      add({ layer: 'receipt', status: 'failed', checked: `${label}${message(err)}` });
    }
  }

  if (
    omitted !== null &&
    brokenLayers.size === 0 &&
    !layers.some((l) => l.layer === 'receipt' && l.status === 'failed')
  )
    add({
      layer: 'receipt',
      status: 'failed',
      checked: `the kept ledger ${omitted.ledger} is of ${omitted.date}, but no receipt in this proof file promised that day`,
    });
  if (bundle === null) {
    if (!layers.some((l) => l.layer === 'ledger')) {
      const when =
        proof.ledgerDate === null ? '' : ` (the ledger of ${proof.ledgerDate} is published at 00:01 UTC the next day)`;
      add({
        layer: 'ledger',
        status: 'pending',
        checked: `not published in this proof yet: run upgrade once the day is published${when}`,
      });
    }
  } else if (keys !== null) {
    await checkBundle(bundle, keys, proof, options, network, cache, add);
  }

  const failed = layers.filter((l) => l.status === 'failed');
  const pending = layers.some((l) => l.status === 'pending');
  const bounds = layers.flatMap((l) => (l.bound === undefined || l.status === 'failed' ? [] : [l.bound]));
  const earliest = bounds.reduce<{ time: string; by: string } | null>(
    (best, b) => (best === null || Date.parse(b.time) < Date.parse(best.time) ? b : best),
    null,
  );
  const state =
    failed.length > 0
      ? failed.every((l) => brokenLayers.has(l))
        ? 'broken'
        : 'invalid'
      : pending
        ? 'pending'
        : 'complete';
  return {
    state,
    exitCode: EXIT_CODES[outcomeOfState(state)],
    hash,
    layers,
    existedNoLaterThan: earliest,
    problems: failed.map((l) => `${l.layer}: ${l.checked}`),
  };
}

async function checkBundle(
  bundle: ProofBundle,
  keys: LoadedKeys,
  proof: ProofFile,
  options: VerifyOptions,
  network: BitcoinNetwork,
  cache: VerifyCache,
  add: (l: LayerReport) => void,
): Promise<void> {
  let verified: VerifiedProof;
  try {
    verified = cache.bundle(bundle, keys);
  } catch (err) {
    add({ layer: 'ledger', status: 'failed', checked: `the proof bundle does not verify: ${message(err)}` });
    return;
  }
  add({
    layer: 'ledger',
    status: 'ok',
    checked: `leaf ${bundle.leafIndex} of the log ${verified.origin}: the inclusion path (${bundle.inclusionPath.length} hashes) leads to the root of the tree of size ${verified.treeSize} signed by the pinned ECDSA P-256 and ML-DSA-65 keys; the bundle places it in the ledger of ${bundle.date}, recorded ${bundle.submittedAt} (the date and time are the bundle's statement: the receipt and the Bitcoin anchor bound them)`,
  });

  try {
    const lines = cache.lines(bundle.checkpoint, verified.origin, keys);
    add({
      layer: 'log-signatures',
      status: 'ok',
      checked: `the checkpoint's lines of the log verify: ${lines.signers.join(', ')}`,
    });
    const w = lines.witnesses;
    if (w === null)
      add({
        layer: 'witnesses',
        status: 'skipped',
        checked: 'no witness policy is pinned for this server (it published none)',
      });
    else if (w.problems.length > 0)
      add({
        layer: 'witnesses',
        status: 'failed',
        checked: `a witness's line does not check: ${w.problems.join('; ')}`,
      });
    else {
      const times = w.cosigned.flatMap((c) =>
        c.time === null ? [] : [{ time: c.time, by: `the cosignature of witness ${c.name}` }],
      );
      const firstTime = times.sort((a, b) => Date.parse(a.time) - Date.parse(b.time))[0];
      const names = w.cosigned.length === 0 ? 'none' : w.cosigned.map((c) => c.name).join(', ');
      if (!w.required)
        add({
          layer: 'witnesses',
          status: 'ok',
          checked: `the witness policy requires no cosignature (cosigned by: ${names})`,
        });
      else if (!w.met)
        add({
          layer: 'witnesses',
          status: 'pending',
          checked: `the witness policy's quorum is not met yet (cosigned by: ${names}; ${w.unknown} lines of other keys ignored): run upgrade later for a checkpoint with more cosignatures`,
        });
      else
        add({
          layer: 'witnesses',
          status: 'ok',
          checked: `the witness policy's quorum is met (cosigned by: ${names})`,
          ...(firstTime === undefined ? {} : { bound: firstTime }),
        });
    }
  } catch (err) {
    add({ layer: 'log-signatures', status: 'failed', checked: message(err) });
  }

  checkLogView(verified, keys, proof, options, cache, add);

  for (const [i, b64] of bundle.rfc3161.entries()) {
    try {
      const facts = await cache.token(b64, bundle.ledger.sha256);
      add({
        layer: 'rfc3161',
        status: 'ok',
        checked: `token ${i + 1} of ${facts.tsaName} (${facts.genTime.toISOString()}) over the ledger file's SHA-256 ${bundle.ledger.sha256}: its signature checks (its certificate authority is not pinned here, and the bundle alone does not show that this ledger file holds the hash: the ledger file does)`,
      });
    } catch (err) {
      add({ layer: 'rfc3161', status: 'failed', checked: `token ${i + 1} over the ledger file: ${message(err)}` });
    }
  }

  // The leaf's COSE receipts (RFC 9942), with the pinned receipt keys: for the bundle's hash, leaf and root.
  for (const l of coseReceiptLayers(
    bundle.coseReceipts,
    bundle.hash,
    keys.receiptKeys,
    {
      leafIndex: bundle.leafIndex,
      treeSize: bundle.treeSize,
      root: verified.root,
    },
    cache.coseSignatures,
  ))
    add(l);

  if (bundle.ots === null) {
    add({
      layer: 'bitcoin',
      status: 'pending',
      checked: 'not anchored yet: the bundle has no .ots; run upgrade later (anchoring takes about a day)',
    });
    return;
  }
  let ots;
  try {
    ots = readBundleOts(bundle, verified.root);
  } catch (err) {
    add({ layer: 'bitcoin', status: 'failed', checked: `the .ots: ${message(err)}` });
    return;
  }
  if (ots.bitcoin.length === 0) {
    add({
      layer: 'bitcoin',
      status: 'pending',
      checked: `the .ots follows the path through the checkpoint root to the day's commitment; no Bitcoin attestation yet (pending at ${ots.pending.join(', ') || 'no calendar'}): run upgrade later`,
    });
    return;
  }
  for (const att of ots.bitcoin) {
    const record = proof.headers.find((h) => h.height === att.height);
    if (record === undefined) {
      add({
        layer: 'bitcoin',
        status: 'pending',
        checked: `a Bitcoin attestation at block ${att.height}: its header is not in the proof file yet (run upgrade, online, to fetch it)`,
      });
      continue;
    }
    try {
      const header = fromHex(record.header, 'header');
      if (blockHash(header) !== record.hash)
        throw new Error(`the header kept for block ${att.height} hashes to ${blockHash(header)}, not ${record.hash}`);
      const facts = verifyBitcoinAttestation(att.message, att.height, header, record.hash, network);
      const time = new Date(facts.time * 1000).toISOString();
      add({
        layer: 'bitcoin',
        status: 'ok',
        checked: `the .ots leads from the hash through the checkpoint root and the ledger file's SHA-256 to the merkle root of block ${facts.height} (${facts.blockHash}); its header's proof of work meets its target within the ${network} limit`,
        bound: { time, by: `Bitcoin block ${facts.height} (its time, as its miner set it, within about two hours)` },
      });
    } catch (err) {
      add({ layer: 'bitcoin', status: 'failed', checked: `block ${att.height}: ${message(err)}` });
    }
  }
}

function checkLogView(
  verified: VerifiedProof,
  keys: LoadedKeys,
  proof: ProofFile,
  options: VerifyOptions,
  cache: VerifyCache,
  add: (l: LayerReport) => void,
): void {
  const trust = options.trust;
  const origin = verified.origin;
  const pinnedOrigin = trust?.servers[proof.server]?.origin ?? null;
  if (options.keys === undefined && pinnedOrigin !== null && pinnedOrigin !== origin) {
    add({
      layer: 'log-view',
      status: 'failed',
      checked: `the checkpoint names the log ${origin}, but ${proof.server} is pinned as the log ${pinnedOrigin}`,
    });
    return;
  }
  const said: string[] = [];
  const remember = trust !== undefined && (options.remember ?? true);
  const seen = trust === undefined ? undefined : seenRoot(trust, origin, verified.treeSize);
  if (seen !== undefined && seen !== verified.root) {
    add({
      layer: 'log-view',
      status: 'failed',
      checked: `fork: the trust store saw the log ${origin} with another tree of size ${verified.treeSize} (root ${seen}); this proof's checkpoint has root ${verified.root}: the log showed two different trees`,
    });
    return;
  }
  if (seen !== undefined) said.push(`the tree of size ${verified.treeSize} is the one this trust store saw`);
  if (proof.consistency !== null) {
    try {
      const later = cache.checkpoint(proof.consistency.checkpoint, origin, keys);
      verifyConsistency(
        verified.treeSize,
        later.size,
        proof.consistency.proof.map((h) => fromHex(h)),
        fromHex(verified.root),
        later.root,
      );
      const laterRoot = toHex(later.root);
      const laterSeen = trust === undefined ? undefined : seenRoot(trust, origin, later.size);
      if (laterSeen !== undefined && laterSeen !== laterRoot) {
        add({
          layer: 'log-view',
          status: 'failed',
          checked: `fork: the proof's later checkpoint (tree size ${later.size}, root ${laterRoot}) differs from the one this trust store saw (root ${laterSeen})`,
        });
        return;
      }
      said.push(
        `it is consistent with the signed tree of size ${later.size}${laterSeen !== undefined ? ', which this trust store saw' : ''} (RFC 9162 consistency proof, ${proof.consistency.proof.length} hashes)`,
      );
      if (remember) rememberCheckpoint(trust!, origin, later.size, laterRoot, undefined, options.now);
    } catch (err) {
      add({
        layer: 'log-view',
        status: 'failed',
        checked: `the consistency proof to a later checkpoint does not check: ${message(err)}`,
      });
      return;
    }
  }
  if (remember) rememberCheckpoint(trust!, origin, verified.treeSize, verified.root, undefined, options.now);
  if (said.length === 0)
    add({
      layer: 'log-view',
      status: 'skipped',
      checked: `this trust store has not seen the log ${origin}'s tree of size ${verified.treeSize} and the proof carries no consistency proof: a fork could not be told apart here (now recorded)`,
    });
  else add({ layer: 'log-view', status: 'ok', checked: `${said.join('; ')}: no fork seen` });
}

/** The hash a receipt's token is for, without checking its chain (for `info`). */
export async function receiptFacts(b64: string): Promise<{ genTime: string; tsa: string; serialNumber: string }> {
  const facts = await checkToken(fromBase64(b64, 'receipt'), null, []);
  return { genTime: facts.genTime.toISOString(), tsa: facts.tsaName, serialNumber: facts.serialNumber };
}
