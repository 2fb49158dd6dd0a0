// Witness policies (c2sp.org/tlog-policy): which logs sign a checkpoint, which witnesses may cosign it, and the
// quorum that makes a checkpoint witnessed. One parser and one judgement for every reader: the cosigning step
// (pipeline/witness.ts), `timeseal verify`, the site's verified search and the offline verifier.
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
// What every reader does with a checkpoint's cosignature lines (judgeCosignatures): a line from a key of the
// policy must verify (a bad one is a problem: someone published a false line under a known witness's name); a
// line from any other key is ignored and counted, never fatal (a witness that was retired, or one a reader does
// not know); the quorum is then judged on the witnesses whose lines verified. The latest checkpoint also carries
// the log's own signature lines: those are not cosignatures, and a caller passes only the witnesses' lines or
// relies on them being ignored as unknown keys.
import { FormatError } from './errors.ts';
import { parseVkey, type Vkey } from './cosignature.ts';
import { equalBytes } from './encoding.ts';

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
  const keys = older[2]!.split('\n').map((l) => l.trim()).filter(Boolean);
  const names = keys.map((k, i) => `${k.split('+')[0]}${keys.slice(0, i).some((o) => o.split('+')[0] === k.split('+')[0]) ? `#${i + 1}` : ''}`);
  return parseWitnessPolicy(`${keys.map((k, i) => `witness ${names[i]} ${k}`).join('\n')}\ngroup witnesses ${older[1]} ${names.join(' ')}\nquorum witnesses\n`);
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
    } else if (keyword === 'quorum' && a.length === 1 && p.quorum === '' && (a[0] === 'none' || names.has(a[0]!))) p.quorum = a[0]!;
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
export function encodeWitnessPolicy(settings: PolicySettings, comment = "Timeseal's witness policy (c2sp.org/tlog-policy)"): string {
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
 * The policy as a reader that shows "k of n witnesses (q required)" takes it: the witnesses' vkeys and how many
 * must cosign, for a quorum of one witness or of one group of witnesses (every policy Timeseal writes); a quorum
 * of nested groups is refused with a message (such a reader cannot summarise it).
 */
export function flatWitnessPolicy(text: string): { quorum: number; witnesses: Vkey[] } {
  const policy = parseWitnessPolicy(text);
  const g = policy.groups.find((x) => x.name === policy.quorum);
  if (g && !g.members.every((m) => policy.witnesses.some((w) => w.name === m))) throw new FormatError('witness policy', 'nested groups');
  return { quorum: policy.quorum === 'none' ? 0 : (g?.threshold ?? 1), witnesses: policy.witnesses.map((w) => w.vkey) };
}

/** One signature line of a note, as core/note.ts parses it. */
export interface SignatureLine {
  name: string;
  keyId: number;
  signature: Uint8Array;
}

export interface Judgement {
  /** Names of the policy's witnesses whose line verified. */
  cosigned: string[];
  /** Lines from keys the policy does not name (ignored). */
  unknown: number;
  /** Lines from the policy's witnesses that do not verify, or repeat a witness. */
  problems: string[];
  met: boolean;
}

/**
 * Judges the cosignature lines of a checkpoint: `verify(witness, text, signature)` checks one line against the
 * checkpoint text (the caller's verifier for that witness's vkey). See the module comment.
 */
export function judgeCosignatures(policy: WitnessPolicy, lines: readonly SignatureLine[], verify: (witness: PolicyWitness, signature: Uint8Array) => boolean): Judgement {
  const cosigned: string[] = [];
  const problems: string[] = [];
  let unknown = 0;
  for (const line of lines) {
    const w = policy.witnesses.find((x) => x.vkey.name === line.name && x.vkey.keyId === line.keyId);
    if (w === undefined) {
      unknown++;
      continue;
    }
    if (cosigned.includes(w.name)) problems.push(`${line.name} cosigned twice`);
    else if (!verify(w, line.signature)) problems.push(`the line of ${line.name} does not verify against the checkpoint`);
    else cosigned.push(w.name);
  }
  return { cosigned, unknown, problems, met: quorumMet(policy, new Set(cosigned)) };
}
