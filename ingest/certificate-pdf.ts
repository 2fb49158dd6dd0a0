// The timestamp certificate as a PDF (GET /api/certificate.php?…&format=pdf, docs/API.md): an A4 document styled
// like the site (slate text, emerald accents). Page 1 is for a person: what was proved in plain words
// (certificateSummary: who recorded which hash, when, where it is published, how anyone checks it), the file name,
// hash, times, the signatures' verdict, the Bitcoin status and a QR code of the online verification link. The
// machine material is attached (the receipt .tsr, the proof bundle, the day's checkpoint) and summed up on one
// appendix page (each verdict, leaf, ledger SHA-256, the checkpoint's head, how to verify without Timeseal); the
// checkpoint's signature lines (several KB of base64) are never drawn. pdf-lib writes it (no browser, no native
// code); the QR code is drawn as vector squares from the `qrcode` package's module matrix. Text is drawn as text,
// never parsed: a file name holding markup is just characters. User text (the file name) uses DejaVu Sans when the
// system has it (every script it covers); otherwise, or for a character the font lacks, the character becomes "?".
// What it draws is capped (MAX_FILE_NAME, MAX_TEXT): drawing is synchronous, and a 100 KB file name from the
// database blocked the event loop for 17-19 s here and filled 28 pages. When the server kept the hash's RFC 3161
// receipt (the site's submissions, Store.receipts), page 1 names it, the appendix states it (time, TSA, serial
// number, the OpenSSL command) and the DER file itself is attached to the PDF as <first 16 hex of the hash>.tsr.
import fs from 'node:fs';
import type { PDFDocument, PDFFont, PDFPage, RGB } from 'pdf-lib';

/** The hash's RFC 3161 receipt from Timeseal's TSA (checked by the caller, core/receipt.ts). */
export interface CertificateReceipt {
  /** The attachment's and the download's file name: `<first 16 hex of the hash>.tsr`. */
  file: string;
  /** genTime, ISO. */
  genTime: string;
  tsaName: string;
  /** The TSTInfo's serial number, hex. */
  serialNumber: string;
  /** The DER TimeStampResp. */
  der: Uint8Array;
}

/** The receipt's file name: the first 16 hex of the hash, `.tsr`. */
export const receiptFileName = (hash: string): string => `${hash.slice(0, 16)}.tsr`;

/** The OpenSSL command that checks a receipt for the hash, with the two certificates of the site's /keys/. */
export const receiptCommand = (hash: string, file: string): string =>
  `openssl ts -verify -digest ${hash} -in ${file} -CAfile timeseal-tsa-root.pem -untrusted timeseal-tsa.pem`;

/** A serial number as OpenSSL prints it: 0x and the hex digits without leading zeros. */
export const serialText = (hex: string): string => `0x${hex.replace(/^0+(?=.)/, '').toUpperCase()}`;

export interface CertificateLink {
  label: string;
  url: string;
}

export interface CertificateView {
  /** published: the hash is in a published ledger; pending: a history row whose day is not published yet. */
  state: 'published' | 'pending';
  hash: string;
  fileName: string | null;
  submittedAt: string;
  ledgerDate: string;
  leaf?: string;
  ledgerSha256?: string;
  ecdsa?: boolean;
  mldsa?: boolean;
  dual?: boolean;
  bitcoin: { ok: boolean; text: string };
  checkpoint?: string;
  /** Absolute URL of /verify?hash=…&search=true. */
  verifyUrl: string;
  /** What to do next (pending items: when to come back). */
  next?: string;
  /** Whether the ledger's OpenTimestamps proof (D.json.ots) exists. */
  anchored?: boolean;
  /** Absolute URLs of files that exist now. */
  files: CertificateLink[];
  /** The ledger file's RFC 3161 tokens (checked): file name, stated time, TSA. */
  rfc3161?: { file: string; genTime: string; tsaName: string }[];
  /** The hash's receipt of this submission's day, when the server kept one: drawn and attached. */
  receipt?: CertificateReceipt;
  /** The proof bundle (timeseal-proof/3 JSON) of a published hash: attached under `file`. */
  bundle?: { file: string; text: string };
  /** The pipeline's words for a delayed anchoring (calendars, errors): in the appendix only. */
  anchoringDetails?: string;
  origin: string;
}

