// Completing proof files, online. For each proof not yet complete:
//   1. GET /api/proof/<hash>: the timeseal-proof/4 bundle once the day is published (404 before: asked once per
//      day and call, and the next check is the day's end, by the server's clock, read from its Date header: a
//      server whose clock was moved, `timeseal clock`, is followed). It is verified with the pinned keys before
//      anything is kept. A 404 once the day is over, for a day /ledgers/days.json lists as published, is a broken
//      promise: an error with code 'broken' (the server's word, not a proof of absence: nothing is kept).
//   2. The log's latest checkpoint (GET /ledgers/checkpoint), verified, must extend the latest this client saw
//      (an RFC 9162 consistency proof computed from the log's tiles, GET /ledgers/tile/…); the bundle's
//      checkpoint must extend to it too, and that proof is kept in the file so verify can show it offline.
//   3. Once the bundle's .ots has a Bitcoin attestation, the block header at its height, from an Esplora API
//      (GET <esplora>/block-height/<h>, GET <esplora>/block/<hash>/header), checked (proof of work, merkle
//      root) and kept, so verify needs no network.
// Every check is core/'s; a server that answers something that does not check is an error for that proof
// (code 'invalid', 'fork' or 'trust'), and nothing of it is kept. A few proofs are asked for at once
// (`concurrency`); what all of them share (a server's keys, its latest checkpoint, a tile, a block header) is
// fetched once per call.
import { verifyBitcoinAttestation } from '../../core/bitcoin.ts';
import type { ParsedCheckpoint } from '../../core/checkpoint.ts';
import { toHex } from '../../core/encoding.ts';
import { consistencyProof, verifyConsistency } from '../../core/merkle.ts';
import { parseNote } from '../../core/note.ts';
import { parseProofBundle, type ProofBundle } from '../../core/proof.ts';
import { parseCheckpoint } from '../../core/checkpoint.ts';
import { parseDays } from '../../core/archive.ts';
import { DAYS_PATH } from '../../core/archive-paths.ts';
import { tileHashReader, tilePath, tilesForConsistency } from '../../core/tiles.ts';
import { VerifyCache } from './cache.ts';
import { readBundleOts } from './checks.ts';
import { asClientError, throwIfAborted, TimesealClientError } from './errors.ts';
import { httpError, LIMITS, normalizeServer, request, retryAfterSeconds, type HttpOptions } from './http.ts';
import { bundleOf } from './bundle.ts';
import { mapInOrder } from './pool.ts';
import { stageOf } from './proof-file.ts';
import { loadKeys, type LoadedKeys } from './keys.ts';
import { forkError, learnWitnessPolicy, pinServer, rememberCheckpoint } from './trust.ts';
import type { BitcoinNetwork, HeaderRecord, ProofFile, ProofStage, TrustData } from './types.ts';

/** The Esplora API the block headers come from unless told otherwise (the offline verifier's default too). */
export const DEFAULT_HEADERS_FROM = 'https://blockstream.info/api';

export interface UpgradeOptions extends HttpOptions {
  /** The trust store: keys are pinned in it on first use, and the checkpoints seen are recorded. */
  trust: TrustData;
  /** Ask this server instead of the one each proof names. */
  server?: string;
  /** An Esplora API for block headers (default https://blockstream.info/api). */
  headersFrom?: string;
  /** The Bitcoin network whose proof-of-work limit the headers must meet (default mainnet). */
  network?: BitcoinNetwork;
  /** Servers whose keys the caller pinned or checked in this run (stamp does, before it upgrades): not asked again. */
  keysChecked?: readonly string[];
  /** Proofs asked for at once (default 8). */
  concurrency?: number;
  /** Called with each proof's result and its index in `proofs`, in that order, as soon as it and those before it are done (to write it at once). */
  onResult?: (result: UpgradeResult, index: number) => void | Promise<void>;
  now?: () => Date;
}

