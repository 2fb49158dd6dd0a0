// Witness policies (c2sp.org/tlog-policy): which logs sign a checkpoint, which witnesses may cosign it, and the
// quorum that makes a checkpoint witnessed. One parser and one judgement for every reader: the cosigning step
// (pipeline/witness.ts), `timeseal verify`, the site's verified search, the offline verifier and the client.
//
// The format, from the specification: lines of `log <vkey> [<url>]`, `witness <name> <vkey> [<url>]`,
// `group <name> all|any|<k> <name>...` and exactly one `quorum <name>` (`none`: no cosignature required);
// items separated by spaces and tabs; empty and `#` comment lines ignored; a group or the quorum names only
// witnesses and groups defined on earlier lines, each member at most once, 1 <= k <= n; names (witnesses and
// groups share them) are unique, `none` is no member; two logs or two witnesses with the same public key are
// refused. Only tab, newline, 0x20-0x7E and bytes >= 0x80 may appear.
//
// Timeseal published an older form before (`quorum <N>`, then one vkey a line): readWitnessPolicy still reads
// it, as a flat group of those witnesses named by their key names with threshold N.
//
// What every reader does with a checkpoint's signature lines (judgeCheckpoint): the log's own lines are left to
// the reader (it checks them with the log's keys); a line of a policy witness must verify, once (a bad or second
// one is a problem: someone published a false line under a known witness's name, and the cosignatures are
// refused); a line from any other key is ignored and named, never fatal (a retired witness, or one the reader
// does not know); the groups and the quorum are then judged on the witnesses whose lines verified. Readers differ
// only in what they show (one row per witness for people, a count) and in what they pass: the cosigning step and
// `timeseal verify` a day's checkpoint with its `.cosignatures` lines, the others the latest checkpoint or a
// bundle's, which carry the log's lines and the witnesses' in one note.
import { FormatError } from './errors.ts';
import {
  NOTE_TYPE_ED25519_COSIGNATURE,
  NOTE_TYPE_MLDSA44_COSIGNATURE,
  parseVkey,
  readTimestamp,
  type Vkey,
} from './cosignature.ts';
import { equalBytes, fromUtf8, utf8 } from './encoding.ts';
import { parseNote } from './note.ts';

export interface PolicyWitness {
  name: string;
  vkey: Vkey;
  /** The vkey as written. */
  text: string;
  url?: string;
}

export interface PolicyGroup {
  name: string;
  threshold: number;
  members: string[];
}

export interface WitnessPolicy {
  logs: Array<{ vkey: Vkey; text: string; url?: string }>;
  witnesses: PolicyWitness[];
  groups: PolicyGroup[];
  /** A witness's or group's name, or 'none'. */
  quorum: string;
}

/**
 * Timeseal's older `quorum <N>` form (then one vkey a line), published before the tlog-policy format: rewritten
 * as that format — a flat group named `witnesses` of witnesses named by their key names (#2, #3… for repeats) —
 * and parsed. Other texts are parsed as they are. For readers of archives made before the change (timeseal
 * verify, the cosigning step reading what it published).
 */
export function readWitnessPolicy(text: string): WitnessPolicy {
  const older = /^\s*quorum ([1-9]\d*)\n([^]*)$/.exec(text);
  if (older === null) return parseWitnessPolicy(text);
  const keys = older[2]!
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const names = keys.map(
    (k, i) =>
      `${k.split('+')[0]}${keys.slice(0, i).some((o) => o.split('+')[0] === k.split('+')[0]) ? `#${i + 1}` : ''}`,
  );
  return parseWitnessPolicy(
    `${keys.map((k, i) => `witness ${names[i]} ${k}`).join('\n')}\ngroup witnesses ${older[1]} ${names.join(' ')}\nquorum witnesses\n`,
  );
}

/** Strict parse of a policy in the tlog-policy format. Kept small: the offline verifier carries it within its
 * size budget. */