/** The longest file name the plain-words statement quotes; a longer one is only in its own row. */
const SUMMARY_FILE_NAME = 80;

/** The plain-words statement at the top of both certificates (HTML and PDF): who recorded what, when, where it
 *  is published, and that anyone can check it. */
export function certificateSummary(v: {
  hash: string;
  fileName: string | null;
  submittedAt: string;
  ledgerDate: string;
  origin: string;
  signed: boolean;
  pending?: boolean;
}): string {
  const what =
    v.fileName === null
      ? 'the SHA-256 hash below'
      : v.fileName.length <= SUMMARY_FILE_NAME
        ? `the SHA-256 hash below, of the file "${v.fileName}",`
        : 'the SHA-256 hash below, of the file named below,';
  const when = v.submittedAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
  if (v.pending)
    return `Timeseal (${v.origin}) recorded ${what} at ${when}. It enters the public ledger of ${v.ledgerDate}, published and signed at 00:01 UTC the next day; this certificate then says where, and how anyone checks it. Only the hash was sent: the file never left its owner.`;
  return `Timeseal (${v.origin}) recorded ${what} at ${when}. It is in the public ledger of ${v.ledgerDate}, published at ${v.origin}/ledgers/${v.ledgerDate}.json and signed with two independent signatures (ECDSA P-256 and the quantum-resistant ML-DSA-65)${v.signed ? ', both verified' : ''}. Anyone can check this without Timeseal, with the files attached to this certificate or linked from it and the public keys. Only the hash was sent: the file never left its owner.`;
}

/** The site's colours, made with pdf-lib's rgb() once it is loaded. */
const palette = (rgb: typeof import('pdf-lib').rgb) => ({
  SLATE_900: rgb(0x0f / 255, 0x17 / 255, 0x2a / 255),
  SLATE_600: rgb(0x47 / 255, 0x55 / 255, 0x69 / 255),
  SLATE_200: rgb(0xe2 / 255, 0xe8 / 255, 0xf0 / 255),
  SLATE_50: rgb(0xf8 / 255, 0xfa / 255, 0xfc / 255),
  EMERALD_700: rgb(0x04 / 255, 0x78 / 255, 0x57 / 255),
  EMERALD_50: rgb(0xec / 255, 0xfd / 255, 0xf5 / 255),
  AMBER_800: rgb(0x92 / 255, 0x40 / 255, 0x0e / 255),
  AMBER_50: rgb(0xff / 255, 0xfb / 255, 0xeb / 255),
  RED_800: rgb(0x99 / 255, 0x1b / 255, 0x1b / 255),
  RED_50: rgb(0xfe / 255, 0xf2 / 255, 0xf2 / 255),
  WHITE: rgb(1, 1, 1),
});
type Palette = ReturnType<typeof palette>;

type Fontkit = typeof import('@pdf-lib/fontkit');
/** pdf-lib, fontkit, qrcode and the palette, loaded by the first certificate drawn (~0.45 s of CPU to load): the
 * server starts without them, and a node that never draws a certificate never pays for them. fontkit is a
 * CommonJS module: the import's default is the module itself. */
let pdfLib:
  Promise<{ pdf: typeof import('pdf-lib'); fontkit: Fontkit; QRCode: typeof import('qrcode'); C: Palette }> | undefined;
const loadPdfLib = () =>
  (pdfLib ??= Promise.all([import('pdf-lib'), import('@pdf-lib/fontkit'), import('qrcode')]).then(
    ([pdf, fontkit, qrcode]) => ({
      pdf,
      fontkit: (fontkit as unknown as { default: Fontkit }).default,
      QRCode: qrcode.default,
      C: palette(pdf.rgb),
    }),
  ));