export interface UpgradeResult {
  hash: string;
  /** The proof file, updated (or as it was). */
  proof: ProofFile;
  changed: boolean;
  stage: ProofStage;
  /** Nothing is left to fetch: anchored in Bitcoin with its header, and the witness quorum met when required. */
  complete: boolean;
  /** Not before this time is asking again worth it (ISO time): the day's end by the server's clock, its Retry-After, an
   * hour for the Bitcoin anchor; null when complete, or when the next poll may ask at once. */
  nextCheck: string | null;
  /** How far the server's clock was ahead of ours (ms) at its answer (its Date header): a person compares the
   * next check with the server's times (a moved development clock, `timeseal clock`). Absent without an answer. */
  serverLead?: number;
  /** What happened, in short sentences. */
  notes: string[];
  /** What went wrong for this proof (nothing of it was kept). */
  error?: TimesealClientError;
}

interface ServerState {
  cache: VerifyCache;
  /** Block headers by height, each fetched once (a failed fetch is asked again by a later call). */
  headers: Map<number, Promise<HeaderRecord>>;
  keys: LoadedKeys;
  origin: string | null;
  latest: Promise<{ note: string; checkpoint: ParsedCheckpoint }> | null;
  /** Tiles by path: fetched (`tiles`) and being fetched (`tileFetches`). */
  tiles: Map<string, Uint8Array>;
  tileFetches: Map<string, Promise<void>>;
  notes: string[];
  /** Days asked about in this call: the server's clock's lead over ours (ms) when it said the day is not
   * published yet (404), null when it said something else; pending while the first proof of the day asks. */
  notYet: Map<string, Promise<number | null>>;
  /** The server asked for a witness policy it did not serve when pinned (once per call). */
  policyAsked: Promise<void> | null;
  /** The days its days.json lists as published, once asked (after a 404 past a day's publication time). */
  days: Promise<Set<string>> | null;
}

/** Upgrades each proof file; one proof's failure does not stop the others (see its `error`). */
export async function upgrade(proofs: readonly ProofFile[], options: UpgradeOptions): Promise<UpgradeResult[]> {
  const now = options.now ?? (() => new Date());
  const cache = new VerifyCache();
  const servers = new Map<string, Promise<ServerState>>();
  const stateOf = (server: string) => {
    let s = servers.get(server);
    if (s === undefined) {
      s = openServer(server, options, now(), cache);
      servers.set(server, s);
    }
    return s;
  };
  return mapInOrder(
    proofs,
    options.concurrency ?? 8,
    async (proof) => {
      throwIfAborted(options.signal);
      try {
        return (
          alreadyComplete(proof, options.trust, cache) ??
          (await upgradeOne(proof, await stateOf(normalizeServer(options.server ?? proof.server)), options, now))
        );
      } catch (err) {
        const error = asClientError(err, 'invalid');
        if (error.code === 'aborted' && options.signal?.aborted) throw error;
        return {
          hash: proof.hash,
          proof,
          changed: false,
          stage: stageOf(proof),
          complete: false,
          nextCheck: null,
          notes: [],
          error,
        };
      }
    },
    options.onResult,
  );
}

/** A result for a proof with nothing left to fetch (judged with its pinned keys, no network), else null. */
function alreadyComplete(proof: ProofFile, trust: TrustData, cache: VerifyCache): UpgradeResult | null {
  const pinned = trust.servers[proof.server];
  const bundle = bundleOf(proof);
  if (pinned === undefined || bundle === null || proof.consistency === null || stageOf(proof) !== 'anchored')
    return null;
  if (pinned.keys.witnessPolicy === undefined)
    return {
      hash: proof.hash,
      proof,
      changed: false,
      stage: 'anchored',
      complete: true,
      nextCheck: null,
      notes: ['already complete'],
    };
  const w = cache.lines(
    bundle.checkpoint,
    parseCheckpoint(parseNote(bundle.checkpoint).text).origin,
    loadKeys(pinned.keys),
  ).witnesses;
  if (w !== null && w.required && !w.met) return null;
  return {
    hash: proof.hash,
    proof,
    changed: false,
    stage: 'anchored',
    complete: true,
    nextCheck: null,
    notes: ['already complete'],
  };
}

async function openServer(
  server: string,
  options: UpgradeOptions,
  now: Date,
  cache: VerifyCache,
): Promise<ServerState> {
  const checked = options.keysChecked?.includes(server) === true && options.trust.servers[server] !== undefined;
  const pin = checked ? { pinned: 'same' as const, notes: [] } : await pinServer(options.trust, server, options, now);
  const pinned = options.trust.servers[server]!;
  return {
    cache,
    headers: new Map(),
    keys: loadKeys(pinned.keys),
    origin: pinned.origin,
    latest: null,
    tiles: new Map(),
    tileFetches: new Map(),
    notYet: new Map(),
    policyAsked: null,
    days: null,
    notes: pin.pinned === 'new' ? [`pinned the keys of ${server}`, ...pin.notes] : pin.notes,
  };
}

