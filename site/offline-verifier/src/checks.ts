// Every check the offline verifier runs, as a pure function from what the person gave (document hash, files,
// keys, fetched block headers) to a report of plain verdicts. The checking itself is core/'s: the same parsers
// and verifiers the site, the CLI and the pipeline use. This module only decides which core function applies to
// which inputs, and turns each outcome into "Verified" or "Not verified: <reason>". It has no DOM and no I/O, so
// it runs unchanged under Node in the tests.
import { ledgerPath, ecdsaSignaturePath, mldsaSignaturePath, signaturesMetaPath, dayCheckpointPath, tsrPath, parseDays } from '../../../core/archive.ts';
import { checkToken } from '../../../core/rfc3161.ts';
import { checkProofOfWork, parseBlockHeader, blockHash, reversedHex, verifyBitcoinAttestation, type BitcoinNetwork } from '../../../core/bitcoin.ts';
import { parseCheckpoint, verifyCheckpoint } from '../../../core/checkpoint.ts';
import { nobleMu, verifyDayFiles, type PublicKeySet } from '../../../core/day.ts';
import { concatBytes, equalBytes, fromBase64, fromHex, fromUtf8, toHex, utf8 } from '../../../core/encoding.ts';
import { MismatchError } from '../../../core/errors.ts';
import { sha256 } from '../../../core/hash.ts';
import { parseLedger, type Ledger } from '../../../core/ledger.ts';
import { leafHash, verifyInclusion } from '../../../core/merkle.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier, parseNote, verifyNoteSignatures } from '../../../core/note.ts';
import { ed25519CosignedMessage, mldsa44CosignatureVerifier, NOTE_TYPE_ED25519, NOTE_TYPE_MLDSA44_COSIGNATURE, readTimestamp, typedKeyId } from '../../../core/cosignature.ts';
import { describeQuorum, judgeCheckpoint, readWitnessPolicy, type CosignatureVerdict, type PolicyWitness, type WitnessPolicy } from '../../../core/witness-policy.ts';
import { formatDetached, parseDetached, walkAttestations, type DetachedTimestampFile, type Timestamp } from '../../../core/ots.ts';
import { parseProofBundle, verifyProofBundle, type ProofBundle } from '../../../core/proof.ts';
import { ecdsaPublicKeyToSpkiDer, ecdsaVerify, fingerprint, mldsaVerifyMu } from '../../../core/sig.ts';
import { parseTlogProof, verifyTlogProof, type TlogProof } from '../../../core/tlog-proof.ts';
import { checkReceipt, digestLength, judgePromise, type ReceiptFacts } from '../../../core/receipt.ts';
import type { ClassifiedInput } from './inputs.ts';

export type CheckState = 'ok' | 'fail' | 'pending' | 'info';

export interface Check {
  label: string;
  state: CheckState;
  /** "Verified", "Not verified: <reason>", or for info rows the information itself. */
  verdict: string;
  details?: string[];
  /** A Bitcoin attestation still waiting for its block header: the page offers the Esplora fetch for it. */
  needsHeader?: { height: number };
  /** A receipt whose imprint is another digest than SHA-256 ('SHA-384', 'SHA-512'): the page hashes the document
   *  with it, when it has the file. */
  needsDigest?: string;
}

export interface Section {
  title: string;
  checks: Check[];
  /** The proof as `ots info` prints it. */
  tree?: string;
}

export interface Report {
  summary: { state: 'ok' | 'fail' | 'pending' | 'empty'; text: string };
  sections: Section[];
}

export interface KeyInput {
  key: Uint8Array;
  /** "built into this file" or the name of the file it was loaded from. */
  source: string;
}

export interface FetchedHeader {
  height: number;
  header: Uint8Array;
  /** The block hash the explorer named for that height (explorer byte order). */
  blockHash: string;
  source: string;
}

export interface VerifierInputs {
  /** The document's hash (SHA-256; 96 or 128 hex digits when a SHA-384 or SHA-512 hash was pasted), and its
   *  SHA-384 / SHA-512 when a receipt asked for them. */
  document?: { hash: string; source: string; digests?: Record<string, string> };
  files: ClassifiedInput[];
  keys: { ecdsa?: KeyInput; mldsa?: KeyInput; ed25519?: KeyInput; mldsa44?: KeyInput };
  fetchedHeaders?: FetchedHeader[];
  /** Whose proof-of-work limit headers are held to; mainnet unless a test network is chosen. */
  network?: BitcoinNetwork;
  /** The RFC 3161 TSAs' certificate authority (keys/tsa-ca.pem, loaded by the person): DER certificates. */
  authority?: { certs: Uint8Array[]; source: string };
}

const VERIFIED = 'Verified';
const ok = (label: string, details?: string[]): Check => ({ label, state: 'ok', verdict: VERIFIED, ...(details ? { details } : {}) });
const fail = (label: string, reason: string, details?: string[]): Check => ({
  label,
  state: 'fail',
  verdict: `Not verified: ${reason}`,
  ...(details ? { details } : {}),
});
const pending = (label: string, reason: string, details?: string[]): Check => ({
  label,
  state: 'pending',
  verdict: `Not verified: ${reason}`,
  ...(details ? { details } : {}),
});
const info = (label: string, text: string, details?: string[]): Check => ({ label, state: 'info', verdict: text, ...(details ? { details } : {}) });

// What a large ledger costs to read (its SHA-256, its ML-DSA-65 μ, its parse: seconds for a busy day's) is
// worked out once per file and kept while the page holds the file: the page checks everything again on each
// change, and in passes (p256.ts).
const memos = new WeakMap<object, Map<unknown, unknown>>();
function memo<T>(of: object, tag: unknown, make: () => T): T {
  let m = memos.get(of);
  if (!m) memos.set(of, (m = new Map()));
  if (!m.has(tag)) m.set(tag, make());
  return m.get(tag) as T;
}
const sha256Of = (bytes: Uint8Array): Uint8Array => memo(bytes, sha256, () => sha256(bytes));
const muOf = (publicKey: Uint8Array, bytes: Uint8Array): Uint8Array => memo(bytes, publicKey, () => nobleMu(publicKey, bytes));
const ledgerOf = (bytes: Uint8Array): Ledger => memo(bytes, parseLedger, () => parseLedger(bytes));
/** Pure ML-DSA-65 with the empty context, over the message's μ (the same check as core/sig.ts mldsaVerify). */
const mldsaVerify = (m: Uint8Array, s: Uint8Array, k: Uint8Array): boolean => mldsaVerifyMu(muOf(k, m), s, k);

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs `fn`; a throw becomes a failed check with core's message as the reason. */
function attempt(label: string, fn: () => string[] | void): Check {
  try {
    const details = fn();
    return ok(label, details ?? undefined);
  } catch (err) {
    return fail(label, message(err));
  }
}

function short(hex: string): string {
  return hex.length > 20 ? `${hex.slice(0, 12)}…${hex.slice(-8)}` : hex;
}

export function blockTimeIso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

const NO_ECDSA = 'no ECDSA P-256 public key: load public.pem';
const NO_MLDSA = 'no ML-DSA-65 public key: load dilithium_public.key';

// --- Bitcoin attestations and block headers -------------------------------------------------------------