const UNICODE_FONTS = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/TTF/DejaVuSans.ttf',
];
let unicodeFontBytes: Buffer | null | undefined;
function unicodeFont(): Buffer | null {
  if (unicodeFontBytes === undefined) {
    unicodeFontBytes = null;
    for (const file of UNICODE_FONTS) {
      try {
        unicodeFontBytes = fs.readFileSync(file);
        break;
      } catch {
        // next
      }
    }
  }
  return unicodeFontBytes;
}

/** The most characters of the file name drawn (the 300 of a long real name fit; longer ones end in "…"). */
export const MAX_FILE_NAME = 400;
/** The most characters of any other text drawn in one piece (the longest Timeseal writes is a checkpoint's
 *  ML-DSA-65 signature line, about 4,500). */
export const MAX_TEXT = 10_000;

/** `text` cut to `max` UTF-16 units, the last one "…" when cut (never half a surrogate pair). */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const kept = text.slice(0, max - 1);
  return `${/[\uD800-\uDBFF]$/.test(kept) ? kept.slice(0, -1) : kept}…`;
}

/** Each font's character set, made once (DejaVu Sans has about 6,000). */
const characterSets = new WeakMap<PDFFont, Set<number>>();

/** Keeps what `font` can draw (at most MAX_TEXT characters); control characters and anything else become "?". */
function drawable(text: string, font: PDFFont): string {
  let set = characterSets.get(font);
  if (set === undefined) characterSets.set(font, (set = new Set(font.getCharacterSet())));
  let out = '';
  for (const ch of clip(text, MAX_TEXT)) {
    const cp = ch.codePointAt(0)!;
    out += cp >= 0x20 && cp !== 0x7f && set.has(cp) ? ch : '?';
  }
  return out;
}

/** Lines of at most `width` points, broken at spaces, and inside a word longer than a line. */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/(?<= )/)) {
      if (font.widthOfTextAtSize(line + word, size) <= width) {
        line += word;
        continue;
      }
      if (line !== '') lines.push(line.trimEnd());
      line = '';
      for (const ch of word) {
        if (line !== '' && font.widthOfTextAtSize(line + ch, size) > width) {
          lines.push(line);
          line = '';
        }
        line += ch;
      }
    }
    lines.push(line.trimEnd());
  }
  return lines;
}

const fmtTime = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');

/** A4 in points, and the margin. */
const W = 595.28;
const H = 841.89;
const M = 48;

interface Fonts {
  sans: PDFFont;
  bold: PDFFont;
  mono: PDFFont;
  /** For the file name: DejaVu Sans when the system has it, else Helvetica. */
  user: PDFFont;
}

/** The document being written top to bottom: its current page and the pen's height `y` on it, with the fonts
 *  and colours every part draws with. A paragraph that reaches the bottom margin goes on on a new page. */
class Sheet {
  readonly doc: PDFDocument;
  readonly fonts: Fonts;
  readonly C: Palette;
  page: PDFPage;
  y = H - M;
  constructor(doc: PDFDocument, fonts: Fonts, C: Palette) {
    this.doc = doc;
    this.fonts = fonts;
    this.C = C;
    this.page = doc.addPage([W, H]);
  }

  newPage(): void {
    this.page = this.doc.addPage([W, H]);
    this.y = H - M;
  }

  text(s: string, x: number, size: number, font: PDFFont, color: RGB = this.C.SLATE_900): void {
    this.page.drawText(drawable(s, font), { x, y: this.y, size, font, color });
  }

  para(
    s: string,
    x: number,
    width: number,
    size: number,
    font: PDFFont,
    color = this.C.SLATE_900,
    leading = size * 1.35,
  ) {
    for (const line of wrap(drawable(s, font), font, size, width)) {
      if (this.y < M + leading) this.newPage();
      this.text(line, x, size, font, color);
      this.y -= leading;
    }
  }

  /** A verdict in a framed box at `x` on the pen's line, green when `ok`; returns its width. */
  badge(x: number, ok: boolean | undefined, t: string): number {
    const { bold } = this.fonts;
    const { C } = this;
    const w = bold.widthOfTextAtSize(t, 9) + 14;
    this.page.drawRectangle({
      x,
      y: this.y - 4,
      width: w,
      height: 15,
      color: ok ? C.EMERALD_50 : C.RED_50,
      borderColor: ok ? C.EMERALD_700 : C.RED_800,
      borderWidth: 0.6,
    });
    this.text(t, x + 7, 9, bold, ok ? C.EMERALD_700 : C.RED_800);
    return w;
  }
}