/** Whether the server's days.json lists the proof's day as published (read once per call and server). */
async function dayIsOut(
  proof: ProofFile,
  state: ServerState,
  server: string,
  options: UpgradeOptions,
): Promise<boolean> {
  state.days ??= (async () => {
    const url = `${server}/ledgers/${DAYS_PATH}`;
    const res = await request(url, { method: 'GET', headers: { accept: 'application/json' } }, options, LIMITS.days);
    if (res.status === 404) {
      await res.cancel();
      return new Set<string>(); // nothing published yet
    }
    if (!res.ok) throw await httpError(res, `GET ${url}`);
    try {
      return new Set(parseDays(await res.text()).days.map((d) => d.date));
    } catch (err) {
      throw new TimesealClientError('invalid', `${url}: ${(err as Error).message}`, { cause: err });
    }
  })();
  const days = state.days;
  try {
    return (await days).has(proof.ledgerDate!);
  } catch (err) {
    if (state.days === days) state.days = null; // asked again by a later proof
    throw err;
  }
}

/** How many of a checkpoint's signature lines are not the log's own (witnesses' cosignatures, others). */
function foreignLines(checkpoint: string, origin: string, state: ServerState): number {
  return parseNote(checkpoint).signatures.length - state.cache.lines(checkpoint, origin, state.keys).signers.length;
}

/** How far the server's clock is ahead of ours (ms), from its answer's Date header (0 without one). The header
 * names the second the server was in: the lead is at most a second short, so a time derived from it is late,
 * never early. */
function serverLead(res: { headers: Headers }, ours: Date): number {
  const theirs = Date.parse(res.headers.get('date') ?? '');
  return Number.isNaN(theirs) ? 0 : theirs - ours.getTime();
}

/** Publication time of a day's ledger: 00:01 UTC the next day. */
function publicationTime(date: string): string {
  return new Date(Date.parse(`${date}T00:01:00.000Z`) + 86_400_000).toISOString();
}