export function parseWitnessPolicy(text: string): WitnessPolicy {
  const p: WitnessPolicy = { logs: [], witnesses: [], groups: [], quorum: '' };
  const names = new Set<string>();
  text.split('\n').forEach((raw, i) => {
    const [keyword, ...a] = raw.split(/[ \t]+/).filter(Boolean);
    if (keyword === undefined || keyword.startsWith('#')) return;
    const bad = (why: string): never => {
      throw new FormatError('witness policy', `line ${i + 1}: ${why}`);
    };
    if (/[\x00-\x08\x0b-\x1f\x7f]/.test(raw)) bad('control character');
    const key = (t: string): Vkey => {
      let v: Vkey | undefined;
      try {
        v = parseVkey(t);
      } catch (err) {
        bad((err as Error).message);
      }
      if ([...p.logs, ...p.witnesses].some((x) => equalBytes(x.vkey.publicKey, v!.publicKey))) bad('duplicate key');
      return v!;
    };
    const fresh = (name: string): void => {
      if (name === 'none' || names.has(name)) bad(`${name} taken`);
      names.add(name);
    };
    if (keyword === 'log' && a.length > 0 && a.length < 3) p.logs.push({ vkey: key(a[0]!), text: a[0]!, url: a[1] });
    else if (keyword === 'witness' && a.length > 1 && a.length < 4) {
      const vkey = key(a[1]!);
      fresh(a[0]!);
      p.witnesses.push({ name: a[0]!, vkey, text: a[1]!, url: a[2] });
    } else if (keyword === 'group' && a.length > 2) {
      const [name, k, ...members] = a as [string, string, ...string[]];
      members.forEach((m, j) => (names.has(m) && members.indexOf(m) === j) || bad(`member ${m}`));
      const threshold = k === 'all' ? members.length : k === 'any' ? 1 : /^[1-9]\d*$/.test(k) ? Number(k) : 0;
      if (threshold < 1 || threshold > members.length) bad(`threshold ${k}`);
      fresh(name);
      p.groups.push({ name, threshold, members });
    } else if (keyword === 'quorum' && a.length === 1 && p.quorum === '' && (a[0] === 'none' || names.has(a[0]!)))
      p.quorum = a[0]!;
    else bad('bad line');
  });
  if (p.quorum === '') throw new FormatError('witness policy', 'no quorum');
  return p;
}

/** What a policy writer gives: the log's vkey (if any), the witnesses with their URLs, and how many must cosign. */
export interface PolicySettings {
  log?: string;
  witnesses: Array<{ text: string; url?: string }>;
  threshold: number;
}

/**
 * The tlog-policy text Timeseal publishes as keys/witnesses: the log's line, one witness line each (named by its
 * key name, made unique with #2, #3… when two share one), and a quorum over one flat group.
 */
export function encodeWitnessPolicy(
  settings: PolicySettings,
  comment = "Timeseal's witness policy (c2sp.org/tlog-policy)",
): string {
  const out = [`# ${comment}`];
  if (settings.log !== undefined) out.push(`log ${settings.log}`);
  const names: string[] = [];
  for (const w of settings.witnesses) {
    const base = parseVkey(w.text).name;
    let name = base;
    for (let i = 2; names.includes(name) || name === 'none' || name === 'witnesses'; i++) name = `${base}#${i}`;
    names.push(name);
    out.push(`witness ${name} ${w.text}${w.url ? ` ${w.url}` : ''}`);
  }
  if (names.length === 0) out.push('quorum none');
  else {
    out.push(`group witnesses ${settings.threshold === names.length ? 'all' : settings.threshold} ${names.join(' ')}`);
    out.push('quorum witnesses');
  }
  return `${out.join('\n')}\n`;
}

/** Whether the named witnesses' cosignatures satisfy the policy's quorum. */
export function quorumMet(policy: WitnessPolicy, cosigned: ReadonlySet<string>): boolean {
  const groups = new Map(policy.groups.map((g) => [g.name, g]));
  const met = (name: string): boolean => {
    const g = groups.get(name);
    if (g === undefined) return cosigned.has(name);
    return g.members.filter(met).length >= g.threshold;
  };
  return policy.quorum === 'none' || met(policy.quorum);
}

/**
 * Checks one line of a policy witness against the checkpoint text (the note's text bytes): true or false, or
 * undefined when this reader cannot check that witness's algorithm (the offline page in a browser whose Web
 * Crypto lacks Ed25519). Each reader passes its own verifier so that core/ pulls in no signature code a reader
 * does not carry; `vkeyVerifier(witness.vkey).verify(text, signature)` (core/cosignature.ts) is the usual one.
 */
export type CosignatureCheck = (witness: PolicyWitness, text: Uint8Array, signature: Uint8Array) => boolean | undefined;

/** Why a signature line was not counted for any witness. */
export type IgnoredReason =
  /** The log's own line (named as the checkpoint's origin, or a `log` key of the policy): each reader checks
   *  those with the log's keys; they are not cosignatures. */
  | 'log'
  /** From a key the policy does not name (a retired witness, another log's, a witness's other key). */
  | 'unknown key'
  /** From a policy witness whose key is not a cosigner's (c2sp.org/tlog-cosignature: types 0x04, 0x06). */
  | 'not a cosigner key'
  /** This reader cannot check the witness's algorithm (CosignatureCheck answered undefined). */
  | 'not checked here';