const baseOf = (v: CertificateView): string => v.origin.replace(/\/+$/, '');
const checkpointFileOf = (v: CertificateView): string => `${v.ledgerDate}.checkpoint`;

export async function certificatePdf(v: CertificateView): Promise<Uint8Array> {
  const { pdf, fontkit, QRCode, C } = await loadPdfLib();
  const { PDFDocument, StandardFonts } = pdf;
  const doc = await PDFDocument.create();
  doc.setTitle(`Timestamp certificate ${v.hash}`);
  doc.setAuthor('Timeseal');
  doc.setSubject(`SHA-256 ${v.hash}, ledger of ${v.ledgerDate}`);
  doc.setCreator('Timeseal');
  doc.setProducer('Timeseal (pdf-lib)');
  const sans = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const mono = await doc.embedFont(StandardFonts.Courier);
  let user = sans;
  const ttf = unicodeFont();
  if (ttf) {
    doc.registerFontkit(fontkit);
    user = await doc.embedFont(ttf, { subset: true });
  }
  const sheet = new Sheet(doc, { sans, bold, mono, user }, C);

  // Page 1, for a person: what was proved, in plain words; then how to check it.
  drawSummary(sheet, v);
  drawFacts(sheet, v);
  drawVerifyOnline(sheet, v, QRCode.create(v.verifyUrl, { errorCorrectionLevel: 'M' }));
  drawHowToCheck(sheet, v);
  await attachMaterial(doc, v);
  // One appendix page: the machine material, for whoever checks it by hand.
  sheet.newPage();
  drawMachineMaterial(sheet, v);
  drawStepsWithoutTimeseal(sheet, v);
  return doc.save();
}

/** The green band with the title, and the summary in plain words (certificateSummary). */
function drawSummary(s: Sheet, v: CertificateView): void {
  const { C, fonts } = s;
  s.page.drawRectangle({ x: 0, y: H - 96, width: W, height: 96, color: C.EMERALD_700 });
  s.y = H - 44;
  s.text('Timeseal', M, 12, fonts.bold, C.WHITE);
  s.y = H - 72;
  s.text(
    v.state === 'pending' ? 'Timestamp Certificate (pending)' : 'Timestamp Certificate',
    M,
    22,
    fonts.bold,
    C.WHITE,
  );
  s.y = H - 124;
  s.para(
    certificateSummary({
      hash: v.hash,
      fileName: v.fileName,
      submittedAt: v.submittedAt,
      ledgerDate: v.ledgerDate,
      origin: baseOf(v),
      signed: v.dual === true,
      pending: v.state === 'pending',
    }),
    M,
    W - 2 * M,
    10.5,
    v.fileName === null ? fonts.sans : fonts.user,
    C.SLATE_900,
    14.5,
  );
  s.y -= 6;
}

/** The framed card of facts: file name, hash, times, where it is published, the signatures' and Bitcoin's
 *  verdicts, the receipt, and what comes next. */
