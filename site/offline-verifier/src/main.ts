// The offline verifier page: reads what the person drops, chooses or pastes, hashes documents locally
// (streaming, @noble/hashes' SHA-256), runs checks.ts on everything and shows the verdicts. The only network request it can
// ever make is the Esplora block-header fetch, and only when the person clicks for it.
import { sha256 } from '@noble/hashes/sha2.js';
import { fromBase64, fromHex, toHex } from '../../../core/encoding.ts';
import { parseVkey } from '../../../core/cosignature.ts';
import { ecdsaPublicKeyFromPem } from '../../../core/sig.ts';
import { blockHash } from '../../../core/bitcoin.ts';
import { dateOfDayFile } from '../../../core/archive.ts';
import { LEDGER_FORMAT } from '../../../core/ledger.ts';
import {
  verifyInputs,
  type Check,
  type FetchedHeader,
  type KeyInput,
  type Report,
  type VerifierInputs,
} from './checks.ts';
import { sniffEvidenceAsync } from '../../../core/evidence.ts';
import { classifyFile, classifyText, KIND_LABEL, type ClassifiedInput, type ReceiptKeyValue } from './inputs.ts';
import { parseRetiredReceiptKeys, type ReceiptKeyEntry } from '../../../core/cose-receipt.ts';
import { settled } from './p256.ts';

declare const __VERIFIER_BUILD__: {
  version: string;
  ecdsaPem: string | null;
  mldsaKey: string | null;
  vkeys: string[];
  /** The COSE receipt keys (ES256 −7, ML-DSA-65 −49), raw, base64. */
  receiptKeys: Array<{ alg: number; key: string }>;
  /** keys/receipt-keys.retired as the archive had it (the receipt keys a rotation retired), or null. */
  retiredReceiptKeys: string | null;
};

const BUILD = __VERIFIER_BUILD__;
const CHUNK = 4 * 1024 * 1024;

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

type Keys = VerifierInputs['keys'];
const KEY_NAMES = ['ecdsa', 'mldsa', 'ed25519', 'mldsa44', 'receiptEs256', 'receiptMldsa65'] as const;
const builtIn: Keys = {};
if (BUILD.ecdsaPem)
  builtIn.ecdsa = { key: ecdsaPublicKeyFromPem(BUILD.ecdsaPem), source: 'the keys built into this file' };
if (BUILD.mldsaKey) builtIn.mldsa = { key: fromBase64(BUILD.mldsaKey), source: 'the keys built into this file' };
// The checkpoint keys witnesses know (keys/ed25519.vkey, keys/mldsa44.vkey), when the archive had them.
for (const text of BUILD.vkeys) {
  const v = parseVkey(text);
  builtIn[v.type === 0x01 ? 'ed25519' : 'mldsa44'] = { key: v.publicKey, source: 'the keys built into this file' };
}
for (const { alg, key } of BUILD.receiptKeys)
  builtIn[alg === -7 ? 'receiptEs256' : 'receiptMldsa65'] = {
    key: fromBase64(key),
    source: 'the keys built into this file',
  };

if (BUILD.retiredReceiptKeys !== null)
  builtIn.retiredReceipt = {
    keys: parseRetiredReceiptKeys(BUILD.retiredReceiptKeys),
    source: 'the keys built into this file',
  };

const state = {
  /** The document: its hash (SHA-256 of a file, or the hash pasted), the file itself, and the SHA-384 / SHA-512 of
   *  the file once a receipt asked for them. */
  document: undefined as { hash: string; source: string; file?: File; digests?: Record<string, string> } | undefined,
  files: [] as ClassifiedInput[],
  loadedKeys: {} as Keys,
  fetched: [] as FetchedHeader[],
  hashing: 0,
};

// --- Theme ----------------------------------------------------------------------------------------------

function storedTheme(): string | null {
  try {
    return localStorage.getItem('theme');
  } catch {
    return null;
  }
}

function applyTheme(theme: string | null): void {
  const dark = theme ? theme === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  const button = $('theme');
  button.setAttribute('aria-pressed', String(dark));
  button.textContent = dark ? 'Light theme' : 'Dark theme';
}

