// Builds the offline verifier (site/offline-verifier/README.md): one self-contained HTML file with its script and style inline,
// bundled from src/ and core/ by esbuild, with the public keys of --keys DIR (default keys/; `make build` passes
// TIMESEAL_KEYS) built in when they exist. Run by `make build` (scripts/build.ts) after Astro. Writes, into --out DIR (default dist/site):
//   offline-verifier.html           the verifier
//   offline-verifier.html.sha256    its SHA-256 in sha256sum format
//   offline-verifier.webmanifest    web app manifest (used only when served over HTTP(S))
//   offline-verifier-sw.js          service worker that keeps the page for offline use
// The verifier's script is kept in the page deflated and base64-encoded, and src/boot.js inflates and runs it
// (the Content-Security-Policy names both scripts by their SHA-256). Prints the file's size and the script's,
// and fails when the file is over MAX_BYTES. The output is reproducible: same sources and keys, same bytes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { build, transform } from 'esbuild';
import { parseRetiredReceiptKeys } from '../../core/cose-receipt.ts';
import { parseVkey } from '../../core/cosignature.ts';
import {
  ecdsaPublicKeyFromPem,
  ecdsaPublicKeyToSpkiDer,
  fingerprint,
  mldsaPublicKeyFromPem,
  MLDSA_PUBLIC_KEY_SIZE,
} from '../../core/sig.ts';
import { toBase64 } from '../../core/encoding.ts';
import { VERIFIER_KEY_FILES } from './key-files.ts';
import { verifierSizeText } from './size.ts';

export const VERSION = '2.0';
/** The file stays at most 160 KiB (163,840 bytes). */
export const MAX_BYTES = 160 * 1024;
export const PAGE_NAME = 'offline-verifier.html';

const HERE = import.meta.dirname;
const SRC = path.join(HERE, 'src');
const ACCENT: [number, number, number] = [0x3b, 0x4f, 0xd8];

export interface BuildOptions {
  outDir: string;
  keysDir: string;
}

export interface BuildResult {
  file: string;
  size: number;
  /** The verifier's script as it runs (inflated), bytes, and its SHA-256 (hex; base64 in the page's CSP). */
  script: { size: number; sha256: string };
  sha256: string;
  keys: { ecdsa: string | null; mldsa: string | null; missing: string[] };
}

interface BuiltInKeys {
  ecdsaPem: string | null;
  mldsaKey: string | null;
  missing: string[];
  fingerprints: { ecdsa: string | null; mldsa: string | null };
}

/** Reads keys/public.pem and keys/dilithium_public.key (or .pem); a missing file is reported, a bad one fails. */
function readKeys(dir: string): BuiltInKeys {
  const out: BuiltInKeys = { ecdsaPem: null, mldsaKey: null, missing: [], fingerprints: { ecdsa: null, mldsa: null } };
  const ecdsaFile = path.join(dir, VERIFIER_KEY_FILES.ecdsa);
  if (fs.existsSync(ecdsaFile)) {
    const pem = fs.readFileSync(ecdsaFile, 'utf8');
    const key = ecdsaPublicKeyFromPem(pem);
    out.ecdsaPem = pem;
    out.fingerprints.ecdsa = fingerprint(ecdsaPublicKeyToSpkiDer(key));
  } else out.missing.push(ecdsaFile);
  const rawFile = path.join(dir, VERIFIER_KEY_FILES.mldsa);
  const pemFile = path.join(dir, VERIFIER_KEY_FILES.mldsaPem);
  let raw: Uint8Array | undefined;
  if (fs.existsSync(rawFile)) raw = new Uint8Array(fs.readFileSync(rawFile));
  else if (fs.existsSync(pemFile)) raw = mldsaPublicKeyFromPem(fs.readFileSync(pemFile, 'utf8'));
  else out.missing.push(rawFile);
  if (raw) {
    if (raw.length !== MLDSA_PUBLIC_KEY_SIZE)
      throw new Error(`${rawFile}: ${raw.length} bytes, an ML-DSA-65 public key is ${MLDSA_PUBLIC_KEY_SIZE}`);
    out.mldsaKey = toBase64(raw);
    out.fingerprints.mldsa = fingerprint(raw);
  }
  return out;
}