function drawFacts(s: Sheet, v: CertificateView): void {
  const { C } = s;
  const { sans, bold, mono, user } = s.fonts;
  const base = baseOf(v);
  const cardTop = s.y - 4;
  s.y = cardTop - 22;
  const labelX = M + 14;
  const valueX = M + 130;
  const valueW = W - M - 14 - valueX;
  const drawRow = (label: string, value: string, font: PDFFont, width: number, color: RGB = C.SLATE_900) => {
    s.text(label, labelX, 9, bold, C.SLATE_600);
    s.para(value, valueX, width, font === mono ? 9 : 10, font, color, 13);
    s.y -= 5;
  };
  if (v.fileName !== null) drawRow('File name', clip(v.fileName, MAX_FILE_NAME), user, valueW);
  drawRow('SHA-256 hash', v.hash, mono, valueW);
  drawRow('Recorded at', fmtTime(v.submittedAt), sans, valueW);
  drawRow('Ledger date (UTC)', v.ledgerDate, sans, valueW);
  if (v.state === 'published') {
    drawRow('Published at', `${base}/ledgers/${v.ledgerDate}.json`, mono, valueW, C.EMERALD_700);
    s.text('Signatures', labelX, 9, bold, C.SLATE_600);
    const w = s.badge(valueX, v.dual, v.dual ? 'Both verified' : 'Not verified');
    s.text('ECDSA P-256 and ML-DSA-65 (quantum-resistant)', valueX + w + 8, 9, sans, C.SLATE_600);
    s.y -= 22;
  }
  s.text('Bitcoin', labelX, 9, bold, C.SLATE_600);
  s.para(v.bitcoin.text, valueX, valueW, 10, bold, v.bitcoin.ok ? C.EMERALD_700 : C.AMBER_800, 13);
  s.y -= 5;
  if (v.receipt)
    drawRow(
      'Receipt',
      `RFC 3161 time-stamp token of ${fmtTime(v.receipt.genTime)}, attached as ${v.receipt.file}`,
      sans,
      valueW,
    );
  if (v.next) {
    s.y -= 4;
    const lines = wrap(drawable(v.next, sans), sans, 9.5, W - 2 * M - 40);
    const h = lines.length * 13 + 10;
    s.page.drawRectangle({
      x: labelX,
      y: s.y - h + 13,
      width: W - 2 * M - 28,
      height: h,
      color: C.AMBER_50,
      borderColor: C.AMBER_800,
      borderWidth: 0.6,
    });
    s.y -= 2;
    for (const line of lines) {
      s.text(line, labelX + 8, 9.5, sans, C.AMBER_800);
      s.y -= 13;
    }
    s.y -= 6;
  }
  const cardBottom = s.y;
  s.page.drawRectangle({
    x: M,
    y: cardBottom,
    width: W - 2 * M,
    height: cardTop - cardBottom,
    borderColor: C.SLATE_200,
    borderWidth: 1,
  });
  s.y -= 24;
}

/** Verify online: a QR code of the link (vector squares from the code's module matrix), the link beside it. */
function drawVerifyOnline(s: Sheet, v: CertificateView, qr: ReturnType<typeof import('qrcode').create>): void {
  const { C } = s;
  const { sans, bold, mono } = s.fonts;
  const modules = qr.modules.size;
  const qrSize = 96;
  const cell = qrSize / modules;
  const qrTop = s.y + 10;
  const qrY = qrTop - qrSize;
  for (let r = 0; r < modules; r++) {
    for (let c = 0; c < modules; c++) {
      if (qr.modules.get(r, c))
        s.page.drawRectangle({
          x: M + c * cell,
          y: qrY + (modules - 1 - r) * cell,
          width: cell + 0.05,
          height: cell + 0.05,
          color: C.SLATE_900,
        });
    }
  }
  const tx = M + qrSize + 18;
  const tw = W - M - tx;
  s.text('Verify online', tx, 11, bold);
  s.y -= 16;
  s.para(
    'Scan the code or open this address: it searches every published ledger for the hash and checks both signatures and the Merkle proof in your browser.',
    tx,
    tw,
    9,
    sans,
    C.SLATE_600,
    12,
  );
  s.y -= 2;
  s.para(v.verifyUrl, tx, tw, 8, mono, C.EMERALD_700, 11);
  s.y = Math.min(s.y, qrY) - 24;
}

