// Witness cosignatures (docs/FORMAT.md §4b; docs/OPERATIONS.md "Witnesses"; c2sp.org/tlog-witness): after a
// build, the latest published checkpoint is sent to each configured witness with a consistency proof from the
// last tree size that witness cosigned (`add-checkpoint`); every cosignature line that comes back is verified
// against that witness's vkey and that exact checkpoint before it is published in `YYYY-MM-DD.cosignatures`,
// and the latest `checkpoint` becomes the day's checkpoint followed by those lines. A witness that is down
// delays nothing: the day is already published; the hourly step asks again until the quorum has cosigned.
//
// Settings: TIMESEAL_WITNESSES = comma-separated `<vkey> <submission URL prefix>`; TIMESEAL_WITNESS_QUORUM = how
// many must cosign (default: all). The policy is published as `keys/witnesses` in the c2sp.org/tlog-policy format
// (core/witness-policy.ts: the log's Ed25519 vkey, one `witness` line each, a flat group and the quorum) so that
// readers know whom to count. A witness removed from the settings (retired, or rotated to a new key) is recorded
// with the date in `keys/witnesses.retired` (`retired YYYY-MM-DD <vkey>` lines): its cosignatures of past days
// stay published and are still checked with that key, and a line from a key in neither file is ignored, never
// fatal (core/witness-policy.ts says why). State: `<database folder>/witness-state.json`, the size each witness
// last cosigned (a 409 from the witness corrects it). The schedule's runs (WitnessContext.schedule) give a witness
// that failed a backoff for that day's checkpoint (pipeline/anchor/backoff.ts; records in
// `<database folder>/witness-retry.json`); a new day's checkpoint is asked at once. By hand, every witness is asked.
import fs from 'node:fs';
import path from 'node:path';
import {
  CHECKPOINT_PATH,
  cosignaturesPath,
  dayCheckpointPath,
  withCosignatures,
  type DayRecord,
} from '../core/archive.ts';
import { parseCheckpoint } from '../core/checkpoint.ts';
import {
  NOTE_TYPE_ED25519_COSIGNATURE,
  NOTE_TYPE_MLDSA44_COSIGNATURE,
  parseVkey,
  readTimestamp,
  vkeyVerifier,
  type Vkey,
} from '../core/cosignature.ts';
import {
  describeQuorum,
  encodeWitnessPolicy as encodePolicy,
  judgeCheckpoint,
  parseWitnessPolicy,
  readWitnessPolicy,
  type CosignatureVerdict,
  type WitnessPolicy,
} from '../core/witness-policy.ts';
import { concatBytes, fromUtf8, toBase64, utf8 } from '../core/encoding.ts';
import { consistencyProof } from '../core/merkle.ts';
import { parseNote, type NoteVerifier } from '../core/note.ts';
import { tileHashReader, tilePath } from '../core/tiles.ts';
import type { Clock } from '../runtime/clock.ts';
import { UsageError, type Config } from '../runtime/config.ts';
import { nodeSha256 } from '../runtime/node-hash.ts';
import { setting } from '../runtime/settings.ts';
import type { ArchiveReader } from './archive-reader.ts';
import { RetryBook, stateDir, type ScheduledRun } from './anchor/backoff.ts';
import { readState } from './archive-state.ts';
import { readOptional, writeMutable } from './files.ts';
import { boundedFetch, NetworkError, type BoundedResponse } from './http.ts';
import { withLock } from './lock.ts';

export const WITNESS_POLICY_FILE = 'witnesses';
/** Witnesses no longer in the policy, with the date they left: `retired YYYY-MM-DD <vkey>` a line. */
export const RETIRED_WITNESSES_FILE = 'witnesses.retired';
/** The log's own Ed25519 vkey (runtime/keys.ts), named by the policy's `log` line when published. */
const LOG_VKEY_FILE = 'ed25519.vkey';
export const WITNESS_STATE_FILE = 'witness-state.json';
/** The most a witness's answer may be: its cosignature lines (c2sp.org/tlog-witness), a few hundred bytes to a
 * few KB with ML-DSA-44, or a short error text. */
const MAX_WITNESS_ANSWER = 64 * 1024;

export interface Witness {
  vkey: Vkey;
  /** The vkey as configured (published in keys/witnesses). */
  text: string;
  /** Submission URL prefix; `add-checkpoint` is appended. */
  url: string;
  verifier: NoteVerifier;
}