interface BitcoinClaim {
  height: number;
  message: Uint8Array;
}

interface GivenHeader {
  input: ClassifiedInput;
  used: boolean;
}

class HeaderPool {
  private readonly given: GivenHeader[];
  private readonly fetched: FetchedHeader[];
  readonly claims: BitcoinClaim[];

  constructor(files: ClassifiedInput[], fetched: FetchedHeader[], claims: BitcoinClaim[]) {
    this.given = files.filter((f) => f.kind === 'header').map((input) => ({ input, used: false }));
    this.fetched = fetched;
    this.claims = claims;
    // A header whose merkle root matches no attestation is still given to the one attestation that needs a
    // header, so that a damaged header fails there with the reason, instead of standing alone.
    const heights = new Set(claims.map((c) => c.height));
    const unmatched = this.given.filter((g) => !claims.some((c) => this.matches(g, c)));
    const open = [...heights].filter((h) => !this.fetched.some((f) => f.height === h) && !this.given.some((g) => claims.some((c) => c.height === h && this.matches(g, c))));
    if (unmatched.length === 1 && open.length === 1) this.assigned.set(open[0]!, unmatched[0]!);
  }

  private readonly assigned = new Map<number, GivenHeader>();

  private matches(g: GivenHeader, c: BitcoinClaim): boolean {
    const header = g.input.value;
    return header instanceof Uint8Array && header.length === 80 && equalBytes(parseBlockHeader(header).merkleRoot, c.message);
  }

  /** The header to check an attestation with, if the person gave or fetched one. */
  headerFor(claim: BitcoinClaim): { header?: Uint8Array; problem?: string; expectedHash?: string; source: string } | undefined {
    const fetched = this.fetched.find((f) => f.height === claim.height);
    if (fetched) return { header: fetched.header, expectedHash: fetched.blockHash, source: fetched.source };
    const g = this.given.find((x) => this.matches(x, claim)) ?? this.assigned.get(claim.height);
    if (!g) return undefined;
    g.used = true;
    const value = g.input.value;
    return value instanceof Uint8Array ? { header: value, source: g.input.name } : { problem: g.input.problem ?? 'not a block header', source: g.input.name };
  }

  unused(): ClassifiedInput[] {
    return this.given.filter((g) => !g.used).map((g) => g.input);
  }
}

function attestationChecks(d: DetachedTimestampFile, ctx: Context): Check[] {
  const pool = ctx.pool;
  const checks: Check[] = [];
  const all = walkAttestations(d.timestamp);
  const pendingUris = all.flatMap((a) => (a.attestation.kind === 'pending' ? [a.attestation.uri] : []));
  const bitcoin = all.filter((a) => a.attestation.kind === 'bitcoin');
  for (const a of bitcoin) {
    const height = (a.attestation as { height: number }).height;
    const label = `Bitcoin block ${height}`;
    const root = reversedHex(a.message);
    const given = pool.headerFor({ height, message: a.message });
    if (!given) {
      checks.push({
        ...pending(label, `needs the block header at height ${height}: paste or drop it, or fetch it below`, [`Merkle root to compare (as explorers print it): ${root}`]),
        needsHeader: { height },
      });
      continue;
    }
    if (given.header === undefined) {
      checks.push({ ...fail(label, `block header ${given.source}: ${given.problem}`), needsHeader: { height } });
      continue;
    }
    try {
      const v = verifyBitcoinAttestation(a.message, height, given.header, given.expectedHash, ctx.network);
      checks.push(
        ok(label, [
          `Block time ${blockTimeIso(v.time)}`,
          `Block hash ${v.blockHash}`,
          `Merkle root ${v.merkleRoot}`,
          `Header from ${given.source}`,
          ...(ctx.network === 'mainnet' ? [] : [`Checked against the ${ctx.network} proof-of-work limit (a test network, not Bitcoin)`]),
        ]),
      );
    } catch (err) {
      checks.push({ ...fail(label, message(err), [`Merkle root to compare (as explorers print it): ${root}`]), needsHeader: { height } });
    }
  }
  if (pendingUris.length > 0) {
    const list = pendingUris.map((u) => `Pending at ${u}`);
    if (bitcoin.length === 0) {
      checks.push(pending('Bitcoin anchor', 'not in Bitcoin yet, the calendars below have not been asked for an upgrade in this file', list));
    } else {
      checks.push(info('Calendars', `${pendingUris.length} pending calendar${pendingUris.length > 1 ? 's' : ''} (not needed: Bitcoin already confirms it)`, list));
    }
  }
  if (bitcoin.length === 0 && pendingUris.length === 0) checks.push(fail('Bitcoin anchor', 'the proof has no Bitcoin or pending attestation'));
  for (const a of all) {
    if (a.attestation.kind === 'unknown') checks.push(info('Other attestation', `unknown notary ${toHex(a.attestation.tag)} (not checked)`));
  }
  return checks;
}

function findNode(t: Timestamp, test: (node: Timestamp) => boolean): Timestamp | undefined {
  const stack = [t];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (test(node)) return node;
    for (const b of node.ops) stack.push(b.timestamp);
  }
  return undefined;
}

/** docs/FORMAT.md §7–§8: a per-hash .ots reaches the checkpoint root R, then appends F (the ledger file's SHA-256). */
function commitsToDay(d: DetachedTimestampFile, root: Uint8Array, ledgerSha256: Uint8Array): boolean {
  const atRoot = findNode(d.timestamp, (n) => equalBytes(n.message, root));
  return atRoot !== undefined && atRoot.ops.some((b) => b.op.kind === 'append' && equalBytes(b.op.argument, ledgerSha256));
}

// --- Sections -------------------------------------------------------------------------------------------

/** The witness policy the person dropped (keys/witnesses; the last one given), read with core/witness-policy.ts. */
interface PolicyInput {
  policy: WitnessPolicy;
  source: string;
}

interface Context {
  inputs: VerifierInputs;
  policy?: PolicyInput;
  keys: Partial<PublicKeySet>;
  ledgers: Array<{ input: ClassifiedInput; sha256: string; ledger?: Ledger }>;
  bundles: Array<{ input: ClassifiedInput; bundle?: ProofBundle }>;
  pool: HeaderPool;
  network: BitcoinNetwork;
  /** Checks that finish later (Web Crypto is asynchronous): their rows are filled in before the report. */
  later: Promise<unknown>[];
  /** The ledgers whose day checked out (both signatures, metadata, checkpoint), by date. */
  verified: Map<string, Ledger>;
}

/**
 * One row per RFC 3161 answer over a ledger file (docs/FORMAT.md §3a): verified when its chain reaches the
 * authority given; without one, what it says, with its own signature checked and its authority still to check.
 */