/** How anyone can check it without Timeseal, and which files are attached. */
function drawHowToCheck(s: Sheet, v: CertificateView): void {
  const attached = [
    ...(v.receipt ? [`${v.receipt.file} (the receipt)`] : []),
    ...(v.bundle ? [`${v.bundle.file} (the proof bundle)`] : []),
    ...(v.checkpoint ? [`${checkpointFileOf(v)} (the signed checkpoint)`] : []),
  ];
  s.text('How anyone can check it', M, 11, s.fonts.bold);
  s.y -= 15;
  s.para(
    v.state === 'published'
      ? `Without Timeseal: open the proof bundle with your file in the offline verifier (${baseOf(v)}/offline-verifier.html), a single page that needs no network; or follow the appendix with OpenSSL and the public keys.${attached.length ? ` Attached to this PDF (open your reader's attachments to save them): ${attached.join(', ')}.` : ''}`
      : `Once the ledger is published, download this certificate again: it then holds the proof bundle and the commands that check it without Timeseal.${attached.length ? ` Attached to this PDF: ${attached.join(', ')}.` : ''}`,
    M,
    W - 2 * M,
    9.5,
    s.fonts.sans,
    s.C.SLATE_600,
    13,
  );
}

/** The machine material as attachments: the receipt, the proof bundle, the day's signed checkpoint. */
async function attachMaterial(doc: PDFDocument, v: CertificateView): Promise<void> {
  if (v.receipt)
    await doc.attach(v.receipt.der, v.receipt.file, {
      mimeType: 'application/timestamp-reply',
      description: `RFC 3161 receipt of ${v.hash} (DER TimeStampResp, ${v.receipt.genTime})`,
      creationDate: new Date(v.receipt.genTime),
      modificationDate: new Date(v.receipt.genTime),
    });
  if (v.bundle)
    await doc.attach(new TextEncoder().encode(v.bundle.text), v.bundle.file, {
      mimeType: 'application/json',
      description: `Proof bundle of ${v.hash} (timeseal-proof/3): for the offline verifier`,
    });
  if (v.checkpoint)
    await doc.attach(new TextEncoder().encode(v.checkpoint), checkpointFileOf(v), {
      mimeType: 'text/plain',
      description: `Signed checkpoint of the ledger of ${v.ledgerDate} (C2SP signed note)`,
    });
}

/** The appendix's verdicts and facts: each signature, the leaf, the ledger's SHA-256, the anchoring, the RFC 3161
 *  tokens, the receipt, and the checkpoint's head (its signature lines are in the attachment, never drawn). */
function drawMachineMaterial(s: Sheet, v: CertificateView): void {
  const { C } = s;
  const { sans, bold, mono } = s.fonts;
  s.text('Appendix: the machine material', M, 15, bold);
  s.y -= 22;
  const small = (label: string, value: string, font: PDFFont = sans) => {
    s.text(label, M, 8.5, bold, C.SLATE_600);
    s.para(value, M + 120, W - 2 * M - 120, font === mono ? 8 : 8.5, font, C.SLATE_900, 11);
    s.y -= 1;
  };
  if (v.state === 'published') {
    for (const [label, ok] of [
      ['ECDSA P-256 signature', v.ecdsa],
      ['ML-DSA-65 signature', v.mldsa],
      ['Dual signature', v.dual],
    ] as const) {
      s.text(label, M, 8.5, bold, C.SLATE_600);
      s.badge(M + 120, ok, ok ? 'Verified' : 'Not verified');
      s.y -= 19;
    }
  }
  if (v.leaf) small('Leaf', v.leaf);
  if (v.ledgerSha256) small('Ledger file SHA-256', v.ledgerSha256, mono);
  if (v.anchoringDetails) small('Anchoring, in detail', v.anchoringDetails, mono);
  for (const t of v.rfc3161 ?? [])
    small(
      'RFC 3161 time-stamp',
      `${fmtTime(t.genTime)} by ${t.tsaName}. Check: openssl ts -verify -data ${v.ledgerDate}.json -in ${t.file} -CAfile tsa-ca.pem`,
    );
  if (v.receipt) {
    s.y -= 4;
    s.text('RFC 3161 receipt', M, 9.5, bold);
    s.y -= 12;
    s.para(
      `The hash's RFC 3161 time-stamp token from Timeseal's time-stamp authority, made when it was submitted, attached to this PDF as ${v.receipt.file}.`,
      M,
      W - 2 * M,
      8.5,
      sans,
      C.SLATE_600,
      11,
    );
    small('Time (UTC)', fmtTime(v.receipt.genTime));
    small('Time-stamp authority', v.receipt.tsaName);
    small('Serial number', serialText(v.receipt.serialNumber), mono);
    s.y -= 4;
  }
  if (v.checkpoint) {
    const [note = ''] = v.checkpoint.split('\n\n');
    const signatures =
      v.checkpoint
        .split('\n\n')[1]
        ?.split('\n')
        .filter((l) => l.startsWith('— ')).length ?? 0;
    small(
      'Signed checkpoint',
      `${note.split('\n').join(' / ')} (origin / tree size / root; its ${signatures} signature line${signatures === 1 ? '' : 's'} are in the attached ${checkpointFileOf(v)})`,
      mono,
    );
  }
  s.y -= 8;
}

/** How to verify without Timeseal, step by step with the commands; the proof files; what the certificate is not. */
function drawStepsWithoutTimeseal(s: Sheet, v: CertificateView): void {
  const { C } = s;
  const { sans, bold, mono } = s.fonts;
  const base = baseOf(v);
  s.text('How to verify without Timeseal', M, 11, bold);
  s.y -= 15;
  const d = v.ledgerDate;
  const steps: Array<[string, string[]]> = [
    v.state === 'published'
      ? [
          '1. Fetch the ledger, its signatures and the public keys',
          [
            `curl -O ${base}/ledgers/${d}.json -O ${base}/ledgers/${d}.json.sig`,
            `curl -O ${base}/ledgers/${d}.json.dilithium.sig`,
            `curl -O ${base}/keys/public.pem -O ${base}/keys/dilithium_public.pem`,
          ],
        ]
      : [
          '1. After the ledger is published (00:01 UTC the day after the ledger date), fetch the ledger file, its two signatures (.sig, .dilithium.sig) from the archive folder /ledgers/ and the public keys from /keys/',
          [base],
        ],
    ['2. The hash is in the ledger', [`grep -c ${v.hash} ${d}.json`]],
    [
      '3. ECDSA P-256 signature (any OpenSSL)',
      [`openssl dgst -sha256 -verify public.pem -signature ${d}.json.sig ${d}.json`],
    ],
    [
      '4. ML-DSA-65 signature (OpenSSL 3.5 or later)',
      [
        `openssl pkeyutl -verify -pubin -inkey dilithium_public.pem -rawin -in ${d}.json -sigfile ${d}.json.dilithium.sig`,
      ],
    ],
    [
      '5. Bitcoin anchor (OpenTimestamps reference client; needs a Bitcoin node)',
      v.anchored
        ? [`curl -O ${base}/ledgers/${d}.json.ots`, `ots verify -f ${d}.json ${d}.json.ots`]
        : ["(the ledger's .ots proof does not exist yet: see page 1 for when to come back)"],
    ],
  ];
  if (v.receipt) {
    steps.push([
      `6. The RFC 3161 receipt (save the attachment ${v.receipt.file} first; any OpenSSL)`,
      [
        `curl -O ${base}/keys/timeseal-tsa-root.pem -O ${base}/keys/timeseal-tsa.pem`,
        receiptCommand(v.hash, v.receipt.file),
      ],
    ]);
  }
  steps.push([
    `${v.receipt ? 7 : 6}. With no network at all: the offline verifier, one self-contained page, with the proof bundle`,
    [`${base}/offline-verifier.html`],
  ]);
  for (const [title, cmds] of steps) {
    s.para(title, M, W - 2 * M, 9, bold, C.SLATE_900, 12);
    for (const cmd of cmds) s.para(cmd, M + 10, W - 2 * M - 10, 7.5, mono, C.SLATE_900, 10);
    s.y -= 4;
  }
  if (v.files.length > 0) {
    s.y -= 4;
    s.text('Proof files', M, 11, bold);
    s.y -= 14;
    for (const f of v.files) s.para(`${f.label}: ${f.url}`, M, W - 2 * M, 7.5, mono, C.SLATE_900, 10);
  }
  s.y -= 8;
  s.para(
    'Timeseal is not a qualified timestamp authority; this certificate states what the public archive shows. The file formats are documented in docs/FORMAT.md.',
    M,
    W - 2 * M,
    8,
    sans,
    C.SLATE_600,
    11,
  );
}