export interface WitnessConfig {
  witnesses: Witness[];
  quorum: number;
  timeoutMs: number;
}

/** TIMESEAL_WITNESSES and TIMESEAL_WITNESS_QUORUM; an empty list means no witnesses. Bad values name the setting. */
export function loadWitnessConfig(env: NodeJS.ProcessEnv = process.env): WitnessConfig {
  const witnesses: Witness[] = [];
  for (const entry of setting(env, 'TIMESEAL_WITNESSES') ?? []) {
    const parts = entry.trim().split(/\s+/);
    if (parts.length !== 2)
      throw new UsageError(`TIMESEAL_WITNESSES: each entry is "<vkey> <URL>", got ${JSON.stringify(entry.trim())}`);
    const [text, url] = parts as [string, string];
    let vkey: Vkey;
    try {
      vkey = parseVkey(text);
    } catch (err) {
      throw new UsageError(`TIMESEAL_WITNESSES: ${(err as Error).message} (${text.slice(0, 40)}…)`);
    }
    if (vkey.type !== NOTE_TYPE_MLDSA44_COSIGNATURE && vkey.type !== NOTE_TYPE_ED25519_COSIGNATURE) {
      throw new UsageError(
        `TIMESEAL_WITNESSES: ${vkey.name} is not a cosigner key (type 0x04 Ed25519 or 0x06 ML-DSA-44)`,
      );
    }
    if (!/^https?:\/\/[^\s/]+/.test(url))
      throw new UsageError(`TIMESEAL_WITNESSES: ${vkey.name}'s URL must start with http:// or https://, got ${url}`);
    if (witnesses.some((w) => w.vkey.name === vkey.name && w.vkey.keyId === vkey.keyId))
      throw new UsageError(`TIMESEAL_WITNESSES names ${vkey.name} twice`);
    witnesses.push({ vkey, text, url: url.replace(/\/+$/, ''), verifier: vkeyVerifier(vkey) });
  }
  const quorum = setting(env, 'TIMESEAL_WITNESS_QUORUM') ?? witnesses.length;
  if (quorum > Math.max(1, witnesses.length)) {
    throw new UsageError(
      `TIMESEAL_WITNESS_QUORUM must be a whole number from 1 to the ${witnesses.length} witnesses of TIMESEAL_WITNESSES, got ${JSON.stringify(String(quorum))}`,
    );
  }
  const timeout = setting(env, 'TIMESEAL_WITNESS_TIMEOUT_MS');
  return { witnesses, quorum, timeoutMs: timeout };
}

/** keys/witnesses in the tlog-policy format: the log's vkey (when given), the witnesses with their URLs, the quorum. */
export function encodeWitnessPolicy(config: WitnessConfig, logVkey?: string): string {
  return encodePolicy({
    ...(logVkey === undefined ? {} : { log: logVkey }),
    witnesses: config.witnesses.map((w) => ({ text: w.text, url: w.url })),
    threshold: config.quorum,
  });
}

/** The vkeys of keys/witnesses.retired (empty without the file); a malformed line throws naming it. */
export function parseRetiredWitnesses(text: string | undefined): Array<{ date: string; vkey: Vkey; text: string }> {
  if (text === undefined) return [];
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line, i) => {
      const m = /^retired (\d{4}-\d{2}-\d{2}) (\S+)$/.exec(line.trim());
      if (m === null) throw new Error(`line ${i + 1} is not "retired YYYY-MM-DD <vkey>"`);
      return { date: m[1]!, vkey: parseVkey(m[2]!), text: m[2]! };
    });
}

/** Signature lines of a `.cosignatures` file (text of `— name base64` lines, each ending in a newline). */
function cosignatureLines(text: string): string[] {
  if (text === '') return [];
  if (!text.endsWith('\n')) throw new Error('does not end in a newline');
  return text.slice(0, -1).split('\n');
}

/**
 * The witnesses of keys/witnesses.retired added to a policy as witnesses of no group: their lines of past days
 * are still checked with the key of their time, and count for no quorum. A key still in the policy is not
 * added twice.
 */