function tokenChecks(ctx: Context, tokens: Array<{ name: string; der: Uint8Array }>, ledgerSha256: string): Check[] {
  const authority = ctx.inputs.authority;
  return tokens.map(({ name, der }) => {
    const label = `RFC 3161 time-stamp ${name}`;
    const row = pending(label, 'checking…');
    ctx.later.push(
      checkToken(der, fromHex(ledgerSha256), authority?.certs ?? []).then(
        (f) => {
          const time = f.genTime.toISOString();
          const details = [`Time ${time}`, `TSA ${f.tsaName}`, `Serial ${f.serialNumber}`, `Certificates ${f.chain.join(' → ')}`, `Over the ledger SHA-256 ${ledgerSha256}`];
          if (f.anchored) return Object.assign(row, ok(label, [...details, `Authority from ${authority!.source}`]));
          return Object.assign(row, info(label, `stamped by ${f.tsaName} at ${time}; its certificate authority was not given: add tsa-ca.pem from /keys/ (or the TSA's root certificate) to check it`, details));
        },
        (err) => Object.assign(row, fail(label, message(err))),
      ),
    );
    return row;
  });
}

function documentMatch(ctx: Context, hash: string, what: string): Check {
  const doc = ctx.inputs.document;
  const label = 'Hash matches the document';
  if (!doc) return pending(label, `no document given: choose the original file or paste its hash (${what} is for ${short(hash)})`);
  return doc.hash === hash ? ok(label, [`SHA-256 ${hash}`]) : fail(label, `your document's hash ${doc.hash} is not ${what}'s hash ${hash}`);
}

function checkpointSignatureChecks(note: string, ctx: Context): Check[] {
  const keys = ctx.keys;
  let origin: string;
  try {
    origin = parseCheckpoint(parseNote(note).text).origin;
  } catch (err) {
    return [fail('Checkpoint', message(err))];
  }
  const one = (label: string, key: Uint8Array | undefined, missing: string, make: (o: string, k: Uint8Array) => ReturnType<typeof ecdsaNoteVerifier>): Check =>
    key ? attempt(label, () => void verifyCheckpoint(note, [make(origin, key)])) : pending(label, missing);
  const checks = [
    one('Checkpoint ECDSA P-256 signature', keys.ecdsa, NO_ECDSA, ecdsaNoteVerifier),
    one('Checkpoint ML-DSA-65 signature', keys.mldsa, NO_MLDSA, mldsaNoteVerifier),
  ];
  return [...checks, ...witnessReadyLines(note, origin, ctx)];
}

/**
 * The lines beyond the ECDSA P-256 and ML-DSA-65 ones: the log's Ed25519 line (Web Crypto) and ML-DSA-44
 * cosignature, with their keys (built in, or loaded as .vkey files), and the witnesses' cosignatures (Ed25519
 * 0x04 or ML-DSA-44 0x06) with the witness policy the person loaded (keys/witnesses). Lines of keys not given
 * are named, not checked.
 */
function witnessReadyLines(note: string | Uint8Array, origin: string, ctx: Context): Check[] {
  const checks: Check[] = [];
  let parsed: ReturnType<typeof parseNote>;
  try {
    parsed = parseNote(note);
  } catch {
    return [];
  }
  const text = utf8(parsed.text);
  const lineOf = (name: string, type: number, key: Uint8Array) => parsed.signatures.find((s) => s.name === name && s.keyId === typedKeyId(name, type, key));
  let known = 2;
  const { ed25519: logEd25519, mldsa44 } = ctx.keys;
  if (logEd25519) {
    const line = lineOf(origin, NOTE_TYPE_ED25519, logEd25519);
    if (!line) checks.push(info('Checkpoint Ed25519 signature', 'the checkpoint has no such line (made before the archive had this key)'));
    else {
      known++;
      checks.push(ed25519Row(ctx, 'Checkpoint Ed25519 signature', logEd25519, line.signature, text));
    }
  }
  if (mldsa44) {
    const verifier = mldsa44CosignatureVerifier(origin, mldsa44);
    if (!lineOf(origin, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44)) checks.push(info('Checkpoint ML-DSA-44 cosignature', 'the checkpoint has no such line (made before the archive had this key)'));
    else {
      known++;
      checks.push(attempt('Checkpoint ML-DSA-44 cosignature', () => void verifyNoteSignatures(note, [verifier])));
    }
  }
  if (ctx.policy) known += witnessRows(note, ctx.policy, ctx, checks);
  return [...checks, ...otherLines(note, known)];
}

/**
 * The witnesses' cosignatures, judged with the policy the person dropped as every reader judges them
 * (core/witness-policy.ts judgeCheckpoint); the page differs only in what it shows: one row per witness whose
 * line the checkpoint carries, for people, and the quorum as information (what the page verifies is the proof;
 * the client's `complete` waits for the quorum). Ed25519 cosignatures are checked with Web Crypto, which answers
 * asynchronously: a first judgement finds the lines to check, the second, once every answer is in, is the
 * verdict. Returns how many lines are the policy's witnesses'.
 */
function witnessRows(note: string | Uint8Array, given: PolicyInput, ctx: Context, checks: Check[]): number {
  const { policy, source } = given;
  const answers = new Map<string, boolean | undefined>();
  const asked: Promise<unknown>[] = [];
  const keyOf = (w: PolicyWitness, signature: Uint8Array) => `${w.name} ${toHex(signature)}`;
  let found: CosignatureVerdict;
  try {
    found = judgeCheckpoint(policy, note, undefined, (w, text, signature) => {
      const key = keyOf(w, signature);
      if (w.vkey.type === NOTE_TYPE_MLDSA44_COSIGNATURE) answers.set(key, mldsa44CosignatureVerifier(w.vkey.name, w.vkey.publicKey).verify(text, signature));
      else {
        const time = readTimestamp(signature);
        if (signature.length !== 72 || time === null) answers.set(key, false);
        else asked.push(ed25519Verify(w.vkey.publicKey, signature.subarray(8), ed25519CosignedMessage(time, text)).then((good) => answers.set(key, good)));
      }
      return true;
    });
  } catch (err) {
    checks.push(fail('Witnesses', message(err)));
    return 0;
  }
  const names = [...new Set([...found.cosigned.map((c) => c.witness), ...found.problems.map((p) => p.witness)])];
  const rows = new Map(names.map((name) => [name, pending(`Witness ${name}`, 'checking…')]));
  const summary = pending('Witnesses', 'checking…');
  checks.push(...rows.values(), summary);
  ctx.later.push(
    Promise.all(asked).then(() => {
      const verdict = judgeCheckpoint(policy, note, undefined, (w, _text, signature) => answers.get(keyOf(w, signature)));
      for (const [name, row] of rows) {
        const label = `Witness ${name}`;
        const problems = verdict.problems.filter((p) => p.witness === name).map((p) => p.reason);
        const time = verdict.cosigned.find((c) => c.witness === name)?.time;
        // The time a witness states (seconds); one no date can hold is not shown (the signature still decides).
        if (problems.length > 0) Object.assign(row, fail(label, problems.join('; ')));
        else if (time !== undefined) Object.assign(row, ok(label, time !== null && time < 8.64e12 ? [`Cosigned at ${blockTimeIso(time)}`] : []));
        else Object.assign(row, info(label, "not checked: this browser's Web Crypto has no Ed25519 (`timeseal verify` and the site check it)"));
      }
      const n = verdict.cosigned.length;
      Object.assign(
        summary,
        info('Witnesses', `${n} of the ${policy.witnesses.length} witnesses of the policy cosigned this checkpoint (quorum ${describeQuorum(policy)}${verdict.met ? ', met' : ', not met yet: cosignatures are added within hours of publication'})`, [`Policy from ${source}`]),
      );
    }),
  );
  return found.cosigned.length + found.problems.length;
}