async function upgradeOne(
  proof: ProofFile,
  state: ServerState,
  options: UpgradeOptions,
  now: () => Date,
): Promise<UpgradeResult> {
  const server = normalizeServer(options.server ?? proof.server);
  const notes = state.notes.splice(0);
  const quorumMet = (bundle: ProofBundle) => {
    const w = state.cache.lines(
      bundle.checkpoint,
      parseCheckpoint(parseNote(bundle.checkpoint).text).origin,
      state.keys,
    ).witnesses;
    return w === null || !w.required || w.met;
  };
  const current = bundleOf(proof);
  const published = proof.ledgerDate === null ? null : publicationTime(proof.ledgerDate);
  // Next time not before the day has ended by the server's clock (`lead`: how far it is ahead of ours), as a
  // time of ours: the schedule publishes it at 00:01, a build run by hand or a catch-up at start as soon as the
  // day is over. Once that time has passed, whenever the caller polls next.
  const dayEnd = proof.ledgerDate === null ? null : Date.parse(`${proof.ledgerDate}T00:00:00.000Z`) + 86_400_000;
  const notPublished = (lead: number): UpgradeResult => {
    const due = dayEnd !== null && dayEnd > now().getTime() + lead;
    return {
      hash: proof.hash,
      proof,
      changed: false,
      stage: stageOf(proof),
      complete: false,
      nextCheck: due ? new Date(dayEnd - lead).toISOString() : null,
      serverLead: lead,
      notes: [
        ...notes,
        `not published yet${published === null ? '' : ` (the ledger of ${proof.ledgerDate} is published at ${published}, server time${due ? `, ${new Date(now().getTime() + lead).toISOString()} there now` : ''})`}`,
      ],
    };
  };
  // The server said it, or is saying it, for another proof of the day in this call (a few are asked at once):
  // the same answer, not asked again. Only the first proof of a day without a bundle asks.
  const day = current === null ? proof.ledgerDate : null;
  const asked = day === null ? undefined : state.notYet.get(day);
  if (asked !== undefined) {
    const lead = await asked;
    if (lead !== null) return notPublished(lead);
  }
  let answered: (lead: number | null) => void = () => {};
  if (day !== null && asked === undefined) state.notYet.set(day, new Promise((resolve) => (answered = resolve)));

  // 1. The bundle.
  const url = `${server}/api/proof/${proof.hash}`;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, { method: 'GET', headers: { accept: 'application/json' } }, options, LIMITS.bundle);
  } catch (err) {
    answered(null);
    throw err;
  }
  if (res.status === 404) {
    const lead = serverLead(res, now());
    await res.cancel();
    // Once the day is over by the server's clock, its days.json says whether the day is published: then the 404
    // is this hash's alone (the next proof of the day asks for its own), and the promise is broken.
    let out = false;
    try {
      out = dayEnd !== null && dayEnd <= now().getTime() + lead && (await dayIsOut(proof, state, server, options));
    } catch (err) {
      answered(null);
      throw err;
    }
    if (out) {
      answered(null);
      throw new TimesealClientError(
        'broken',
        `the ledger of ${proof.ledgerDate} is published and does not hold this hash: the promise is broken (GET ${url}: 404)`,
      );
    }
    answered(lead);
    return notPublished(lead);
  }
  answered(null);
  if (res.status === 503 || res.status === 429) {
    const wait = retryAfterSeconds(res) ?? 300;
    await res.cancel();
    return {
      hash: proof.hash,
      proof,
      changed: false,
      stage: stageOf(proof),
      complete: false,
      nextCheck: new Date(now().getTime() + wait * 1000).toISOString(),
      serverLead: serverLead(res, now()),
      notes: [...notes, `the server is busy (HTTP ${res.status}); asked to come back in ${wait} s`],
    };
  }
  if (!res.ok) throw await httpError(res, `GET ${url}`);
  const ahead = serverLead(res, now());
  const text = await res.text();
  let bundle: ProofBundle;
  let verifiedRoot: string;
  let origin: string;
  try {
    bundle = parseProofBundle(text);
    if (bundle.hash !== proof.hash) throw new Error(`the server sent the bundle of ${bundle.hash}`);
    const verified = state.cache.bundle(bundle, state.keys);
    state.cache.lines(bundle.checkpoint, verified.origin, state.keys);
    verifiedRoot = verified.root;
    origin = verified.origin;
  } catch (err) {
    throw new TimesealClientError(
      'invalid',
      `${url}: the bundle does not check with the pinned keys: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const pinned = options.trust.servers[server];
  if (pinned !== undefined && pinned.origin === null) pinned.origin = origin;
  if (pinned !== undefined && pinned.origin !== origin)
    throw new TimesealClientError(
      'trust',
      `${server} is pinned as the log ${pinned.origin}, but its bundle's checkpoint names ${origin}`,
    );

  // Witnesses cosign now, and no policy is pinned to judge their lines: the server is asked for it (once per
  // call). A server without witnesses is not asked (a checkpoint carries only the log's lines then).
  if (state.keys.policy === null && foreignLines(bundle.checkpoint, origin, state) > 0) {
    state.policyAsked ??= learnWitnessPolicy(options.trust, server, options).then((note) => {
      if (note === null) return;
      state.keys = loadKeys(options.trust.servers[server]!.keys);
      state.notes.push(note);
    });
    await state.policyAsked;
    notes.push(...state.notes.splice(0));
  }

  // 2. The log's latest checkpoint, consistent with what this client saw, and the bundle's tree consistent with it.
  const latest = await latestCheckpoint(server, origin, state, options, now());
  const consistency = await consistencyTo(
    server,
    { size: bundle.treeSize, root: verifiedRoot },
    latest.checkpoint,
    state,
    options,
  );
  rememberCheckpoint(options.trust, origin, bundle.treeSize, verifiedRoot, undefined, now());

  // 3. Bitcoin block headers for the .ots's attestations.
  const headers: HeaderRecord[] = [...proof.headers];
  if (bundle.ots !== null) {
    const ots = readBundleOts(bundle, verifiedRoot);
    for (const att of ots.bitcoin) {
      if (headers.some((h) => h.height === att.height)) continue;
      // A header that cannot be fetched or does not check is noted and asked for again next time; the bundle is
      // kept all the same (it checked), and the proof stays incomplete.
      try {
        let fetching = state.headers.get(att.height);
        if (fetching === undefined) {
          fetching = fetchHeader(att.height, options);
          state.headers.set(att.height, fetching);
          fetching.catch(() => state.headers.delete(att.height));
        }
        const record = await fetching;
        verifyBitcoinAttestation(
          att.message,
          att.height,
          hexBytes(record.header),
          record.hash,
          options.network ?? 'mainnet',
        );
        headers.push(record);
        notes.push(`checked and kept the header of Bitcoin block ${att.height}`);
      } catch (err) {
        const e = asClientError(err, 'invalid');
        if (e.code === 'aborted' && options.signal?.aborted) throw e;
        notes.push(
          `the header of Bitcoin block ${att.height} from ${options.headersFrom ?? DEFAULT_HEADERS_FROM}: ${e.message}; asked again next time`,
        );
      }
    }
    if (ots.bitcoin.length === 0)
      notes.push(
        `not anchored in Bitcoin yet (pending at ${ots.pending.length} calendar${ots.pending.length === 1 ? '' : 's'})`,
      );
  } else notes.push('not anchored yet (the bundle has no .ots)');
  headers.sort((a, b) => a.height - b.height);

  const updated: ProofFile = {
    ...proof,
    server,
    bundle: JSON.parse(text) as Record<string, unknown>,
    consistency: { checkpoint: latest.note, proof: consistency },
    headers,
    updatedAt: now().toISOString(),
  };
  const changed = JSON.stringify({ ...updated, updatedAt: '' }) !== JSON.stringify({ ...proof, updatedAt: '' });
  const stage = stageOf(updated);
  const complete = stage === 'anchored' && quorumMet(bundle);
  if (stage === 'anchored' && !complete) notes.push("the witness policy's quorum is not met yet");
  if (current === null) notes.unshift(`published: the ledger of ${bundle.date} holds it at leaf ${bundle.leafIndex}`);
  return {
    hash: proof.hash,
    proof: changed ? updated : proof,
    changed,
    stage,
    complete,
    nextCheck: complete ? null : new Date(now().getTime() + 3_600_000).toISOString(),
    serverLead: ahead,
    notes,
  };
}