export function withRetiredWitnesses(
  policy: WitnessPolicy,
  retired: ReturnType<typeof parseRetiredWitnesses>,
): WitnessPolicy {
  const extra = retired
    .filter((r) => !policy.witnesses.some((w) => w.text === r.text))
    .map((r, i) => ({ name: `${r.vkey.name} (retired ${r.date}, #${i + 1})`, vkey: r.vkey, text: r.text }));
  return { ...policy, witnesses: [...policy.witnesses, ...extra] };
}

/**
 * The judgement of a day's cosignatures (core/witness-policy.ts judgeCheckpoint): the day's checkpoint, whose own
 * lines are the log's and left alone, with the lines of its `.cosignatures` file, each witness's checked with
 * its vkey. Throws when the lines are not signature lines.
 */
export function judgeDay(checkpoint: Uint8Array, cosignatures: string, policy: WitnessPolicy): CosignatureVerdict {
  return judgeCheckpoint(policy, checkpoint, cosignatures, (w, text, signature) =>
    vkeyVerifier(w.vkey).verify(text, signature),
  );
}

/**
 * For `timeseal verify`: every day's cosignatures, judged with the witness policy (keys/witnesses, in either
 * published form) and the retired witnesses (keys/witnesses.retired): a day is judged with the keys of its time,
 * whoever the witnesses are today. A line of a known witness that does not verify, or a witness's second line, is
 * a problem; lines from other keys are counted in a note, and so is a latest day whose quorum is not met yet (the
 * hourly cosigning step is still asking). Returns each judged day's verdict too.
 */
export async function checkCosignatures(
  reader: ArchiveReader,
  policyText: string | undefined,
  days: readonly DayRecord[],
  retiredText?: string,
): Promise<{
  problems: string[];
  checked: number;
  notes: string[];
  verdicts: Array<{ date: string; verdict: CosignatureVerdict }>;
}> {
  const problems: string[] = [];
  const notes: string[] = [];
  const verdicts: Array<{ date: string; verdict: CosignatureVerdict }> = [];
  let checked = 0;
  let policy: WitnessPolicy | undefined;
  if (policyText !== undefined) {
    try {
      policy = readWitnessPolicy(policyText);
    } catch (err) {
      problems.push(`keys/${WITNESS_POLICY_FILE}: ${(err as Error).message}`);
    }
  }
  let known: WitnessPolicy = { logs: [], witnesses: [], groups: [], quorum: 'none' };
  try {
    known = withRetiredWitnesses(policy ?? known, parseRetiredWitnesses(retiredText));
  } catch (err) {
    problems.push(`keys/${RETIRED_WITNESSES_FILE}: ${(err as Error).message}`);
    if (policy !== undefined) known = policy;
  }
  let unknown = 0;
  for (const day of days) {
    const rel = cosignaturesPath(day.date);
    const bytes = await reader.read(rel);
    if (bytes === undefined && (policy === undefined || day !== days.at(-1))) continue;
    if (bytes !== undefined) checked++;
    const checkpoint = await reader.read(dayCheckpointPath(day.date));
    try {
      if (checkpoint === undefined) throw new Error(`${dayCheckpointPath(day.date)} is missing`);
      const verdict = judgeDay(checkpoint, bytes === undefined ? '' : fromUtf8(bytes, rel), known);
      verdicts.push({ date: day.date, verdict });
      unknown += verdict.ignored.filter((i) => i.reason === 'unknown key').length;
      for (const p of verdict.problems) problems.push(`${rel}: ${p.reason}`);
    } catch (err) {
      problems.push(`${bytes === undefined ? dayCheckpointPath(day.date) : rel}: ${(err as Error).message}`);
    }
  }
  if (unknown > 0)
    notes.push(
      `${unknown} cosignature line${unknown === 1 ? '' : 's'} from keys in neither keys/${WITNESS_POLICY_FILE} nor keys/${RETIRED_WITNESSES_FILE}, not checked`,
    );
  const latest = verdicts.at(-1);
  if (policy !== undefined && latest !== undefined && latest.date === days.at(-1)?.date && !latest.verdict.met) {
    const names = latest.verdict.cosigned.map((c) => c.witness).join(', ') || 'none';
    notes.push(
      `${latest.date}: the witness policy's quorum (${describeQuorum(policy)}) is not met yet (cosigned by: ${names}); the hourly cosigning step asks again`,
    );
  }
  return { problems, checked, notes, verdicts };
}

