// A proof bundle (core/proof.ts): its claim, the document's hash, the keys it names, the checkpoint's lines, the
// inclusion path, the whole bundle, the day's ledger when given, its per-hash .ots and its RFC 3161 tokens.
import { ledgerPath, tsrPath } from '../../../../core/archive.ts';
import { parseCheckpoint } from '../../../../core/checkpoint.ts';
import { equalBytes, fromBase64, fromHex, fromUtf8, toHex } from '../../../../core/encoding.ts';
import { MismatchError } from '../../../../core/errors.ts';
import { leafHash, verifyInclusion } from '../../../../core/merkle.ts';
import { parseNote } from '../../../../core/note.ts';
import { formatDetached, parseDetached } from '../../../../core/ots.ts';
import { parseProofBundle, verifyProofBundle, type ProofBundle } from '../../../../core/proof.ts';
import { ecdsaPublicKeyToSpkiDer, fingerprint } from '../../../../core/sig.ts';
import { attestationChecks, commitsToDay } from './bitcoin.ts';
import { checkpointSignatureChecks } from './checkpoint.ts';
import { documentMatch, ledgerOf, tokenChecks, type Context } from './context.ts';
import {
  attempt,
  fail,
  info,
  message,
  NO_ECDSA,
  NO_MLDSA,
  ok,
  pending,
  short,
  type Check,
  type Section,
} from './report.ts';

export function bundleSection(ctx: Context, entry: Context['bundles'][number]): Section {
  const title = `Proof bundle ${entry.input.name}`;
  let bundle: ProofBundle;
  try {
    bundle = parseProofBundle(fromUtf8(entry.input.bytes, 'proof bundle'));
  } catch (err) {
    return { title, checks: [fail('Proof bundle format', message(err))] };
  }
  const checks: Check[] = [
    info('Claim', `hash ${bundle.hash} was in the ledger of ${bundle.date}`, [
      `Leaf ${bundle.leafIndex} of a tree of ${bundle.treeSize}`,
    ]),
  ];
  if (!ctx.inputs.document) {
    // A bundle alone: say what it can prove, for which hash, and what it still needs (the document first).
    const needed = [
      'your original file in step 1 (or its SHA-256 hash): the bundle names a hash, not a file, so only the file shows the proof is about it',
    ];
    if (!ctx.keys.ecdsa || !ctx.keys.mldsa)
      needed.push('the two public keys (public.pem and dilithium_public.key from /keys/) to check the signatures');
    if (bundle.ots === null)
      needed.push(
        `for the Bitcoin anchor, the bundle downloaded again once ${bundle.date} is anchored (it then carries the OpenTimestamps proof)`,
      );
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
          if (fp !== bundle.keys.ecdsaP256Fingerprint)
            throw new MismatchError('ECDSA P-256 key fingerprint', fp, bundle.keys.ecdsaP256Fingerprint);
        })
      : pending('Bundle names the ECDSA P-256 key', NO_ECDSA),
    mldsa
      ? attempt('Bundle names the ML-DSA-65 key', () => {
          const fp = fingerprint(mldsa);
          if (fp !== bundle.keys.mlDsa65Fingerprint)
            throw new MismatchError('ML-DSA-65 key fingerprint', fp, bundle.keys.mlDsa65Fingerprint);
        })
      : pending('Bundle names the ML-DSA-65 key', NO_MLDSA),
  );
  checks.push(...checkpointSignatureChecks(bundle.checkpoint, ctx));
  let root: Uint8Array | undefined;
  checks.push(
    attempt('Inclusion proof leads to the checkpoint root', () => {
      const cp = parseCheckpoint(parseNote(bundle.checkpoint).text);
      root = cp.root;
      if (cp.size !== bundle.treeSize)
        throw new MismatchError('tree size (checkpoint vs bundle)', String(cp.size), String(bundle.treeSize));
      const path = bundle.inclusionPath.map((h, i) => fromHex(h, `inclusion_path[${i}]`));
      verifyInclusion(leafHash(fromHex(bundle.hash)), bundle.leafIndex, bundle.treeSize, path, cp.root);
      return [`Root ${toHex(cp.root)}`, `Tree size ${cp.size}, leaf ${bundle.leafIndex}`];
    }),
  );
  if (ecdsa && mldsa) {
    checks.push(
      attempt(
        "Whole bundle (keys, both signatures, the day's leaf range, dates)",
        () => void verifyProofBundle(bundle, { ecdsa, mldsa }),
      ),
    );
  }
  const day =
    ctx.ledgers.find((l) => l.sha256 === bundle.ledger.sha256) ??
    ctx.ledgers.find((l) => l.ledger?.date === bundle.date || l.input.date === bundle.date);
  if (day) {
    checks.push(
      attempt(`Matches the ledger file ${day.input.name}`, () => {
        if (day.sha256 !== bundle.ledger.sha256)
          throw new MismatchError(`SHA-256 of ${day.input.name}`, bundle.ledger.sha256, day.sha256);
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
          : fail(
              'OpenTimestamps proof starts at the hash',
              `the embedded .ots starts at ${d.fileHashOp} ${toHex(d.timestamp.message)}, not ${bundle.hash}`,
            ),
      );
      if (root) {
        const ledgerSha = fromHex(bundle.ledger.sha256);
        checks.push(
          commitsToDay(d, root, ledgerSha)
            ? ok("OpenTimestamps path goes through the checkpoint root and the ledger file's SHA-256")
            : fail(
                "OpenTimestamps path goes through the checkpoint root and the ledger file's SHA-256",
                `no step of the .ots reaches root ${short(toHex(root))} and then appends ${short(bundle.ledger.sha256)}`,
              ),
        );
      }
      checks.push(...attestationChecks(d, ctx.pool, ctx.network));
      section.tree = formatDetached(d);
    } catch (err) {
      checks.push(fail('OpenTimestamps proof', message(err)));
    }
  } else {
    checks.push(
      info(
        'Bitcoin anchor',
        'no OpenTimestamps proof in this bundle yet (the day is anchored within about a day; fetch the bundle again later)',
      ),
    );
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