// --- Document hashing -----------------------------------------------------------------------------------

/** The file's SHA-256, streamed in chunks (any size), with the progress bar; undefined when another run started. */
async function digestFile(file: File, run: number): Promise<string | undefined> {
  const progress = $<HTMLProgressElement>('doc-progress');
  progress.hidden = false;
  progress.value = 0;
  $('doc-status').textContent = `Hashing ${file.name}…`;
  const hasher = sha256.create();
  for (let offset = 0; offset < file.size || offset === 0; offset += CHUNK) {
    const chunk = new Uint8Array(await file.slice(offset, offset + CHUNK).arrayBuffer());
    if (run !== state.hashing) return;
    hasher.update(chunk);
    progress.value = file.size ? Math.min(1, (offset + chunk.length) / file.size) : 1;
    if (file.size === 0) break;
  }
  progress.hidden = true;
  return toHex(hasher.digest());
}

async function hashFile(file: File): Promise<void> {
  const run = ++state.hashing;
  const status = $('doc-status');
  try {
    const hash = await digestFile(file, run);
    if (hash === undefined) return;
    state.document = { hash, source: `${file.name} (${formatSize(file.size)}, hashed in this page)`, file };
    $<HTMLInputElement>('hash-input').value = hash;
    status.textContent = `SHA-256 of ${file.name}: ${hash}`;
  } catch (err) {
    status.textContent = `Could not read ${file.name}: ${(err as Error).message}`;
    $<HTMLProgressElement>('doc-progress').hidden = true;
  }
  refresh();
}

/**
 * A receipt made with SHA-384 or SHA-512 (a report row asks for it): the document file hashed with that too, by
 * Web Crypto (no code in the page for it, but the file is read whole: up to 512 MB here).
 */
async function moreDigest(algorithm: string): Promise<void> {
  const doc = state.document;
  // Once per document and algorithm ('' while hashing).
  if (!doc?.file || doc.digests?.[algorithm] !== undefined) return;
  (doc.digests ??= {})[algorithm] = '';
  try {
    if (doc.file.size > 512 * 1024 * 1024)
      throw new Error(`too large to hash with ${algorithm} here: paste its ${algorithm} hash`);
    const hash = toHex(new Uint8Array(await crypto.subtle.digest(algorithm, await doc.file.arrayBuffer())));
    if (state.document !== doc) return;
    doc.digests[algorithm] = hash;
    $('doc-status').textContent = `${algorithm} of ${doc.file.name}: ${hash}`;
  } catch (err) {
    $('doc-status').textContent = `${doc.file.name}: ${(err as Error).message}`;
  }
  refresh();
}

function onHashInput(): void {
  const value = $<HTMLInputElement>('hash-input').value.trim();
  const status = $('doc-status');
  state.hashing++;
  $<HTMLProgressElement>('doc-progress').hidden = true;
  if (value === '') {
    state.document = undefined;
    status.textContent = '';
  } else if (/^([0-9a-fA-F]{32}){2,4}$/.test(value)) {
    // SHA-256 as a rule; a SHA-384 or SHA-512 hash for a receipt made with one.
    if (state.document?.hash !== value.toLowerCase())
      state.document = { hash: value.toLowerCase(), source: 'the hash you pasted' };
    status.textContent = '';
  } else {
    state.document = undefined;
    status.textContent = `A SHA-256 hash is 64 hexadecimal characters (this has ${value.length}; SHA-384: 96, SHA-512: 128).`;
  }
  refresh();
}

// --- Proof files ----------------------------------------------------------------------------------------

