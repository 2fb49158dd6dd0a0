// A checkpoint's signature lines, wherever the checkpoint comes from (a bundle, a tlog-proof, a day's files, a
// checkpoint given alone): the log's ECDSA P-256 and ML-DSA-65 lines, its Ed25519 and ML-DSA-44 lines with their
// vkeys, and the witnesses' cosignatures with the policy the person dropped; and the section of a checkpoint
// given alone.
import { parseCheckpoint, verifyCheckpoint } from '../../../../core/checkpoint.ts';
import {
  ed25519CosignedMessage,
  mldsa44CosignatureVerifier,
  NOTE_TYPE_ED25519,
  NOTE_TYPE_MLDSA44_COSIGNATURE,
  readTimestamp,
  typedKeyId,
} from '../../../../core/cosignature.ts';
import { fromUtf8, toHex, utf8 } from '../../../../core/encoding.ts';
import { ecdsaNoteVerifier, mldsaNoteVerifier, parseNote, verifyNoteSignatures } from '../../../../core/note.ts';
import {
  describeQuorum,
  judgeCheckpoint,
  type CosignatureVerdict,
  type PolicyWitness,
} from '../../../../core/witness-policy.ts';
import type { ClassifiedInput } from '../inputs.ts';
import type { Context, PolicyInput } from './context.ts';
import {
  attempt,
  blockTimeIso,
  fail,
  info,
  message,
  NO_ECDSA,
  NO_MLDSA,
  ok,
  pending,
  type Check,
  type Section,
} from './report.ts';

export function checkpointSignatureChecks(note: string, ctx: Context): Check[] {
  const keys = ctx.keys;
  let origin: string;
  try {
    origin = parseCheckpoint(parseNote(note).text).origin;
  } catch (err) {
    return [fail('Checkpoint', message(err))];
  }
  const one = (
    label: string,
    key: Uint8Array | undefined,
    missing: string,
    make: (o: string, k: Uint8Array) => ReturnType<typeof ecdsaNoteVerifier>,
  ): Check => (key ? attempt(label, () => void verifyCheckpoint(note, [make(origin, key)])) : pending(label, missing));
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
export function witnessReadyLines(note: string | Uint8Array, origin: string, ctx: Context): Check[] {
  const checks: Check[] = [];
  let parsed: ReturnType<typeof parseNote>;
  try {
    parsed = parseNote(note);
  } catch {
    return [];
  }
  const text = utf8(parsed.text);
  const lineOf = (name: string, type: number, key: Uint8Array) =>
    parsed.signatures.find((s) => s.name === name && s.keyId === typedKeyId(name, type, key));
  let known = 2;
  const { ed25519: logEd25519, mldsa44 } = ctx.keys;
  if (logEd25519) {
    const line = lineOf(origin, NOTE_TYPE_ED25519, logEd25519);
    if (!line)
      checks.push(
        info('Checkpoint Ed25519 signature', 'the checkpoint has no such line (made before the archive had this key)'),
      );
    else {
      known++;
      checks.push(ed25519Row(ctx, 'Checkpoint Ed25519 signature', logEd25519, line.signature, text));
    }
  }
  if (mldsa44) {
    const verifier = mldsa44CosignatureVerifier(origin, mldsa44);
    if (!lineOf(origin, NOTE_TYPE_MLDSA44_COSIGNATURE, mldsa44))
      checks.push(
        info(
          'Checkpoint ML-DSA-44 cosignature',
          'the checkpoint has no such line (made before the archive had this key)',
        ),
      );
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
      if (w.vkey.type === NOTE_TYPE_MLDSA44_COSIGNATURE)
        answers.set(key, mldsa44CosignatureVerifier(w.vkey.name, w.vkey.publicKey).verify(text, signature));
      else {
        const time = readTimestamp(signature);
        if (signature.length !== 72 || time === null) answers.set(key, false);
        else
          asked.push(
            ed25519Verify(w.vkey.publicKey, signature.subarray(8), ed25519CosignedMessage(time, text)).then((good) =>
              answers.set(key, good),
            ),
          );
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
      const verdict = judgeCheckpoint(policy, note, undefined, (w, _text, signature) =>
        answers.get(keyOf(w, signature)),
      );
      for (const [name, row] of rows) {
        const label = `Witness ${name}`;
        const problems = verdict.problems.filter((p) => p.witness === name).map((p) => p.reason);
        const time = verdict.cosigned.find((c) => c.witness === name)?.time;
        // The time a witness states (seconds); one no date can hold is not shown (the signature still decides).
        if (problems.length > 0) Object.assign(row, fail(label, problems.join('; ')));
        else if (time !== undefined)
          Object.assign(row, ok(label, time !== null && time < 8.64e12 ? [`Cosigned at ${blockTimeIso(time)}`] : []));
        else
          Object.assign(
            row,
            info(
              label,
              "not checked: this browser's Web Crypto has no Ed25519 (`timeseal verify` and the site check it)",
            ),
          );
      }
      const n = verdict.cosigned.length;
      Object.assign(
        summary,
        info(
          'Witnesses',
          `${n} of the ${policy.witnesses.length} witnesses of the policy cosigned this checkpoint (quorum ${describeQuorum(policy)}${verdict.met ? ', met' : ', not met yet: cosignatures are added within hours of publication'})`,
          [`Policy from ${source}`],
        ),
      );
    }),
  );
  return found.cosigned.length + found.problems.length;
}

/** An Ed25519 signature checked with Web Crypto: undefined when this browser's Web Crypto has no Ed25519. */
async function ed25519Verify(
  publicKey: Uint8Array,
  signature: Uint8Array,
  message: Uint8Array,
): Promise<boolean | undefined> {
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
function ed25519Row(
  ctx: Context,
  label: string,
  publicKey: Uint8Array,
  signature: Uint8Array,
  message: Uint8Array,
): Check {
  const row = pending(label, 'checking…');
  ctx.later.push(
    ed25519Verify(publicKey, signature, message).then((good) =>
      Object.assign(
        row,
        good === undefined
          ? info(
              label,
              "not checked: this browser's Web Crypto has no Ed25519 (`timeseal verify` and the site check it)",
            )
          : good
            ? ok(label)
            : fail(label, 'the Ed25519 signature does not verify'),
      ),
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
  return [
    info(
      'Other checkpoint lines',
      `${others} more signature line${others === 1 ? '' : 's'} (Ed25519, witnesses, or keys not given to this page) not checked here: \`timeseal verify\` and the site's search check them`,
    ),
  ];
}

export function checkpointSection(ctx: Context, input: ClassifiedInput): Section {
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