export interface WitnessContext {
  config: Config;
  witness: WitnessConfig;
  clock: Clock;
  progress?: (message: string) => void;
  /** Set by the schedule: a witness that failed waits out the backoff of pipeline/anchor/backoff.ts. */
  schedule?: ScheduledRun;
}

/** The schedule's retry records of cosigning, by day and witness (`YYYY-MM-DD name+keyid`). */
export const WITNESS_RETRY_FILE = 'witness-retry.json';

export function witnessContextOf(
  c: { config: Config; clock: Clock; progress(message: string): void },
  env: NodeJS.ProcessEnv = process.env,
): WitnessContext {
  return { config: c.config, witness: loadWitnessConfig(env), clock: c.clock, progress: c.progress };
}

export interface CosignReport {
  date: string | null;
  treeSize: number;
  quorum: number;
  /** Witnesses whose verified cosignature of that checkpoint is published. */
  cosigned: string[];
  failures: Array<{ witness: string; reason: string }>;
  met: boolean;
}

type StateFile = Record<string, number>;

const keyOf = (w: Witness): string => `${w.vkey.name}+${w.vkey.keyId.toString(16).padStart(8, '0')}`;

function statePath(config: Config): string {
  return path.join(path.dirname(path.resolve(config.db)), WITNESS_STATE_FILE);
}

function readStateFile(config: Config): StateFile {
  try {
    const value = JSON.parse(fs.readFileSync(statePath(config), 'utf8')) as unknown;
    return value !== null && typeof value === 'object' ? (value as StateFile) : {};
  } catch {
    return {};
  }
}

const archiveLockOf = (config: Config): string => path.join(path.dirname(path.resolve(config.db)), 'archive.lock');

/**
 * Asks every configured witness that has not yet cosigned the latest published checkpoint, publishes the
 * verified cosignatures, and says whether the quorum is met. With no witnesses configured: nothing to do.
 */
export async function cosignLatest(ctx: WitnessContext): Promise<CosignReport> {
  const { config, witness } = ctx;
  const archive = config.archive;
  const state = readState(archive, config.logOrigin);
  const last = state.days.at(-1);
  const report: CosignReport = {
    date: last?.date ?? null,
    treeSize: last?.treeSize ?? 0,
    quorum: witness.quorum,
    cosigned: [],
    failures: [],
    met: false,
  };
  if (witness.witnesses.length === 0) return { ...report, met: true };
  const policy = publishPolicy(config, witness, ctx.clock().toISOString().slice(0, 10));
  if (!last) return report;
  const checkpoint = readOptional(archive, dayCheckpointPath(last.date));
  if (checkpoint === undefined) throw new UsageError(`${dayCheckpointPath(last.date)} is missing`);
  // The day's lines judged with the policy just published (the same judgement as every reader's); the policy
  // lists the configured witnesses in their order, so the i-th witness of the policy is witness.witnesses[i].
  const judged = (text: string): Set<Witness> => {
    const verdict = judgeDay(checkpoint, text, policy);
    if (verdict.problems.length > 0)
      throw new Error(`${cosignaturesPath(last.date)}: ${verdict.problems.map((p) => p.reason).join('; ')}`);
    return new Set(
      verdict.cosigned.map((c) => witness.witnesses[policy.witnesses.findIndex((w) => w.name === c.witness)]!),
    );
  };
  const existing = fromUtf8(readOptional(archive, cosignaturesPath(last.date)) ?? new Uint8Array(0));
  const already = judged(existing);
  const states = readStateFile(config);
  const fresh: string[] = [];
  const book = ctx.schedule ? new RetryBook(path.join(stateDir(config), WITNESS_RETRY_FILE)) : undefined;
  const at = ctx.schedule?.now();
  await Promise.all(
    witness.witnesses.map(async (w) => {
      if (already.has(w)) return;
      const key = `${last.date} ${keyOf(w)}`;
      if (book && at && !book.due(key, at)) {
        const e = book.get(key)!;
        report.failures.push({
          witness: w.vkey.name,
          reason: `not asked: ${e.failures} failure${e.failures === 1 ? '' : 's'} (${e.reason}); next attempt at ${e.next}`,
        });
        return;
      }
      try {
        const line = await askWitness(ctx, w, checkpoint, last, states);
        fresh.push(line);
        states[keyOf(w)] = last.treeSize;
        book?.succeeded(key);
      } catch (err) {
        const reason = (err as Error).message;
        report.failures.push({ witness: w.vkey.name, reason });
        if (book && at && ctx.schedule) {
          const next = book.failed(key, reason, at);
          ctx.schedule.warn(
            {
              date: last.date,
              witness: w.vkey.name,
              failures: book.get(key)!.failures,
              retry_at: next.toISOString(),
              reason,
            },
            `cosigning delayed: ${last.date}: ${w.vkey.name}: ${reason}, retrying at ${next.toISOString()}`,
          );
        }
      }
    }),
  );
  if (book) {
    book.retain((key) => key.startsWith(`${last.date} `));
    book.save();
  }
  if (fresh.length > 0) {
    withLock(archiveLockOf(config), () => {
      // Merged with what is on disk now, sorted by name and key id, one line per witness.
      const onDisk = fromUtf8(readOptional(archive, cosignaturesPath(last.date)) ?? new Uint8Array(0));
      const lines = [...new Set([...cosignatureLines(onDisk), ...fresh])].sort();
      const text = lines.map((l) => `${l}\n`).join('');
      judged(text);
      writeMutable(archive, cosignaturesPath(last.date), text);
      const now = readState(archive, config.logOrigin).days.at(-1);
      if (now?.date === last.date) writeMutable(archive, CHECKPOINT_PATH, withCosignatures(checkpoint, utf8(text)));
    });
    fs.mkdirSync(path.dirname(statePath(config)), { recursive: true });
    fs.writeFileSync(`${statePath(config)}.tmp`, `${JSON.stringify(states)}\n`);
    fs.renameSync(`${statePath(config)}.tmp`, statePath(config));
  }
  const final = fromUtf8(readOptional(archive, cosignaturesPath(last.date)) ?? new Uint8Array(0));
  const signed = judged(final);
  report.cosigned = witness.witnesses.filter((w) => signed.has(w)).map((w) => w.vkey.name);
  report.met = judgeDay(checkpoint, final, policy).met;
  ctx.progress?.(
    `${last.date}: ${report.cosigned.length} of ${witness.witnesses.length} witnesses cosigned (${witness.quorum} required)`,
  );
  return report;
}