/** The COSE receipt keys (keys/receipt-es256.pem, keys/receipt-mldsa65.pem; docs/FORMAT.md §11), when present:
 * ES256 (-7) and ML-DSA-65 (-49), each as its raw public key in base64. A present but malformed key fails. */
function readReceiptKeys(dir: string): Array<{ alg: number; key: string }> {
  const out: Array<{ alg: number; key: string }> = [];
  const es256 = path.join(dir, VERIFIER_KEY_FILES.receiptEs256);
  const mldsa = path.join(dir, VERIFIER_KEY_FILES.receiptMldsa65);
  if (fs.existsSync(es256)) out.push({ alg: -7, key: toBase64(ecdsaPublicKeyFromPem(fs.readFileSync(es256, 'utf8'))) });
  if (fs.existsSync(mldsa))
    out.push({ alg: -49, key: toBase64(mldsaPublicKeyFromPem(fs.readFileSync(mldsa, 'utf8'))) });
  return out;
}

/** keys/receipt-keys.retired (the receipt keys a rotation retired, with the days they signed), checked, or null. */
function readRetiredReceiptKeys(dir: string): string | null {
  const file = path.join(dir, VERIFIER_KEY_FILES.retiredReceipts);
  if (!fs.existsSync(file)) return null;
  const text = fs.readFileSync(file, 'utf8');
  parseRetiredReceiptKeys(text);
  return text;
}

/** keys/ed25519.vkey and keys/mldsa44.vkey, when the archive has them (checked, one line each). */
function readVkeys(dir: string): string[] {
  return [VERIFIER_KEY_FILES.ed25519, VERIFIER_KEY_FILES.mldsa44]
    .map((name) => path.join(dir, name))
    .filter((file) => fs.existsSync(file))
    .map((file) => {
      const text = fs.readFileSync(file, 'utf8').trim();
      parseVkey(text);
      return text;
    });
}

// --- App icon: a small PNG drawn here (rounded square, ring, check mark), so the build needs no image files ---

function crc32(bytes: Uint8Array): number {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function segmentDistance(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/** Shades of the icon's palette form, from the accent colour to white. */
const SHADES = 32;

/**
 * PNG of the icon at `size` pixels (4×4 supersampling). `full` fills the square (maskable and Apple icons), and is
 * written with a palette of SHADES colours, one byte a pixel (a third of the RGBA size: the page carries one).
 */
export function iconPng(size: number, full = false): Buffer {
  const rows: Buffer[] = [];
  const s = 4;
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * (full ? 1 : 4));
    for (let x = 0; x < size; x++) {
      let bg = 0;
      let fg = 0;
      for (let sy = 0; sy < s; sy++) {
        for (let sx = 0; sx < s; sx++) {
          const u = (x + (sx + 0.5) / s) / size;
          const v = (y + (sy + 0.5) / s) / size;
          const r = 0.2;
          const qx = Math.max(Math.abs(u - 0.5) - (0.5 - r), 0);
          const qy = Math.max(Math.abs(v - 0.5) - (0.5 - r), 0);
          if (!full && Math.hypot(qx, qy) > r) continue;
          bg++;
          const d = Math.hypot(u - 0.5, v - 0.5);
          const ring = d > 0.27 && d < 0.33;
          const check =
            Math.min(segmentDistance(u, v, 0.37, 0.51, 0.46, 0.6), segmentDistance(u, v, 0.46, 0.6, 0.64, 0.41)) <
            0.035;
          if (ring || check) fg++;
        }
      }
      const n = s * s;
      const a = bg / n;
      const f = bg ? fg / bg : 0;
      if (full) {
        row[1 + x] = Math.round(f * (SHADES - 1));
        continue;
      }
      const o = 1 + x * 4;
      for (let c = 0; c < 3; c++) row[o + c] = Math.round(ACCENT[c]! * (1 - f) + 255 * f);
      row[o + 3] = Math.round(a * 255);
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, full ? 3 : 6, 0, 0, 0], 8);
  const palette = Buffer.alloc(3 * SHADES);
  for (let i = 0; i < SHADES; i++)
    for (let c = 0; c < 3; c++)
      palette[3 * i + c] = Math.round(ACCENT[c]! * (1 - i / (SHADES - 1)) + (255 * i) / (SHADES - 1));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    ...(full ? [pngChunk('PLTE', palette)] : []),
    pngChunk('IDAT', zlib.deflateSync(Buffer.concat(rows), { level: 9 })),
    pngChunk('IEND', new Uint8Array(0)),
  ]);
}