/** An Ed25519 signature checked with Web Crypto: undefined when this browser's Web Crypto has no Ed25519. */
async function ed25519Verify(publicKey: Uint8Array, signature: Uint8Array, message: Uint8Array): Promise<boolean | undefined> {
  const c = globalThis.crypto?.subtle;
  const bytes = (b: Uint8Array) => b as Uint8Array<ArrayBuffer>;
  let key: CryptoKey;
  try {
    key = await c.importKey('raw', bytes(publicKey), { name: 'Ed25519' }, false, ['verify']);
  } catch {
    return undefined;
  }
  return c.verify({ name: 'Ed25519' }, key, bytes(signature), bytes(message)).catch(() => false);
}

/** An Ed25519 signature checked with Web Crypto (asynchronous: the row is filled in before the report). */
function ed25519Row(ctx: Context, label: string, publicKey: Uint8Array, signature: Uint8Array, message: Uint8Array): Check {
  const row = pending(label, 'checking…');
  ctx.later.push(
    ed25519Verify(publicKey, signature, message).then((good) =>
      Object.assign(row, good === undefined ? info(label, "not checked: this browser's Web Crypto has no Ed25519 (`timeseal verify` and the site check it)") : good ? ok(label) : fail(label, 'the Ed25519 signature does not verify')),
    ),
  );
  return row;
}

/**
 * Lines this page does not check (keys not given to it): named, not trusted; the verdict rests on the lines it
 * checks, which sign the same checkpoint text.
 */
function otherLines(note: string | Uint8Array, checked = 2): Check[] {
  let others: number;
  try {
    others = parseNote(note).signatures.length - checked;
  } catch {
    return [];
  }
  if (others <= 0) return [];
  return [info('Other checkpoint lines', `${others} more signature line${others === 1 ? '' : 's'} (Ed25519, witnesses, or keys not given to this page) not checked here: \`timeseal verify\` and the site's search check them`)];
}

function bundleSection(ctx: Context, entry: Context['bundles'][number]): Section {
  const title = `Proof bundle ${entry.input.name}`;
  let bundle: ProofBundle;
  try {
    bundle = parseProofBundle(fromUtf8(entry.input.bytes, 'proof bundle'));
  } catch (err) {
    return { title, checks: [fail('Proof bundle format', message(err))] };
  }
  const checks: Check[] = [info('Claim', `hash ${bundle.hash} was in the ledger of ${bundle.date}`, [`Leaf ${bundle.leafIndex} of a tree of ${bundle.treeSize}`])];
  if (!ctx.inputs.document) {
    // A bundle alone: say what it can prove, for which hash, and what it still needs (the document first).
    const needed = ['your original file in step 1 (or its SHA-256 hash): the bundle names a hash, not a file, so only the file shows the proof is about it'];
    if (!ctx.keys.ecdsa || !ctx.keys.mldsa) needed.push('the two public keys (public.pem and dilithium_public.key from /keys/) to check the signatures');
    if (bundle.ots === null) needed.push(`for the Bitcoin anchor, the bundle downloaded again once ${bundle.date} is anchored (it then carries the OpenTimestamps proof)`);
    checks.push(
      info(
        'What this bundle proves',
        `that SHA-256 ${bundle.hash} is in the signed ledger of ${bundle.date}${bundle.ots !== null ? ', anchored in Bitcoin by its OpenTimestamps proof' : ''}`,
        needed.map((n) => `Still needed: ${n}`),
      ),
    );
  }
  checks.push(documentMatch(ctx, bundle.hash, 'the proof bundle'));
  const { ecdsa, mldsa } = ctx.keys;
  checks.push(
    ecdsa
      ? attempt('Bundle names the ECDSA P-256 key', () => {
          const fp = fingerprint(ecdsaPublicKeyToSpkiDer(ecdsa));
          if (fp !== bundle.keys.ecdsaP256Fingerprint) throw new MismatchError('ECDSA P-256 key fingerprint', fp, bundle.keys.ecdsaP256Fingerprint);
        })
      : pending('Bundle names the ECDSA P-256 key', NO_ECDSA),
    mldsa
      ? attempt('Bundle names the ML-DSA-65 key', () => {
          const fp = fingerprint(mldsa);
          if (fp !== bundle.keys.mlDsa65Fingerprint) throw new MismatchError('ML-DSA-65 key fingerprint', fp, bundle.keys.mlDsa65Fingerprint);
        })
      : pending('Bundle names the ML-DSA-65 key', NO_MLDSA),
  );
  checks.push(...checkpointSignatureChecks(bundle.checkpoint, ctx));
  let root: Uint8Array | undefined;
  checks.push(
    attempt('Inclusion proof leads to the checkpoint root', () => {
      const cp = parseCheckpoint(parseNote(bundle.checkpoint).text);
      root = cp.root;
      if (cp.size !== bundle.treeSize) throw new MismatchError('tree size (checkpoint vs bundle)', String(cp.size), String(bundle.treeSize));
      const path = bundle.inclusionPath.map((h, i) => fromHex(h, `inclusion_path[${i}]`));
      verifyInclusion(leafHash(fromHex(bundle.hash)), bundle.leafIndex, bundle.treeSize, path, cp.root);
      return [`Root ${toHex(cp.root)}`, `Tree size ${cp.size}, leaf ${bundle.leafIndex}`];
    }),
  );
  if (ecdsa && mldsa) {
    checks.push(attempt("Whole bundle (keys, both signatures, the day's leaf range, dates)", () => void verifyProofBundle(bundle, { ecdsa, mldsa })));
  }
  const day = ctx.ledgers.find((l) => l.sha256 === bundle.ledger.sha256) ?? ctx.ledgers.find((l) => l.ledger?.date === bundle.date || l.input.date === bundle.date);
  if (day) {
    checks.push(
      attempt(`Matches the ledger file ${day.input.name}`, () => {
        if (day.sha256 !== bundle.ledger.sha256) throw new MismatchError(`SHA-256 of ${day.input.name}`, bundle.ledger.sha256, day.sha256);
        const ledger = ledgerOf(day.input.bytes);
        const expect = (what: string, a: string | number, b: string | number) => {
          if (a !== b) throw new MismatchError(what, String(a), String(b));
        };
        expect('ledger path', ledgerPath(ledger.date), bundle.ledger.path);
        expect('date', ledger.date, bundle.date);
        expect('first_index', ledger.firstIndex, bundle.ledger.firstIndex);
        expect('entry_count', ledger.entries.length, bundle.ledger.entryCount);
        expect('tree_size', ledger.treeSize, bundle.treeSize);
        if (root) expect('root (ledger vs checkpoint)', ledger.root, toHex(root));
        const entry = ledger.entries[bundle.leafIndex - ledger.firstIndex];
        expect(`ledger entry at leaf ${bundle.leafIndex}`, entry?.hash ?? '(none)', bundle.hash);
        expect('submission time', entry!.submittedAt, bundle.submittedAt);
        return [`Submitted ${bundle.submittedAt}`, `Ledger SHA-256 ${day.sha256}`];
      }),
    );
  } else {
    checks.push(
      info('Date and time', `submitted ${bundle.submittedAt}, as the bundle states`, [
        `The day's ledger file ${bundle.ledger.path} and its signatures bind the date and time: add them to check.`,
      ]),
    );
  }
  const section: Section = { title, checks };
  if (bundle.ots !== null) {
    try {
      const d = parseDetached(fromBase64(bundle.ots, 'ots'));
      checks.push(
        equalBytes(d.timestamp.message, fromHex(bundle.hash)) && d.fileHashOp === 'sha256'
          ? ok('OpenTimestamps proof starts at the hash')
          : fail('OpenTimestamps proof starts at the hash', `the embedded .ots starts at ${d.fileHashOp} ${toHex(d.timestamp.message)}, not ${bundle.hash}`),
      );
      if (root) {
        const ledgerSha = fromHex(bundle.ledger.sha256);
        checks.push(
          commitsToDay(d, root, ledgerSha)
            ? ok("OpenTimestamps path goes through the checkpoint root and the ledger file's SHA-256")
            : fail("OpenTimestamps path goes through the checkpoint root and the ledger file's SHA-256", `no step of the .ots reaches root ${short(toHex(root))} and then appends ${short(bundle.ledger.sha256)}`),
        );
      }
      checks.push(...attestationChecks(d, ctx));
      section.tree = formatDetached(d);
    } catch (err) {
      checks.push(fail('OpenTimestamps proof', message(err)));
    }
  } else {
    checks.push(info('Bitcoin anchor', 'no OpenTimestamps proof in this bundle yet (the day is anchored within about a day; fetch the bundle again later)'));
  }
  const tokens: Array<{ name: string; der: Uint8Array }> = [];
  try {
    bundle.rfc3161.forEach((b, i) => tokens.push({ name: tsrPath(bundle.date, i), der: fromBase64(b, 'rfc3161') }));
  } catch (err) {
    checks.push(fail('RFC 3161 time-stamps', message(err)));
  }
  checks.push(...tokenChecks(ctx, tokens, bundle.ledger.sha256));
  return section;
}