function formatSize(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function addInput(input: ClassifiedInput): void {
  if (input.kind === 'hash') {
    const box = $<HTMLInputElement>('hash-input');
    box.value = input.value as string;
    onHashInput();
    return;
  }
  if (
    (input.kind === 'ecdsa-key' || input.kind === 'mldsa-key' || input.kind === 'vkey') &&
    input.value instanceof Uint8Array
  ) {
    const key: KeyInput = { key: input.value, source: input.name };
    if (input.kind === 'ecdsa-key') state.loadedKeys.ecdsa = key;
    else if (input.kind === 'mldsa-key') state.loadedKeys.mldsa = key;
    else state.loadedKeys[input.value.length === 32 ? 'ed25519' : 'mldsa44'] = key;
  }
  if (input.kind === 'receipt-key' && input.value !== undefined) {
    const { alg, publicKey } = input.value as ReceiptKeyValue;
    state.loadedKeys[alg === -7 ? 'receiptEs256' : 'receiptMldsa65'] = { key: publicKey, source: input.name };
  }
  if (input.kind === 'retired-receipt-keys' && input.value !== undefined)
    state.loadedKeys.retiredReceipt = { keys: input.value as ReceiptKeyEntry[], source: input.name };
  state.files = state.files.filter((f) => !(f.name === input.name && f.kind === input.kind));
  state.files.push(input);
}

/** The first bytes of every ledger file (docs/FORMAT.md §3). */
const LEDGER_START = `{"format":"${LEDGER_FORMAT}","origin":"`;

/**
 * What a file is (inputs.ts); undefined for a document over 8 MB. Proof files are small but for a busy day's
 * ledger (tens of MB): a large file is that ledger when named YYYY-MM-DD.json or when it starts as one (only
 * those first bytes are read to tell); any other is a document, hashed in chunks.
 */
async function readInput(file: File): Promise<ClassifiedInput | undefined> {
  if (file.size <= 8 * 1024 * 1024) return classifyFile(file.name, new Uint8Array(await file.arrayBuffer()));
  const date = dateOfDayFile(file.name);
  if (
    (date && file.name === `${date}.json`) ||
    new TextDecoder().decode(await file.slice(0, LEDGER_START.length).arrayBuffer()) === LEDGER_START
  ) {
    return {
      kind: 'ledger',
      name: file.name,
      bytes: new Uint8Array(await file.arrayBuffer()),
      ...(date ? { date } : {}),
    };
  }
  // A timestamped PDF of any size (core/evidence.ts reads it in pieces, from its end back), checked whole.
  const read = async (at: number, n: number) => new Uint8Array(await file.slice(at, at + n).arrayBuffer());
  if ((await sniffEvidenceAsync(file.size, read, file.name)) === 'timestamped-pdf')
    return { kind: 'timestamped-pdf', name: file.name, bytes: new Uint8Array(await file.arrayBuffer()) };
}

async function addFiles(list: FileList | File[]): Promise<void> {
  for (const file of [...list]) {
    const input = await readInput(file);
    if (!input || input.kind === 'document') void hashFile(file);
    else addInput(input);
  }
  refresh();
}

/** Files given as "your document" (dropped on step 1 or chosen there). A proof file (bundle, .ots,
 *  checkpoint, ledger files, keys, header) is never hashed as the document: it joins the proof files and the
 *  status says so. The first other file is the document. A small file holding only a hash is a document too
 *  (someone may have timestamped exactly that file). */
async function addDocumentFiles(list: FileList | File[]): Promise<void> {
  const moved: string[] = [];
  let documentFile: File | undefined;
  for (const file of [...list]) {
    const input = await readInput(file);
    if (input && input.kind !== 'document' && input.kind !== 'hash') {
      addInput(input);
      moved.push(`${file.name} is a ${KIND_LABEL[input.kind]}`);
    } else {
      documentFile ??= file;
    }
  }
  if (documentFile) void hashFile(documentFile);
  else if (moved.length > 0)
    $('doc-status').textContent =
      `${moved.join('; ')}, not your document: added to the proof files (step 2). Here, choose the original file or paste its SHA-256 hash.`;
  refresh();
}

function onPaste(): void {
  const area = $<HTMLTextAreaElement>('paste');
  const status = $('paste-status');
  const input = classifyText(area.value, 'pasted text');
  if (!input) {
    status.textContent =
      'Not recognised: paste a proof bundle, a tlog-proof, a checkpoint, a block header (160 hex digits), a receipt (base64), a SHA-256 hash or a public key (PEM).';
    return;
  }
  const n = state.files.filter((f) => f.name.startsWith('pasted ')).length + 1;
  addInput({ ...input, name: input.kind === 'hash' ? input.name : `pasted ${KIND_LABEL[input.kind]} ${n}` });
  status.textContent = `Added: ${KIND_LABEL[input.kind]}.`;
  area.value = '';
  refresh();
}

// --- Esplora --------------------------------------------------------------------------------------------

async function fetchHeader(height: number, out: HTMLElement, button: HTMLButtonElement): Promise<void> {
  const base = $<HTMLInputElement>('esplora').value.trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(base);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
  } catch {
    out.textContent = 'Enter the address of an Esplora API first, such as https://blockstream.info/api.';
    return;
  }
  button.disabled = true;
  out.textContent = `Asking ${url.host} for the header of block ${height}…`;
  const get = async (path: string): Promise<string> => {
    const r = await fetch(`${base}${path}`, { credentials: 'omit', referrerPolicy: 'no-referrer', cache: 'no-store' });
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    return (await r.text()).trim();
  };
  try {
    const hash = (await get(`/block-height/${height}`)).toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`/block-height/${height} did not answer a block hash`);
    const header = fromHex(await get(`/block/${hash}/header`), 'block header');
    if (header.length !== 80) throw new Error(`the header is ${header.length} bytes, not 80`);
    state.fetched = state.fetched.filter((f) => f.height !== height);
    state.fetched.push({
      height,
      header,
      blockHash: hash,
      source: `${url.host} (fetched; checked here: ${blockHash(header) === hash ? 'its hash matches' : 'its hash differs'})`,
    });
    refresh();
  } catch (err) {
    out.textContent = `Could not fetch the header: ${(err as Error).message}`;
    button.disabled = false;
  }
}

