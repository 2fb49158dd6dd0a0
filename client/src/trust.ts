// Trust on first use. The first time the client talks to a server it fetches the server's public keys (/keys/…)
// and pins them; later answers must be signed by those keys, and a server that serves other keys is refused
// (code 'trust'). Per log origin the client also remembers every checkpoint it verified (tree size → root), so a
// log that shows another tree of a size already seen is caught as a fork, offline too.
import { parseVkey, type Vkey } from '../../core/cosignature.ts';
import { equalBytes, fromBase64, toBase64 } from '../../core/encoding.ts';
import { MLDSA_PUBLIC_KEY_SIZE } from '../../core/sig.ts';
import { TimesealClientError } from './errors.ts';
import { loadKeys } from './keys.ts';
import { httpError, LIMITS, request, type HttpOptions } from './http.ts';
import { TRUST_FORMAT, type KeyFiles, type PinnedServer, type SeenCheckpoint, type TrustData } from './types.ts';

export function emptyTrust(): TrustData {
  return { format: TRUST_FORMAT, servers: {}, logs: {} };
}

export function encodeTrust(t: TrustData): string {
  return `${JSON.stringify(t, null, 2)}\n`;
}

/** Parses a trust store's text (an empty text is an empty store). */
export function parseTrust(text: string): TrustData {
  if (text.trim() === '') return emptyTrust();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TimesealClientError('invalid', `trust store: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const t = raw as Partial<TrustData>;
  if (
    t.format !== TRUST_FORMAT ||
    typeof t.servers !== 'object' ||
    t.servers === null ||
    typeof t.logs !== 'object' ||
    t.logs === null
  ) {
    throw new TimesealClientError(
      'invalid',
      `trust store: expected {"format": "${TRUST_FORMAT}", "servers": {…}, "logs": {…}}`,
    );
  }
  for (const [url, s] of Object.entries(t.servers)) {
    if (typeof s?.keys?.publicPem !== 'string' || typeof s.keys.dilithiumKey !== 'string')
      throw new TimesealClientError('invalid', `trust store: server ${url}: keys missing`);
  }
  for (const [origin, log] of Object.entries(t.logs)) {
    if (
      !Array.isArray(log?.checkpoints) ||
      !log.checkpoints.every((c) => Number.isSafeInteger(c.size) && /^[0-9a-f]{64}$/.test(c.root))
    ) {
      throw new TimesealClientError('invalid', `trust store: log ${origin}: checkpoints malformed`);
    }
  }
  return t as TrustData;
}

/** Key files from a folder laid out like a server's keys/ (for `--keys DIR`): `read(name)` gives a file or undefined. */
export function keyFilesFrom(read: (name: string) => Uint8Array | undefined): KeyFiles {
  const text = (name: string) => {
    const b = read(name);
    return b === undefined ? undefined : new TextDecoder().decode(b);
  };
  const publicPem = text('public.pem');
  if (publicPem === undefined) throw new TimesealClientError('not-found', 'keys: public.pem is missing');
  let dilithium = read('dilithium_public.key');
  if (dilithium === undefined) {
    const pem = text('dilithium_public.pem');
    if (pem === undefined)
      throw new TimesealClientError('not-found', 'keys: dilithium_public.key (or dilithium_public.pem) is missing');
    const der = fromBase64(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''));
    dilithium = der.slice(der.length - MLDSA_PUBLIC_KEY_SIZE);
  }
  const files: KeyFiles = { publicPem, dilithiumKey: toBase64(dilithium) };
  const optional: Array<[keyof KeyFiles, string]> = [
    ['ed25519Vkey', 'ed25519.vkey'],
    ['mldsa44Vkey', 'mldsa44.vkey'],
    ['tsaRootPem', 'timeseal-tsa-root.pem'],
    ['witnessPolicy', 'witnesses'],
    ['receiptEs256Pem', 'receipt-es256.pem'],
    ['receiptMldsa65Pem', 'receipt-mldsa65.pem'],
    ['receiptKeysRetired', 'receipt-keys.retired'],
  ];
  for (const [field, name] of optional) {
    const t = text(name);
    if (t !== undefined) files[field] = t;
  }
  return files;
}

/** One of a server's key files (/keys/NAME); undefined when an optional one is not served (404). */
async function getKeyFile(
  server: string,
  name: string,
  required: boolean,
  http: HttpOptions,
): Promise<Uint8Array | undefined> {
  const url = `${server}/keys/${name}`;
  const res = await request(url, { method: 'GET' }, http, LIMITS.key);
  if (res.status === 404 && !required) {
    await res.cancel();
    return undefined;
  }
  if (!res.ok) throw await httpError(res, `GET ${url}`);
  return res.bytes();
}

/**
 * Fetches a server's public key files (/keys/…); the two log keys are required, the others optional. The
 * witness policy is left out with `witnessPolicy: false` (a server without witnesses answers 404 for it), the
 * receipt keys with `receiptKeys: false` (once pinned).
 */
export async function fetchKeyFiles(
  server: string,
  http: HttpOptions = {},
  { witnessPolicy = true, receiptKeys = true }: { witnessPolicy?: boolean; receiptKeys?: boolean } = {},
): Promise<KeyFiles> {
  const get = (name: string, required: boolean) => getKeyFile(server, name, required, http);
  const [pub, dil, ed, ml, root, witnesses, receiptEs256, receiptMldsa65, receiptRetired] = await Promise.all([
    get('public.pem', true),
    get('dilithium_public.key', true),
    get('ed25519.vkey', false),
    get('mldsa44.vkey', false),
    get('timeseal-tsa-root.pem', false),
    witnessPolicy ? get('witnesses', false) : undefined,
    receiptKeys ? get('receipt-es256.pem', false) : undefined,
    receiptKeys ? get('receipt-mldsa65.pem', false) : undefined,
    receiptKeys ? get('receipt-keys.retired', false) : undefined,
  ]);
  const found = new Map<string, Uint8Array | undefined>([
    ['public.pem', pub],
    ['dilithium_public.key', dil],
    ['ed25519.vkey', ed],
    ['mldsa44.vkey', ml],
    ['timeseal-tsa-root.pem', root],
    ['witnesses', witnesses],
    ['receipt-es256.pem', receiptEs256],
    ['receipt-mldsa65.pem', receiptMldsa65],
    ['receipt-keys.retired', receiptRetired],
  ]);
  const files = keyFilesFrom((name) => found.get(name));
  loadKeys(files); // malformed keys are refused before anything is pinned
  return files;
}

export interface PinResult {
  /** 'new': pinned now; 'same': the server serves the keys already pinned. */
  pinned: 'new' | 'same';
  /** What changed without breaking trust (a key added, a witness policy that differs from the pinned one). */
  notes: string[];
}

/**
 * Pins `server`'s keys in `trust` on first use; afterwards checks that it still serves them. A log key or TSA
 * root that differs from the pinned one is a 'trust' error (nothing changes); a key the server did not have
 * when pinned (the checkpoint keys, the TSA root) is added; a witness policy that differs is noted and the
 * pinned one kept (a server cannot drop its witnesses for a client that already knows them). A server pinned
 * without a witness policy is not asked for one again here (it answered 404 on every run): upgrade asks once a
 * checkpoint carries lines of others than the log (learnWitnessPolicy).
 */
export async function pinServer(
  trust: TrustData,
  server: string,
  http: HttpOptions = {},
  now: Date = new Date(),
): Promise<PinResult> {
  const pinned = trust.servers[server];
  const served = await fetchKeyFiles(server, http, {
    witnessPolicy: pinned === undefined || pinned.keys.witnessPolicy !== undefined,
    // Receipt keys are asked for until pinned, with the retired ones (receipts of the days they signed); once
    // pinned they are kept (a rotation keeps old receipts valid).
    receiptKeys: pinned === undefined || pinned.keys.receiptEs256Pem === undefined,
  });
  if (pinned === undefined) {
    trust.servers[server] = {
      pinnedAt: now.toISOString(),
      origin: served.ed25519Vkey === undefined ? null : parseVkey(served.ed25519Vkey).name,
      keys: served,
    };
    return { pinned: 'new', notes: [] };
  }
  return { pinned: 'same', notes: mergeKeys(server, pinned, served) };
}

/**
 * Asks a server pinned without a witness policy for one (/keys/witnesses), as upgrade does once a checkpoint
 * carries cosignature lines: a policy served now is checked and pinned, and the note says so; null when the
 * server still serves none.
 */
export async function learnWitnessPolicy(
  trust: TrustData,
  server: string,
  http: HttpOptions = {},
): Promise<string | null> {
  const pinned = trust.servers[server];
  if (pinned === undefined || pinned.keys.witnessPolicy !== undefined) return null;
  const bytes = await getKeyFile(server, 'witnesses', false, http);
  if (bytes === undefined) return null;
  const witnessPolicy = new TextDecoder().decode(bytes);
  loadKeys({ ...pinned.keys, witnessPolicy }); // a malformed policy is refused before it is pinned
  pinned.keys.witnessPolicy = witnessPolicy;
  return `pinned the witness policy, which ${server} did not serve before`;
}

function mergeKeys(server: string, pinned: PinnedServer, served: KeyFiles): string[] {
  const a = loadKeys(pinned.keys);
  const b = loadKeys(served);
  const changed: string[] = [];
  if (!equalBytes(a.set.ecdsa, b.set.ecdsa)) changed.push('public.pem (ECDSA P-256)');
  if (!equalBytes(a.set.mldsa, b.set.mldsa)) changed.push('dilithium_public.key (ML-DSA-65)');
  const sameVkey = (x: Vkey | null, y: Vkey | null) =>
    x === null || y === null || (x.name === y.name && equalBytes(x.publicKey, y.publicKey));
  if (!sameVkey(a.ed25519Vkey, b.ed25519Vkey)) changed.push('ed25519.vkey');
  if (!sameVkey(a.mldsa44Vkey, b.mldsa44Vkey)) changed.push('mldsa44.vkey');
  if (a.tsaRoots.length > 0 && b.tsaRoots.length > 0 && !equalBytes(a.tsaRoots[0]!, b.tsaRoots[0]!))
    changed.push('timeseal-tsa-root.pem');
  if (changed.length > 0) {
    throw new TimesealClientError(
      'trust',
      `${server} now serves other keys than those pinned on ${pinned.pinnedAt}: ${changed.join(', ')}. If the operator really changed them, check that out of band, then remove the server from the trust store to pin again.`,
    );
  }
  const notes: string[] = [];
  for (const [field, name] of [
    ['ed25519Vkey', 'ed25519.vkey'],
    ['mldsa44Vkey', 'mldsa44.vkey'],
    ['tsaRootPem', 'timeseal-tsa-root.pem'],
    ['receiptEs256Pem', 'receipt-es256.pem'],
    ['receiptMldsa65Pem', 'receipt-mldsa65.pem'],
  ] as const) {
    if (pinned.keys[field] === undefined && served[field] !== undefined) {
      pinned.keys[field] = served[field];
      notes.push(`pinned ${name}, which ${server} did not serve before`);
    }
  }
  if (pinned.keys.witnessPolicy === undefined && served.witnessPolicy !== undefined) {
    pinned.keys.witnessPolicy = served.witnessPolicy;
    notes.push(`pinned the witness policy, which ${server} did not serve before`);
  } else if (served.witnessPolicy !== undefined && served.witnessPolicy !== pinned.keys.witnessPolicy) {
    notes.push(`${server} serves another witness policy than the one pinned; the pinned one is kept`);
  }
  if (pinned.origin === null && served.ed25519Vkey !== undefined) pinned.origin = parseVkey(served.ed25519Vkey).name;
  return notes;
}

/** The root the client saw for `origin`'s tree of `size`, if it saw one. */
export function seenRoot(trust: TrustData, origin: string, size: number): string | undefined {
  return trust.logs[origin]?.checkpoints.find((c) => c.size === size)?.root;
}

/**
 * Records a verified checkpoint of `origin`. A root that differs from one seen for the same size is a 'fork'
 * error (nothing recorded). `note`, when given and larger than the latest, becomes the latest.
 */
export function rememberCheckpoint(
  trust: TrustData,
  origin: string,
  size: number,
  root: string,
  note?: string,
  now: Date = new Date(),
): void {
  const log = (trust.logs[origin] ??= { checkpoints: [], latest: null });
  const seen = log.checkpoints.find((c) => c.size === size);
  if (seen !== undefined) {
    if (seen.root !== root) throw forkError(origin, size, seen, root);
  } else {
    const entry: SeenCheckpoint = { size, root, seenAt: now.toISOString() };
    log.checkpoints.push(entry);
    log.checkpoints.sort((x, y) => x.size - y.size);
  }
  if (note !== undefined && size >= (log.checkpoints.at(-1)?.size ?? 0)) log.latest = note;
}

export function forkError(origin: string, size: number, seen: SeenCheckpoint, root: string): TimesealClientError {
  return new TimesealClientError(
    'fork',
    `the log ${origin} showed two different trees of size ${size}: root ${root}, but ${seen.root} was seen on ${seen.seenAt} (a forked or rewritten log)`,
  );
}