/** A c2sp.org/tlog-proof@v1 file (docs/FORMAT.md §8a): the hash it names, both checkpoint signatures, the
 *  inclusion proof; with the day's ledger, the leaf and the date. */
function tlogProofSection(ctx: Context, input: ClassifiedInput): Section {
  const title = `tlog-proof ${input.name}`;
  let proof: TlogProof;
  try {
    proof = parseTlogProof(input.bytes);
  } catch (err) {
    return { title, checks: [fail('tlog-proof format', message(err))] };
  }
  const cp = parseCheckpoint(parseNote(proof.checkpoint).text);
  const named = proof.extra?.length === 32 ? toHex(proof.extra) : undefined;
  const doc = ctx.inputs.document;
  const hash = named ?? doc?.hash;
  const checks: Check[] = [
    info('Claim', named ? `hash ${named} is leaf ${proof.index} of ${cp.origin}` : `leaf ${proof.index} of ${cp.origin} (the file names no hash: your document's is used)`, [
      `Checkpoint: tree size ${cp.size}, root ${toHex(cp.root)}`,
    ]),
  ];
  if (named) checks.push(documentMatch(ctx, named, 'the tlog-proof'));
  checks.push(...checkpointSignatureChecks(proof.checkpoint, ctx));
  const label = 'Inclusion proof leads to the checkpoint root';
  checks.push(
    hash === undefined
      ? pending(label, 'no hash: choose the original file or paste its SHA-256 hash')
      : attempt(label, () => {
          verifyInclusion(leafHash(fromHex(hash)), proof.index, cp.size, proof.proof, cp.root);
          return [`Leaf ${proof.index} of ${cp.size}`, `Root ${toHex(cp.root)}`];
        }),
  );
  const { ecdsa, mldsa } = ctx.keys;
  if (ecdsa && mldsa && hash !== undefined) {
    checks.push(attempt('Whole tlog-proof (both signatures, inclusion)', () => void verifyTlogProof(proof, { ecdsa, mldsa }, doc ? { hash: fromHex(doc.hash) } : {})));
  }
  const day = ctx.ledgers.find((l) => l.ledger?.treeSize === cp.size && l.ledger.root === toHex(cp.root));
  const entry = day?.ledger?.entries[proof.index - day.ledger.firstIndex];
  if (day && entry && entry.hash === hash) {
    checks.push(ok(`Leaf in the ledger file ${day.input.name}`, [`Ledger of ${day.ledger!.date}, submitted ${entry.submittedAt}`]));
  } else if (day) {
    checks.push(fail(`Leaf in the ledger file ${day.input.name}`, `leaf ${proof.index} of ${day.input.name} is ${entry ? entry.hash : 'not one of its day'}, not ${hash ?? 'the hash'}`));
  } else {
    checks.push(info('Date', `a tlog-proof names no date: its checkpoint (tree size ${cp.size}) is the end of the day it proves; add that day's ledger file to see the date and time`));
  }
  return { title, checks };
}

function otsSection(ctx: Context, input: ClassifiedInput): Section {
  const title = `OpenTimestamps proof ${input.name}`;
  let d: DetachedTimestampFile;
  try {
    d = parseDetached(input.bytes);
  } catch (err) {
    return { title, checks: [fail('OpenTimestamps file', message(err))] };
  }
  const digest = toHex(d.timestamp.message);
  const checks: Check[] = [];
  const label = 'Proof starts at';
  const doc = ctx.inputs.document;
  const ledger = ctx.ledgers.find((l) => l.sha256 === digest);
  const bundle = ctx.bundles.find((b) => b.bundle?.hash === digest);
  if (d.fileHashOp !== 'sha256') {
    checks.push(info(label, `the ${d.fileHashOp} digest ${digest} (Timeseal uses SHA-256; compare it yourself)`));
  } else if (doc && doc.hash === digest) {
    checks.push(ok('Hash matches the document', [`The .ots starts at your document's SHA-256 ${digest}`]));
  } else if (ledger) {
    checks.push(ok(label, [`The SHA-256 of ${ledger.input.name}: ${digest}`]));
  } else if (bundle) {
    checks.push(ok(label, [`The hash of ${bundle.input.name}: ${digest}`]));
  } else if (doc) {
    checks.push(fail('Hash matches the document', `the .ots is for ${digest}, not your document's hash ${doc.hash}`));
  } else {
    checks.push(pending('Hash matches the document', `no document given: the .ots is for ${digest}; choose the original file or paste its hash`));
  }
  checks.push(...attestationChecks(d, ctx));
  return { title, checks, tree: formatDetached(d) };
}

/**
 * A Timeseal receipt (docs/FORMAT.md §3b; core/receipt.ts): the token (signature, TSA certificate, Timeseal's
 * policy), its chain to the TSA root the person drops (timeseal-tsa-root.pem from /keys/), the document's hash,
 * and its promise, judged from the day's ledger when that day's files checked out, else from what the person
 * gave about which days are published (a later day's signed ledger, or days.json). A receipt carried by a proof
 * bundle (`within`, timeseal-proof/3) must be for the bundle's hash; what it still waits for (the root, the day)
 * is named there without holding back the bundle's verdict.
 */