// --- Rendering ------------------------------------------------------------------------------------------

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

const ICON: Record<Check['state'], string> = { ok: '✓', fail: '✗', pending: '…', info: 'i' };

function renderCheck(check: Check): HTMLElement {
  if (check.needsDigest) void moreDigest(check.needsDigest);
  const li = el('li', { class: 'check', 'data-state': check.state });
  li.append(el('span', { class: 'icon', 'aria-hidden': 'true' }, ICON[check.state]));
  const body = el(
    'div',
    { class: 'body' },
    el('span', { class: 'label' }, check.label),
    ' ',
    el('strong', { class: 'verdict' }, check.verdict),
  );
  if (check.details?.length) body.append(el('ul', { class: 'details' }, ...check.details.map((d) => el('li', {}, d))));
  if (check.needsHeader) {
    const { height } = check.needsHeader;
    const out = el('p', { class: 'fetch-status', role: 'status' });
    const button = el('button', { type: 'button', class: 'btn small' }, `Fetch the header of block ${height}`);
    button.addEventListener('click', () => void fetchHeader(height, out, button));
    body.append(
      el(
        'div',
        { class: 'fetch' },
        button,
        el('span', { class: 'muted' }, ' from the Esplora address below (the only request this page can make)'),
        out,
      ),
    );
  }
  li.append(body);
  return li;
}