const ICON_SVG =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 64 64'%3E%3Crect width='64' height='64' rx='13' fill='%233b4fd8'/%3E%3Ccircle cx='32' cy='32' r='19.2' fill='none' stroke='%23fff' stroke-width='3.8'/%3E%3Cpath d='M23.7 32.6l5.8 5.8 11.5-12.2' fill='none' stroke='%23fff' stroke-width='4.5' stroke-linecap='round' stroke-linejoin='round'/%3E%3C/svg%3E";

const dataUrl = (png: Buffer): string => `data:image/png;base64,${png.toString('base64')}`;

function cspHash(text: string): string {
  return `'sha256-${crypto.createHash('sha256').update(text).digest('base64')}'`;
}

/** Builds the four files; throws when the page would be over MAX_BYTES. */
export async function buildVerifier(options: BuildOptions): Promise<BuildResult> {
  const keys = readKeys(options.keysDir);
  const bundle = await build({
    entryPoints: [path.join(SRC, 'main.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2022', 'chrome100', 'safari15', 'firefox100'],
    charset: 'utf8',
    legalComments: 'none',
    write: false,
    define: {
      __VERIFIER_BUILD__: JSON.stringify({
        version: VERSION,
        ecdsaPem: keys.ecdsaPem,
        mldsaKey: keys.mldsaKey,
        vkeys: readVkeys(options.keysDir),
        receiptKeys: readReceiptKeys(options.keysDir),
        retiredReceiptKeys: readRetiredReceiptKeys(options.keysDir),
      }),
    },
    logLevel: 'warning',
    // ECDSA P-256 with the browser's Web Crypto (src/p256.ts) instead of @noble/curves, for core/sig.ts.
    plugins: [
      {
        name: 'web-crypto-p256',
        setup: (b) =>
          void b.onResolve({ filter: /^@noble\/curves\/nist\.js$/ }, () => ({ path: path.join(SRC, 'p256.ts') })),
      },
    ],
  });
  const script = bundle.outputFiles[0]!.text.trim();
  const scriptBytes = Buffer.from(script, 'utf8');
  // Deflated (zlib, level 9) and base64: about a third of the script's size. The data block is not run; boot.js
  // inflates it and runs it as an inline script, allowed by its hash.
  const payload = zlib.deflateSync(scriptBytes, { level: 9 }).toString('base64');
  const boot = (
    await transform(fs.readFileSync(path.join(SRC, 'boot.js'), 'utf8'), {
      loader: 'js',
      minify: true,
      target: 'es2022',
    })
  ).code.trim();
  const style = (
    await transform(fs.readFileSync(path.join(SRC, 'style.css'), 'utf8'), { loader: 'css', minify: true })
  ).code.trim();
  // The template's indentation is for reading it (~350 bytes of the budget): dropped; its line breaks stay, so the
  // text reads the same (it has no <pre>, and its one <textarea> is empty).
  const template = fs.readFileSync(path.join(SRC, 'page.html'), 'utf8').replace(/^[ \t]+/gm, '');
  const fill: Record<string, string> = {
    __VERSION__: VERSION,
    __ICON_SVG__: ICON_SVG,
    __ICON_180__: dataUrl(iconPng(180, true)),
    __STYLE__: style,
    __SCRIPT__: payload,
    __BOOT__: boot,
  };
  let html = template.replace(/__(VERSION|ICON_SVG|ICON_180|STYLE|SCRIPT|BOOT)__/g, (m) => fill[m]!);
  // Tighten the CSP from 'unsafe-inline' to the hashes of this exact boot script, verifier script and style.
  html = html
    .replace("script-src 'unsafe-inline'", `script-src ${cspHash(boot)} ${cspHash(script)}`)
    .replace("style-src 'unsafe-inline'", `style-src ${cspHash(style)}`);
  const bytes = Buffer.from(html, 'utf8');
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  if (bytes.length > MAX_BYTES) {
    throw new Error(`${PAGE_NAME} is ${bytes.length} bytes, over the limit of ${MAX_BYTES} (160 KiB)`);
  }
  fs.mkdirSync(options.outDir, { recursive: true });
  const file = path.join(options.outDir, PAGE_NAME);
  fs.writeFileSync(file, bytes);
  fs.writeFileSync(`${file}.sha256`, `${sha256}  ${PAGE_NAME}\n`);
  const manifest = {
    name: 'Timeseal Offline Verifier',
    short_name: 'Verifier',
    description: 'Check Timeseal proofs with no network.',
    id: PAGE_NAME,
    start_url: PAGE_NAME,
    scope: 'offline-verifier',
    display: 'standalone',
    background_color: '#0f1420',
    theme_color: '#3b4fd8',
    icons: [
      { src: dataUrl(iconPng(192)), sizes: '192x192', type: 'image/png', purpose: 'any' },
      { src: dataUrl(iconPng(512)), sizes: '512x512', type: 'image/png', purpose: 'any' },
      { src: dataUrl(iconPng(512, true)), sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
  };
  fs.writeFileSync(path.join(options.outDir, 'offline-verifier.webmanifest'), `${JSON.stringify(manifest, null, 2)}\n`);
  const sw = fs.readFileSync(path.join(SRC, 'sw.js'), 'utf8').replace('__PAGE_SHA256__', sha256.slice(0, 16));
  fs.writeFileSync(path.join(options.outDir, 'offline-verifier-sw.js'), sw);
  return {
    file,
    size: bytes.length,
    script: { size: scriptBytes.length, sha256: crypto.createHash('sha256').update(scriptBytes).digest('hex') },
    sha256,
    keys: { ecdsa: keys.fingerprints.ecdsa, mldsa: keys.fingerprints.mldsa, missing: keys.missing },
  };
}

function parseArgs(argv: string[]): BuildOptions {
  let outDir = 'dist/site';
  let keysDir = 'keys';
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) outDir = argv[++i]!;
    else if (argv[i] === '--keys' && argv[i + 1]) keysDir = argv[++i]!;
    else
      throw new Error(
        `usage: node site/offline-verifier/build.ts [--out DIR] [--keys DIR]  (unknown argument ${argv[i]})`,
      );
  }
  return { outDir, keysDir };
}

if (import.meta.main) {
  try {
    const options = parseArgs(process.argv.slice(2));
    const r = await buildVerifier(options);
    const bytes = (n: number) => n.toLocaleString('en-US');
    process.stdout.write(
      `offline verifier ${VERSION}: ${r.file}, ${verifierSizeText(r.size)} (${bytes(r.size)} bytes; limit ${bytes(MAX_BYTES)} bytes, ${MAX_BYTES / 1024} KiB), sha256 ${r.sha256}\n` +
        `  its script inflated: ${bytes(r.script.size)} bytes, sha256 ${r.script.sha256}\n`,
    );
    if (r.keys.ecdsa || r.keys.mldsa) {
      process.stdout.write(
        `  built-in keys: ECDSA P-256 ${r.keys.ecdsa ?? 'none'}, ML-DSA-65 ${r.keys.mldsa ?? 'none'}\n`,
      );
    }
    if (r.keys.missing.length > 0) {
      process.stdout.write(
        `  no built-in key for: ${r.keys.missing.join(', ')} (absent); the page asks people to load keys\n`,
      );
    }
  } catch (err) {
    process.stderr.write(`offline verifier: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