function receiptSection(ctx: Context, input: ClassifiedInput, within?: { hash: string }): Section {
  const section: Section = { title: `Timeseal receipt ${input.name}`, checks: [] };
  const authority = ctx.inputs.authority;
  const label = 'Receipt (RFC 3161 time-stamp)';
  const row = pending(label, 'checking…');
  section.checks.push(row);
  ctx.later.push(
    checkReceipt(input.bytes, authority?.certs ?? []).then(
      (f) => {
        const time = `${f.genTime.toISOString()} (UTC)`;
        const imprint = toHex(f.imprint);
        section.checks.unshift(info('Claim', `${f.imprintAlgorithm} ${short(imprint)} existed at ${time}, stamped by ${f.tsaName}; promised to be in the ledger of ${f.date}`));
        Object.assign(row, ok(label, [`Time ${time}`, `TSA ${f.tsaName}`, `Serial ${f.serialNumber}`, `${f.imprintAlgorithm} ${imprint}`, ...(f.ledgerHash === imprint ? [] : [`In the ledger as ${f.ledgerHash} (the SHA-256 of its TSTInfo)`])]));
        const chain = `Certificates ${f.chain.join(' → ')}`;
        section.checks.push(
          f.anchored
            ? ok('Chain to the TSA root', [chain, `Root from ${authority!.source}`])
            : pending('Chain to the TSA root', 'not checked against a root: add timeseal-tsa-root.pem from /keys/', [chain]),
          receiptDocument(ctx, f, imprint),
          receiptPromise(ctx, f),
        );
        if (within) {
          if (f.ledgerHash !== within.hash) section.checks.push(fail("The bundle's hash", `the receipt is for ${f.ledgerHash}, not the bundle's ${within.hash}`));
          for (const c of section.checks) if (c.state === 'pending') Object.assign(c, info(c.label, c.verdict.replace('Not verified: ', 'not checked here: '), c.details));
        }
      },
      (err) => Object.assign(row, fail(label, `${message(err)}${authority ? ' (the Timeseal TSA root is timeseal-tsa-root.pem in /keys/)' : ''}`)),
    ),
  );
  return section;
}

function receiptDocument(ctx: Context, f: ReceiptFacts, imprint: string): Check {
  const algorithm = f.imprintAlgorithm;
  if (algorithm === 'SHA-256') return documentMatch(ctx, imprint, 'the receipt');
  const doc = ctx.inputs.document;
  const label = 'Hash matches the document';
  const hash = doc?.digests?.[algorithm] ?? (doc?.hash.length === 2 * digestLength(algorithm) ? doc.hash : undefined);
  if (hash) return hash === imprint ? ok(label, [`${algorithm} ${hash}`]) : fail(label, `your document's ${algorithm} ${hash} is not the receipt's ${imprint}`);
  return { ...pending(label, `a ${algorithm} receipt: choose the original file, or paste its ${algorithm} hash`), needsDigest: algorithm };
}

function receiptPromise(ctx: Context, f: ReceiptFacts): Check {
  const { date } = f;
  const label = `Promise: in the ledger of ${date}`;
  const judged = (ledger: Ledger | null, lastPublished: string | null, details: string[]): Check => {
    const v = judgePromise(f, ledger, lastPublished);
    if (v.state === 'kept') return ok(label, [`Leaf ${v.leafIndex}`, `Recorded at ${v.recordedAt} (the ledger's time)`, ...details]);
    if (v.state === 'pending') return pending(label, v.reason, details);
    // Evidence against Timeseal only when the receipt is Timeseal's: its chain must reach the root.
    return f.anchored ? fail(label, v.reason, details) : pending(label, `its chain was not checked against a root (add timeseal-tsa-root.pem): if the receipt is Timeseal's, ${v.reason}`, details);
  };
  const ledger = ctx.verified.get(date);
  if (ledger) return judged(ledger, null, [`From ${ledgerPath(date)}, checked above`]);
  const add = `add ${ledgerPath(date)} with its .sig, .dilithium.sig, .signatures.json and .checkpoint`;
  if (ctx.ledgers.some((l) => (l.input.date ?? l.ledger?.date) === date)) return pending(label, `${ledgerPath(date)} is given but not verified with its signature files: see Ledger ${date}`);
  // A later day's signed ledger names the day before it: the receipt's day has no ledger when it is skipped.
  const later = [...ctx.verified.values()].filter((l) => l.date > date).sort((a, b) => (a.date < b.date ? -1 : 1))[0];
  if (later) {
    const before = later.previous?.date;
    const details = [`The signed ledger of ${later.date} names ${before ? `${before} as the day before it` : 'no day before it'}`];
    if (before === date) return pending(label, `the ledger of ${date} is published: ${add}`, details);
    if (!before || before < date) return judged(null, later.date, details);
    return pending(label, `${ledgerPath(date)} was not given, and later days are published: ${add}`, details);
  }
  const daysFile = ctx.inputs.files.find((x) => x.kind === 'days');
  if (daysFile) {
    let days: string[];
    try {
      days = parseDays(fromUtf8(daysFile.bytes)).days.map((d) => d.date);
    } catch (err) {
      return fail(label, `${daysFile.name}: ${message(err)}`);
    }
    const details = [`Published days from ${daysFile.name} (it is not signed; the days' signed ledgers show the same)`];
    return days.includes(date) ? pending(label, `the ledger of ${date} is published: ${add}`, details) : judged(null, days.at(-1) ?? null, details);
  }
  return pending(label, `the ledger of ${date} was not given: ${add} (or days.json, to see whether it is published)`);
}

interface Day {
  date: string;
  ledger?: Context['ledgers'][number];
  ecdsa?: ClassifiedInput;
  mldsa?: ClassifiedInput;
  meta?: ClassifiedInput;
  checkpoint?: ClassifiedInput;
  tokens?: ClassifiedInput[];
  /** The witnesses' lines of the day's checkpoint (YYYY-MM-DD.cosignatures), checked as part of it. */
  cosignatures?: ClassifiedInput;
}