function render(report: Report): void {
  const summary = $('summary');
  summary.dataset.state = report.summary.state;
  // The verdict in bold, the reason after it in normal weight (the text reads the same either way).
  const split = report.summary.text.indexOf(': ');
  summary.replaceChildren(
    ...(split > 0
      ? [
          el('strong', {}, report.summary.text.slice(0, split)),
          el('span', { class: 'reason' }, report.summary.text.slice(split)),
        ]
      : [report.summary.text]),
  );
  const container = $('sections');
  container.replaceChildren(
    ...report.sections.map((s, i) => {
      const id = `section-${i}`;
      const section = el(
        'section',
        { class: 'result', 'aria-labelledby': id },
        el('h3', { id }, s.title),
        el('ul', { class: 'checks' }, ...s.checks.map(renderCheck)),
      );
      if (s.tree)
        section.append(
          el('details', {}, el('summary', {}, 'Show the proof path (as ots info prints it)'), el('pre', {}, s.tree)),
        );
      return section;
    }),
  );
  const list = $('file-list');
  list.replaceChildren(
    ...state.files.map((f) => {
      const remove = el('button', { type: 'button', class: 'link', 'aria-label': `Remove ${f.name}` }, 'Remove');
      remove.addEventListener('click', () => {
        state.files = state.files.filter((x) => x !== f);
        if (state.loadedKeys.ecdsa?.source === f.name && f.kind === 'ecdsa-key') delete state.loadedKeys.ecdsa;
        if (state.loadedKeys.mldsa?.source === f.name && f.kind === 'mldsa-key') delete state.loadedKeys.mldsa;
        if (f.kind === 'vkey' || f.kind === 'receipt-key')
          for (const k of ['ed25519', 'mldsa44', 'receiptEs256', 'receiptMldsa65'] as const)
            if (state.loadedKeys[k]?.source === f.name) delete state.loadedKeys[k];
        if (f.kind === 'retired-receipt-keys' && state.loadedKeys.retiredReceipt?.source === f.name)
          delete state.loadedKeys.retiredReceipt;
        refresh();
      });
      return el(
        'li',
        {},
        el('span', { class: 'name' }, f.name),
        ' ',
        el('span', { class: 'kind' }, `${KIND_LABEL[f.kind]}, ${formatSize(f.bytes.length)}`),
        ' ',
        remove,
      );
    }),
  );
  $('file-count').textContent = state.files.length
    ? `${state.files.length} file${state.files.length > 1 ? 's' : ''} given`
    : '';
  renderKeys();
}

function renderKeys(): void {
  const rows: string[] = [];
  for (const [name, k] of [
    ['ECDSA P-256', activeKeys().ecdsa],
    ['ML-DSA-65', activeKeys().mldsa],
  ] as const) {
    rows.push(k ? `${name}: from ${k.source}` : `${name}: none`);
  }
  for (const [name, k] of [
    ['Ed25519', activeKeys().ed25519],
    ['ML-DSA-44', activeKeys().mldsa44],
    ['ES256 receipt key', activeKeys().receiptEs256],
    ['ML-DSA-65 receipt key', activeKeys().receiptMldsa65],
  ] as const)
    if (k) rows.push(`${name}: from ${k.source}`);
  const retired = activeKeys().retiredReceipt;
  if (retired) rows.push(`Retired receipt keys (${retired.keys.length}): from ${retired.source}`);
  $('keys-status').textContent = rows.join('. ') + '.';
  $('keys-reset').hidden = Object.keys(state.loadedKeys).length === 0;
}

function activeKeys(): Keys {
  const keys: Keys = {};
  for (const name of KEY_NAMES) {
    const k = state.loadedKeys[name] ?? builtIn[name];
    if (k) keys[name] = k;
  }
  const retired = state.loadedKeys.retiredReceipt ?? builtIn.retiredReceipt;
  if (retired) keys.retiredReceipt = retired;
  return keys;
}

let checking = 0;

/** Checks everything again and shows the report, from any event handler (nothing awaits it). */
function refresh(): void {
  void check();
}

/** Checks everything again and shows the report (only the newest run's: Web Crypto answers asynchronously). */
async function check(): Promise<void> {
  const run = ++checking;
  const loaded = state.files.filter((f) => f.kind === 'tsa-ca' && Array.isArray(f.value));
  // The TSAs' authorities are the person's to give (tsa-ca.pem, timeseal-tsa-root.pem from /keys/, or their own
  // copies), like the witness policy (checks.ts reads it from the files). Every certificate given is trusted as an
  // authority, for the day's tokens and for receipts alike.
  const authority = loaded.length
    ? { certs: loaded.flatMap((f) => f.value as Uint8Array[]), source: loaded.map((f) => f.name).join(', ') }
    : undefined;
  const inputs = {
    ...(authority ? { authority } : {}),
    ...(state.document
      ? {
          document: {
            hash: state.document.hash,
            source: state.document.source,
            digests: Object.fromEntries(Object.entries(state.document.digests ?? {}).filter(([, d]) => d)),
          },
        }
      : {}),
    files: state.files,
    keys: activeKeys(),
    fetchedHeaders: state.fetched,
    network: $<HTMLSelectElement>('network').value === 'regtest' ? ('regtest' as const) : ('mainnet' as const),
  };
  // ECDSA P-256 is Web Crypto's (p256.ts): the checks run until every signature they read was checked there.
  let report: Report;
  try {
    report = await settled(
      () => verifyInputs(inputs),
      state.files.filter((f) => f.kind === 'ledger').map((f) => f.bytes),
    );
  } catch (err) {
    report = { summary: { state: 'fail', text: `Not verified: ${(err as Error).message}` }, sections: [] };
  }
  if (run === checking) render(report);
}