const readKeyFile = (config: Config, name: string): string | undefined => {
  try {
    return fs.readFileSync(path.join(config.keys, name), 'utf8');
  } catch {
    return undefined;
  }
};

const writeKeyFile = (config: Config, name: string, text: string): void => {
  const file = path.join(config.keys, name);
  fs.mkdirSync(config.keys, { recursive: true });
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
};

/**
 * Publishes keys/witnesses for the configured witnesses; a witness of the policy published before that is no
 * longer configured (by its exact vkey) is appended to keys/witnesses.retired with today's date, first. Returns
 * the policy as readers read it.
 */
function publishPolicy(config: Config, witness: WitnessConfig, today: string): WitnessPolicy {
  const logVkey = readKeyFile(config, LOG_VKEY_FILE)?.trim();
  const text = encodeWitnessPolicy(witness, logVkey);
  const policy = parseWitnessPolicy(text);
  const current = readKeyFile(config, WITNESS_POLICY_FILE);
  if (current === text) return policy;
  if (current !== undefined) {
    let before: string[] = [];
    try {
      before = readWitnessPolicy(current).witnesses.map((w) => w.text);
    } catch {
      // An unreadable policy names nobody to keep; the new one replaces it.
    }
    const retiredText = readKeyFile(config, RETIRED_WITNESSES_FILE) ?? '';
    const known = new Set(parseRetiredWitnesses(retiredText).map((r) => r.text));
    const gone = before.filter((t) => !witness.witnesses.some((w) => w.text === t) && !known.has(t));
    if (gone.length > 0)
      writeKeyFile(
        config,
        RETIRED_WITNESSES_FILE,
        `${retiredText}${gone.map((t) => `retired ${today} ${t}\n`).join('')}`,
      );
  }
  writeKeyFile(config, WITNESS_POLICY_FILE, text);
  return policy;
}

/**
 * One add-checkpoint exchange (and, on 409, one more from the size the witness names): returns the witness's
 * verified cosignature line of `checkpoint`, or throws with the reason.
 */