function daySection(ctx: Context, day: Day, days: Map<string, Day>): Section {
  const { date } = day;
  const title = `Ledger ${date}`;
  const checks: Check[] = [];
  const ledgerBytes = day.ledger?.input.bytes;
  if (!ledgerBytes) {
    return { title, checks: [pending('Ledger file', `${ledgerPath(date)} is missing: add it to check its signatures`)] };
  }
  const { ecdsa, mldsa } = ctx.keys;
  const sigCheck = (label: string, file: ClassifiedInput | undefined, path: string, key: Uint8Array | undefined, missingKey: string, verify: (m: Uint8Array, s: Uint8Array, k: Uint8Array) => boolean): Check => {
    if (!file) return pending(label, `${path} is missing`);
    if (!key) return pending(label, missingKey);
    return verify(ledgerBytes, file.bytes, key) ? ok(label, [`${file.name} over ${day.ledger!.input.name}`]) : fail(label, `${file.name}: signature does not verify`);
  };
  checks.push(sigCheck('ECDSA P-256 signature', day.ecdsa, ecdsaSignaturePath(date), ecdsa, NO_ECDSA, ecdsaVerify));
  checks.push(sigCheck('ML-DSA-65 signature', day.mldsa, mldsaSignaturePath(date), mldsa, NO_MLDSA, mldsaVerify));
  const missing = [
    day.ecdsa ? '' : ecdsaSignaturePath(date),
    day.mldsa ? '' : mldsaSignaturePath(date),
    day.meta ? '' : signaturesMetaPath(date),
    day.checkpoint ? '' : dayCheckpointPath(date),
  ].filter(Boolean);
  const wholeLabel = "Ledger format, signature metadata and the day's checkpoint";
  if (missing.length > 0) checks.push(pending(wholeLabel, `missing ${missing.join(', ')}`));
  else if (!ecdsa || !mldsa) checks.push(pending(wholeLabel, !ecdsa ? NO_ECDSA : NO_MLDSA));
  else {
    checks.push(
      attempt(wholeLabel, () => {
        const v = verifyDayFiles(date, { ledger: ledgerBytes, ecdsaSignature: day.ecdsa!.bytes, mldsaSignature: day.mldsa!.bytes, signaturesMeta: day.meta!.bytes, checkpoint: day.checkpoint!.bytes }, { ecdsa, mldsa }, { hasher: sha256Of, mu: muOf });
        ctx.verified.set(date, v.ledger);
        return [`${v.ledger.entries.length} hashes, leaves ${v.ledger.firstIndex}–${v.ledger.treeSize - 1}`, `Root ${v.ledger.root}`, `Ledger SHA-256 ${v.sha256}`];
      }),
    );
    const origin = day.ledger?.ledger?.origin;
    const cosigned = day.cosignatures ? concatBytes(day.checkpoint!.bytes, day.cosignatures.bytes) : day.checkpoint!.bytes;
    if (day.cosignatures) checks.push(attempt(`Cosignature lines ${day.cosignatures.name}`, () => void parseNote(cosigned)));
    if (origin !== undefined) checks.push(...witnessReadyLines(cosigned, origin, ctx));
  }
  checks.push(...tokenChecks(ctx, (day.tokens ?? []).map((t) => ({ name: t.name, der: t.bytes })), day.ledger!.sha256));
  const ledger = day.ledger?.ledger;
  if (ledger) {
    if (ledger.previous === null) checks.push(info('Chain to the previous day', 'this is the first day of the log'));
    else {
      const prev = days.get(ledger.previous.date)?.ledger;
      if (!prev) {
        checks.push(info('Chain to the previous day', `names ${ledgerPath(ledger.previous.date)} with SHA-256 ${short(ledger.previous.sha256)}; add that file to check the chain`));
      } else {
        checks.push(
          prev.sha256 === ledger.previous.sha256
            ? ok('Chain to the previous day', [`${prev.input.name} has the SHA-256 this ledger names: ${prev.sha256}`])
            : fail('Chain to the previous day', `${prev.input.name} has SHA-256 ${prev.sha256}, but this ledger names ${ledger.previous.sha256}`),
        );
      }
    }
    const doc = ctx.inputs.document;
    if (doc) {
      const i = ledger.entries.findIndex((e) => e.hash === doc.hash);
      checks.push(
        i >= 0
          ? info('Your document in this ledger', `listed: submitted ${ledger.entries[i]!.submittedAt}, leaf ${ledger.firstIndex + i}`)
          : info('Your document in this ledger', 'not listed in this day'),
      );
    }
  }
  return { title, checks };
}

function checkpointSection(ctx: Context, input: ClassifiedInput): Section {
  const title = `Checkpoint ${input.name}`;
  let note: string;
  try {
    note = fromUtf8(input.bytes, 'checkpoint');
  } catch (err) {
    return { title, checks: [fail('Checkpoint', message(err))] };
  }
  const checks = checkpointSignatureChecks(note, ctx);
  try {
    const cp = parseCheckpoint(parseNote(note).text);
    checks.unshift(info('Tree head', `${cp.origin}, tree size ${cp.size}`, [`Root ${toHex(cp.root)}`]));
  } catch {
    // The signature rows already carry the parse error.
  }
  return { title, checks };
}

function headerSection(ctx: Context, input: ClassifiedInput): Section {
  const title = `Block header ${input.name}`;
  const header = input.value;
  if (!(header instanceof Uint8Array)) return { title, checks: [fail('Block header', input.problem ?? 'not a block header')] };
  const h = parseBlockHeader(header);
  const checks: Check[] = [
    info('Block', `hash ${blockHash(header)}`, [`Block time ${blockTimeIso(h.time)}`, `Merkle root ${reversedHex(h.merkleRoot)}`]),
    attempt('Proof of work', () => void checkProofOfWork(header, ctx.network)),
  ];
  checks.push(
    ctx.pool.claims.length === 0
      ? pending('Confirms an attestation', 'add the .ots file (or proof bundle) this block should confirm')
      : fail('Confirms an attestation', `its merkle root ${reversedHex(h.merkleRoot)} is not the message of any Bitcoin attestation given`),
  );
  return { title, checks };
}

function keySection(inputs: VerifierInputs, policy: PolicyInput | undefined, problems: ClassifiedInput[]): Section {
  const checks: Check[] = [];
  const { ecdsa, mldsa } = inputs.keys;
  checks.push(
    ecdsa
      ? info('ECDSA P-256 public key', `fingerprint ${fingerprint(ecdsaPublicKeyToSpkiDer(ecdsa.key))}`, [`From ${ecdsa.source}`])
      : pending('ECDSA P-256 public key', NO_ECDSA),
  );
  checks.push(
    mldsa ? info('ML-DSA-65 public key', `fingerprint ${fingerprint(mldsa.key)}`, [`From ${mldsa.source}`]) : pending('ML-DSA-65 public key', NO_MLDSA),
  );
  if (policy) checks.push(info('Witness policy', `${policy.policy.witnesses.map((w) => w.name).join(', ')}; quorum ${describeQuorum(policy.policy)}`, [`From ${policy.source}`]));
  if (inputs.authority) checks.push(info('TSA certificate authority', `${inputs.authority.certs.length} certificate${inputs.authority.certs.length === 1 ? '' : 's'}`, [`From ${inputs.authority.source}`]));
  for (const p of problems) checks.push(fail(`Key file ${p.name}`, p.problem ?? 'not a public key'));
  return { title: 'Public keys', checks };
}