export interface CosignatureVerdict {
  /** The policy's witnesses whose line verified, in the order of the lines, with the time each line states
   *  (seconds since 1970, as core/cosignature.ts readTimestamp reads it). */
  cosigned: Array<{ witness: string; time: number | null }>;
  /** Every group of the policy and whether the cosigned witnesses satisfy it. */
  groups: Array<{ name: string; met: boolean }>;
  /** Whether the cosigned witnesses satisfy the quorum (always true for `quorum none`). */
  met: boolean;
  /** Lines of the policy's witnesses that do not verify, or a witness's second line: someone published a false
   *  line under a known witness's name, and every reader refuses the checkpoint's cosignatures. */
  problems: Array<{ witness: string; reason: string }>;
  /** Lines not counted, and why. */
  ignored: Array<{ name: string; keyId: number; reason: IgnoredReason }>;
}

/** c2sp.org/tlog-cosignature: the signature types of cosigners (Ed25519 0x04, ML-DSA-44 0x06). */
const COSIGNER_TYPES: readonly number[] = [NOTE_TYPE_ED25519_COSIGNATURE, NOTE_TYPE_MLDSA44_COSIGNATURE];

/**
 * Judges a checkpoint's cosignatures against a witness policy; the one judgement every reader makes (the
 * cosigning step, `timeseal verify`, the site's search, the offline verifier, the client). `note` is the signed
 * checkpoint; `cosignatures`, when given, are signature lines kept apart from it (a day's `.cosignatures` file)
 * and are read as more lines of the note. Every line is taken in turn: the log's own lines are ignored (the
 * reader checks them with the log's keys); a line of a policy witness (its name and key ID) must verify under
 * `verify`, once (else a problem); a witness whose key is not a cosigner's counts for nothing; any other line is
 * ignored, never fatal. The groups and the quorum are then judged on the witnesses whose line verified. Throws a
 * FormatError when the note or the lines are not signature lines (c2sp.org/signed-note).
 */
export function judgeCheckpoint(
  policy: WitnessPolicy,
  note: string | Uint8Array,
  cosignatures: string | Uint8Array | undefined,
  verify: CosignatureCheck,
): CosignatureVerdict {
  const { text, signatures } = parseNote(note);
  const extra =
    cosignatures === undefined
      ? ''
      : typeof cosignatures === 'string'
        ? cosignatures
        : fromUtf8(cosignatures, 'cosignature lines');
  const lines = extra === '' ? signatures : signatures.concat(parseNote(`${text}\n${extra}`).signatures);
  const origin = text.slice(0, text.indexOf('\n'));
  const bytes = utf8(text);
  const verdict: CosignatureVerdict = { cosigned: [], groups: [], met: false, problems: [], ignored: [] };
  const seen = new Set<string>();
  for (const line of lines) {
    const ignore = (reason: IgnoredReason) => verdict.ignored.push({ name: line.name, keyId: line.keyId, reason });
    const w = policy.witnesses.find((x) => x.vkey.name === line.name && x.vkey.keyId === line.keyId);
    if (w === undefined) {
      ignore(
        line.name === origin || policy.logs.some((l) => l.vkey.name === line.name && l.vkey.keyId === line.keyId)
          ? 'log'
          : 'unknown key',
      );
      continue;
    }
    if (!COSIGNER_TYPES.includes(w.vkey.type)) {
      ignore('not a cosigner key');
      continue;
    }
    if (seen.has(w.name)) {
      verdict.problems.push({ witness: w.name, reason: `${line.name} cosigned twice` });
      continue;
    }
    seen.add(w.name);
    const good = verify(w, bytes, line.signature);
    if (good === undefined) ignore('not checked here');
    else if (good) verdict.cosigned.push({ witness: w.name, time: readTimestamp(line.signature) });
    else
      verdict.problems.push({
        witness: w.name,
        reason: `the ${w.vkey.type === NOTE_TYPE_ED25519_COSIGNATURE ? 'Ed25519' : 'ML-DSA-44'} cosignature line of ${line.name} does not verify against the checkpoint`,
      });
  }
  const cosigned = new Set(verdict.cosigned.map((c) => c.witness));
  verdict.groups = policy.groups.map((g) => ({
    name: g.name,
    met: quorumMet({ ...policy, quorum: g.name }, cosigned),
  }));
  verdict.met = quorumMet(policy, cosigned);
  return verdict;
}

/**
 * The quorum in a few words, for readers that show it to people: `none`, a witness's name, the number that must
 * cosign for one group of witnesses (every policy Timeseal writes: `2`), else `group <name>`.
 */
export function describeQuorum(policy: WitnessPolicy): string {
  const g = policy.groups.find((x) => x.name === policy.quorum);
  if (g === undefined) return policy.quorum;
  return g.members.every((m) => policy.witnesses.some((w) => w.name === m)) ? String(g.threshold) : `group ${g.name}`;
}