// --- Wiring ---------------------------------------------------------------------------------------------

function dropZone(zone: HTMLElement, onFiles: (files: FileList) => void): void {
  zone.addEventListener('dragover', (e) => {
    e.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    e.stopPropagation();
    zone.classList.remove('over');
    if (e.dataTransfer?.files.length) onFiles(e.dataTransfer.files);
  });
}

function installable(): void {
  // Over HTTP(S) only: a file opened from disk has nothing to install and must not request anything.
  if (location.protocol !== 'https:' && location.protocol !== 'http:') return;
  document.head.append(el('link', { rel: 'manifest', href: 'offline-verifier.webmanifest' }));
  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.register('offline-verifier-sw.js', { scope: 'offline-verifier' }).catch(() => undefined);
  }
}

function start(): void {
  applyTheme(storedTheme());
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => applyTheme(storedTheme()));
  $('theme').addEventListener('click', () => {
    const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    try {
      localStorage.setItem('theme', next);
    } catch {
      // Private mode: the choice lasts until the page closes.
    }
    applyTheme(next);
  });
  $('version').textContent = BUILD.version;
  const docInput = $<HTMLInputElement>('doc-file');
  docInput.addEventListener('change', () => {
    const files = [...(docInput.files ?? [])];
    if (files.length) void addDocumentFiles(files);
    docInput.value = '';
  });
  const proofInput = $<HTMLInputElement>('proof-files');
  proofInput.addEventListener('change', () => {
    if (proofInput.files?.length) void addFiles(proofInput.files).then(() => (proofInput.value = ''));
  });
  const keyInput = $<HTMLInputElement>('key-files');
  keyInput.addEventListener('change', () => {
    if (keyInput.files?.length) void addFiles(keyInput.files).then(() => (keyInput.value = ''));
  });
  $('keys-reset').addEventListener('click', () => {
    state.loadedKeys = {};
    state.files = state.files.filter(
      (f) => !['ecdsa-key', 'mldsa-key', 'vkey', 'receipt-key', 'retired-receipt-keys'].includes(f.kind),
    );
    refresh();
  });
  $('hash-input').addEventListener('input', onHashInput);
  $('network').addEventListener('change', refresh);
  $('paste-add').addEventListener('click', onPaste);
  $('clear').addEventListener('click', () => {
    state.files = [];
    state.fetched = [];
    state.loadedKeys = {};
    state.document = undefined;
    state.hashing++;
    $<HTMLInputElement>('hash-input').value = '';
    $('doc-status').textContent = '';
    $('paste-status').textContent = '';
    $<HTMLProgressElement>('doc-progress').hidden = true;
    refresh();
  });
  dropZone($('doc-drop'), (files) => void addDocumentFiles(files));
  dropZone($('proof-drop'), (files) => void addFiles(files));
  // A file dropped anywhere else is a proof file; never let the browser navigate away to show it.
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    if (e.dataTransfer?.files.length) void addFiles(e.dataTransfer.files);
  });
  $('builtin-keys').textContent =
    builtIn.ecdsa || builtIn.mldsa
      ? 'This file has the Timeseal public keys built in; their fingerprints are listed under Result.'
      : 'This copy was built without public keys: load public.pem and dilithium_public.key (from the archive’s /keys/) below.';
  installable();
  refresh();
}

start();