/** Checks everything given and returns the report the page shows. */
export async function verifyInputs(inputs: VerifierInputs): Promise<Report> {
  const files = inputs.files;
  const keys: Partial<PublicKeySet> = {};
  if (inputs.keys.ecdsa) keys.ecdsa = inputs.keys.ecdsa.key;
  if (inputs.keys.mldsa) keys.mldsa = inputs.keys.mldsa.key;
  if (inputs.keys.ed25519) keys.ed25519 = inputs.keys.ed25519.key;
  if (inputs.keys.mldsa44) keys.mldsa44 = inputs.keys.mldsa44.key;

  const ledgers = files
    .filter((f) => f.kind === 'ledger')
    .map((input) => {
      let ledger: Ledger | undefined;
      try {
        ledger = ledgerOf(input.bytes);
      } catch {
        ledger = undefined;
      }
      return { input, sha256: toHex(sha256Of(input.bytes)), ...(ledger ? { ledger } : {}) };
    });
  const bundles = files
    .filter((f) => f.kind === 'bundle')
    .map((input) => {
      try {
        return { input, bundle: parseProofBundle(fromUtf8(input.bytes)) };
      } catch {
        return { input };
      }
    });

  // Every Bitcoin attestation in any proof given, for pairing block headers with them.
  const claims: BitcoinClaim[] = [];
  const otsSources: Uint8Array[] = [
    ...files.filter((f) => f.kind === 'ots').map((f) => f.bytes),
    ...bundles.flatMap((b) => {
      try {
        return b.bundle?.ots ? [fromBase64(b.bundle.ots)] : [];
      } catch {
        return [];
      }
    }),
  ];
  for (const bytes of otsSources) {
    try {
      for (const a of walkAttestations(parseDetached(bytes).timestamp)) {
        if (a.attestation.kind === 'bitcoin') claims.push({ height: a.attestation.height, message: a.message });
      }
    } catch {
      // Reported in the proof's own section.
    }
  }
  // The witness policy is the person's to give (built in, it would grow the file with every witness past its
  // size budget): the last one dropped counts; inputs.ts has read it already.
  const policyFile = files.filter((f) => f.kind === 'witness-policy' && typeof f.value === 'string').at(-1);
  const policy = policyFile ? { policy: readWitnessPolicy(policyFile.value as string), source: policyFile.name } : undefined;
  const ctx: Context = { inputs, ...(policy ? { policy } : {}), keys, ledgers, bundles, pool: new HeaderPool(files, inputs.fetchedHeaders ?? [], claims), network: inputs.network ?? 'mainnet', later: [], verified: new Map() };

  const sections: Section[] = [];
  for (const b of bundles) sections.push(bundleSection(ctx, b));
  for (const t of files.filter((f) => f.kind === 'tlog-proof')) sections.push(tlogProofSection(ctx, t));

  // Group the day files by date: from their names, else from the ledger's content; a lone unnamed signature
  // belongs to the only ledger given.
  const days = new Map<string, Day>();
  const dayOf = (date: string): Day => {
    let d = days.get(date);
    if (!d) days.set(date, (d = { date }));
    return d;
  };
  const unplaced: ClassifiedInput[] = [];
  for (const l of ledgers) {
    const date = l.input.date ?? l.ledger?.date;
    if (date) dayOf(date).ledger = l;
    else unplaced.push(l.input);
  }
  const onlyDate = days.size === 1 ? [...days.keys()][0] : undefined;
  const slot = { 'ecdsa-signature': 'ecdsa', 'mldsa-signature': 'mldsa', 'signatures-meta': 'meta' } as const;
  for (const f of files) {
    if (f.kind === 'ecdsa-signature' || f.kind === 'mldsa-signature' || f.kind === 'signatures-meta') {
      const date = f.date ?? onlyDate;
      if (date) dayOf(date)[slot[f.kind]] = f;
      else unplaced.push(f);
    }
    if (f.kind === 'cosignatures' || f.kind === 'tsr') {
      const date = f.date ?? onlyDate;
      if (!date) unplaced.push(f);
      else if (f.kind === 'tsr') (dayOf(date).tokens ??= []).push(f);
      else dayOf(date).cosignatures = f;
    }
  }
  const standaloneCheckpoints: ClassifiedInput[] = [];
  for (const f of files.filter((x) => x.kind === 'checkpoint')) {
    const date =
      f.date ??
      [...days.values()].find((d) => {
        try {
          const cp = parseCheckpoint(parseNote(f.bytes).text);
          return d.ledger?.ledger && cp.size === d.ledger.ledger.treeSize && toHex(cp.root) === d.ledger.ledger.root;
        } catch {
          return false;
        }
      })?.date;
    if (date && days.has(date) && !dayOf(date).checkpoint) dayOf(date).checkpoint = f;
    else standaloneCheckpoints.push(f);
  }
  for (const day of [...days.values()].sort((a, b) => (a.date < b.date ? -1 : 1))) sections.push(daySection(ctx, day, days));
  for (const c of standaloneCheckpoints) sections.push(checkpointSection(ctx, c));
  for (const r of files.filter((f) => f.kind === 'receipt')) sections.push(receiptSection(ctx, r));
  for (const { input, bundle } of bundles) {
    bundle?.receipts.forEach((r, i) => sections.push(receiptSection(ctx, { kind: 'receipt', name: `${i + 1} in ${input.name}`, bytes: fromBase64(r) }, bundle)));
  }
  for (const o of files.filter((f) => f.kind === 'ots')) sections.push(otsSection(ctx, o));
  for (const h of ctx.pool.unused()) sections.push(headerSection(ctx, h));
  for (const u of unplaced) {
    sections.push({ title: u.name, checks: [fail(`${u.name}`, `cannot tell which day this ${u.kind.replace('-', ' ')} belongs to: name it as in the archive (YYYY-MM-DD.json…)`)] });
  }

  const evidence = sections.length;
  const keyProblems = files.filter((f) => (f.kind === 'ecdsa-key' || f.kind === 'mldsa-key' || f.kind === 'tsa-ca' || f.kind === 'witness-policy') && f.problem);
  sections.unshift(keySection(inputs, ctx.policy, keyProblems));
  await Promise.all(ctx.later);
  if (inputs.document) {
    const { hash, source, digests = {} } = inputs.document;
    sections.unshift({ title: 'Your document', checks: [info(`SHA-${hash.length * 4}`, hash, [`From ${source}`]), ...Object.entries(digests).map(([a, d]) => info(a, d))] });
  }
  return { summary: summarize(sections, evidence, keyProblems.length > 0), sections };
}

function summarize(sections: Section[], evidence: number, keyProblem: boolean): Report['summary'] {
  const rows = sections.flatMap((s) => s.checks.map((c) => ({ s, c })));
  const failed = rows.find((r) => r.c.state === 'fail');
  if (failed) return { state: 'fail', text: `${failed.c.verdict} (${failed.s.title}: ${failed.c.label})` };
  if (evidence === 0 && !keyProblem) return { state: 'empty', text: 'Add your document and its proof files to check them.' };
  const waiting = rows.find((r) => r.c.state === 'pending' && r.s.title !== 'Public keys') ?? rows.find((r) => r.c.state === 'pending');
  if (waiting) return { state: 'pending', text: `${waiting.c.verdict} (${waiting.s.title}: ${waiting.c.label})` };
  const passed = rows.filter((r) => r.c.state === 'ok').length;
  // What the person did not give is said, not hidden behind "all checks passed": without a Bitcoin block
  // checked, nothing here shows the time is anchored beyond the log's own signatures.
  const anchored = rows.some((r) => r.c.state === 'ok' && r.c.label.startsWith('Bitcoin block '));
  const bundleWithoutOts = rows.some((r) => r.c.label === 'Bitcoin anchor' && r.c.state === 'info');
  const notChecked = anchored ? '' : ` Bitcoin anchor not checked: ${bundleWithoutOts ? 'the bundle has no .ots yet' : 'no .ots given'}.`;
  return { state: 'ok', text: `Verified: all ${passed} checks passed.${notChecked}` };
}