async function askWitness(
  ctx: WitnessContext,
  w: Witness,
  checkpoint: Uint8Array,
  day: DayRecord,
  states: StateFile,
): Promise<string> {
  const size = day.treeSize;
  let old = Math.min(states[keyOf(w)] ?? 0, size);
  for (let attempt = 0; ; attempt++) {
    const body = concatBytes(utf8(requestHead(ctx.config.archive, old, size)), checkpoint);
    const url = `${w.url}/add-checkpoint`;
    let res: BoundedResponse;
    try {
      res = await boundedFetch(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        timeoutMs: ctx.witness.timeoutMs,
        maxBytes: MAX_WITNESS_ANSWER,
      });
    } catch (err) {
      if (err instanceof NetworkError && err.reason === 'unreachable')
        throw new Error(`${url}: no answer (${err.detail})`);
      throw err;
    }
    const text = new TextDecoder().decode(res.body);
    if (res.status === 409 && attempt === 0) {
      const theirs = /^(0|[1-9]\d*)\n$/.exec(text);
      if (theirs === null) throw new Error(`409 without a tree size (${JSON.stringify(text.slice(0, 80))})`);
      const seen = Number(theirs[1]);
      if (seen > size)
        throw new Error(
          `the witness has cosigned tree size ${seen}, larger than this log's ${size}: a fork or a rollback; nothing published`,
        );
      old = seen;
      continue;
    }
    if (res.status !== 200)
      throw new Error(`HTTP ${res.status} from ${url}: ${text.trim().slice(0, 200) || res.statusText}`);
    // Witnesses stamp with their real clocks: compared with this machine's real clock, not TIMESEAL_NOW.
    return verifiedLine(w, checkpoint, text, Date.now());
  }
}

/** `old N`, the consistency proof from N to `size` (one base64 hash a line), and the blank line. */
function requestHead(archive: string, old: number, size: number): string {
  let proof: Uint8Array[] = [];
  if (old > 0 && old < size) {
    const readTile = (level: number, index: number, width: number): Uint8Array => {
      const data = readOptional(archive, tilePath(level, index, width));
      if (data === undefined) throw new Error(`tile ${tilePath(level, index, width)} is missing`);
      return data;
    };
    proof = consistencyProof(old, size, tileHashReader(size, readTile, nodeSha256), nodeSha256);
  }
  return `old ${old}\n${proof.map((h) => `${toBase64(h)}\n`).join('')}\n`;
}

/** The one line of `w` in a witness's answer that cosigns exactly `checkpoint`. */
/** How far past this machine's clock a witness's cosignature time may be (clocks differ; a day is generous). */
export const COSIGNATURE_FUTURE_SECONDS = 86_400;

/** Why a cosignature's timestamp (seconds) cannot be right at `nowMs`, or null: at most a day ahead is accepted. */
export function futureCosignature(signature: Uint8Array, nowMs: number): string | null {
  const time = readTimestamp(signature);
  if (time === null) return 'its timestamp is beyond any date';
  return time > nowMs / 1000 + COSIGNATURE_FUTURE_SECONDS
    ? `its timestamp ${time} is more than a day in the future`
    : null;
}

function verifiedLine(w: Witness, checkpoint: Uint8Array, answer: string, nowMs: number): string {
  if (!answer.endsWith('\n')) throw new Error('the answer is not signature lines');
  const text = parseNote(checkpoint).text;
  let parsed;
  try {
    parsed = parseNote(`${text}\n${answer}`);
  } catch (err) {
    throw new Error(`the answer is not signature lines: ${(err as Error).message}`);
  }
  const lines = answer.slice(0, -1).split('\n');
  for (const [i, sig] of parsed.signatures.entries()) {
    if (sig.name !== w.vkey.name || sig.keyId !== w.verifier.keyId) continue;
    if (!w.verifier.verify(utf8(text), sig.signature))
      throw new Error(
        `its ${w.verifier.algorithm} line does not verify against this checkpoint (tree size ${parseCheckpoint(text).size}); not published`,
      );
    const future = futureCosignature(sig.signature, nowMs);
    if (future !== null) throw new Error(`its line is signed, but ${future}; not published`);
    return lines[i]!;
  }
  throw new Error(
    `no line from ${w.vkey.name} (key id ${w.verifier.keyId.toString(16).padStart(8, '0')}) in the answer`,
  );
}