const hexBytes = (hex: string): Uint8Array => Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16));

/**
 * The server's latest checkpoint, verified with the pinned keys, and shown to extend the latest this client saw
 * of the log (or be extended by it): fetched once per run.
 */
function latestCheckpoint(
  server: string,
  origin: string,
  state: ServerState,
  options: UpgradeOptions,
  now: Date,
): Promise<{ note: string; checkpoint: ParsedCheckpoint }> {
  state.latest ??= fetchLatestCheckpoint(server, origin, state, options, now);
  return state.latest;
}

async function fetchLatestCheckpoint(
  server: string,
  origin: string,
  state: ServerState,
  options: UpgradeOptions,
  now: Date,
): Promise<{ note: string; checkpoint: ParsedCheckpoint }> {
  const url = `${server}/ledgers/checkpoint`;
  const res = await request(url, { method: 'GET' }, options, LIMITS.checkpoint);
  if (!res.ok) throw await httpError(res, `GET ${url}`);
  const note = await res.text();
  let checkpoint: ParsedCheckpoint;
  try {
    checkpoint = state.cache.checkpoint(note, origin, state.keys);
    state.cache.lines(note, origin, state.keys);
  } catch (err) {
    throw new TimesealClientError(
      'invalid',
      `${url}: the latest checkpoint does not check with the pinned keys: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const root = toHex(checkpoint.root);
  const memory = options.trust.logs[origin];
  const seen = memory?.checkpoints.find((c) => c.size === checkpoint.size);
  if (seen !== undefined && seen.root !== root) throw forkError(origin, checkpoint.size, seen, root);
  const known = memory?.checkpoints.at(-1);
  if (known !== undefined && known.size !== checkpoint.size) {
    // The larger of the two must extend the smaller: the tiles at the larger size give the proof.
    const [small, big] =
      known.size < checkpoint.size
        ? [known, { size: checkpoint.size, root }]
        : [{ size: checkpoint.size, root }, known];
    const proof = await consistencyProofFromTiles(server, small.size, big.size, state, options);
    try {
      verifyConsistency(small.size, big.size, proof.map(hexBytes), hexBytes(small.root), hexBytes(big.root));
    } catch (err) {
      throw new TimesealClientError(
        'fork',
        `the log ${origin}'s tree of size ${big.size} does not extend its tree of size ${small.size} seen before (a forked or rewritten log): ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
  rememberCheckpoint(options.trust, origin, checkpoint.size, root, note, now);
  return { note, checkpoint };
}

/** The consistency proof from `from` to the latest checkpoint, checked (a failure is a fork). */
async function consistencyTo(
  server: string,
  from: { size: number; root: string },
  to: ParsedCheckpoint,
  state: ServerState,
  options: UpgradeOptions,
): Promise<string[]> {
  const toRoot = toHex(to.root);
  if (from.size > to.size)
    throw new TimesealClientError(
      'fork',
      `the bundle's tree (size ${from.size}) is larger than the log's latest checkpoint (size ${to.size})`,
    );
  if (from.size === to.size) {
    if (from.root !== toRoot)
      throw new TimesealClientError(
        'fork',
        `the log ${to.origin} shows two different trees of size ${to.size}: the bundle's root ${from.root} and the latest checkpoint's ${toRoot}`,
      );
    return [];
  }
  const proof = await consistencyProofFromTiles(server, from.size, to.size, state, options);
  try {
    verifyConsistency(from.size, to.size, proof.map(hexBytes), hexBytes(from.root), to.root);
  } catch (err) {
    throw new TimesealClientError(
      'fork',
      `the bundle's tree of size ${from.size} is not contained in the log's latest tree of size ${to.size}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return proof;
}

/** RFC 9162 consistency proof from the tree of `oldSize` to that of `newSize`, computed from the log's tiles. */
async function consistencyProofFromTiles(
  server: string,
  oldSize: number,
  newSize: number,
  state: ServerState,
  options: UpgradeOptions,
): Promise<string[]> {
  const needed = tilesForConsistency(oldSize, newSize);
  await Promise.all(
    needed.map((t) => {
      const path = tilePath(t.level, t.index, t.width);
      if (state.tiles.has(path)) return undefined;
      let fetching = state.tileFetches.get(path);
      if (fetching === undefined) {
        fetching = (async () => {
          const url = `${server}/ledgers/${path}`;
          const res = await request(url, { method: 'GET' }, options, LIMITS.tile);
          if (!res.ok) throw await httpError(res, `GET ${url}`);
          state.tiles.set(path, await res.bytes());
        })().finally(() => state.tileFetches.delete(path));
        state.tileFetches.set(path, fetching);
      }
      return fetching;
    }),
  );
  const reader = tileHashReader(newSize, (level, index, width) => {
    const tile = state.tiles.get(tilePath(level, index, width));
    if (tile === undefined)
      throw new TimesealClientError('invalid', `tile ${tilePath(level, index, width)} was not fetched`);
    return tile;
  });
  return consistencyProof(oldSize, newSize, reader).map(toHex);
}

/** The header of the block at `height`, from the Esplora API: its hash first, then the header by that hash. */
async function fetchHeader(height: number, options: UpgradeOptions): Promise<HeaderRecord> {
  const base = (options.headersFrom ?? DEFAULT_HEADERS_FROM).replace(/\/+$/, '');
  const hashUrl = `${base}/block-height/${height}`;
  const r1 = await request(hashUrl, { method: 'GET' }, options, LIMITS.esplora);
  if (!r1.ok) throw await httpError(r1, `GET ${hashUrl}`);
  const hash = (await r1.text()).trim().toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new TimesealClientError('http', `GET ${hashUrl}: not a block hash`);
  const headerUrl = `${base}/block/${hash}/header`;
  const r2 = await request(headerUrl, { method: 'GET' }, options, LIMITS.esplora);
  if (!r2.ok) throw await httpError(r2, `GET ${headerUrl}`);
  const header = (await r2.text()).trim().toLowerCase();
  if (!/^[0-9a-f]{160}$/.test(header))
    throw new TimesealClientError('http', `GET ${headerUrl}: not an 80-byte header in hex`);
  return { height, hash, header };
}
