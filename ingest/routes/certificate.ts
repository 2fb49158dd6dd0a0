// GET /api/certificate.php?hash= (docs/API.md; linked from the Quantum Shield page): a printable HTML certificate
// for a published hash: first for a person (the plain-words statement of certificate-pdf.ts certificateSummary, the
// hash, times, where it is published, the signatures' verdict, the Bitcoin status in one sentence, how anyone checks
// it), then an appendix with the machine material (leaf, ledger SHA-256, each signature's verdict, the anchoring's
// details, the day's signed checkpoint behind a disclosure, links to every proof file). Every value placed in the
// page is HTML-escaped. The `id=` form is a certificate from an account's history: only the row's owner (the
// session's user) sees it, with the file name; any other id — someone else's, unknown, or no session — is the same
// 404. A history row whose day is not published yet gets a "pending" certificate. `&format=pdf` answers the same
// certificate as a PDF download (certificate-pdf.ts); links name only files that exist now. Both forms carry the
// hash's RFC 3161 receipt when the store kept one (Store.receipts: the site's submissions), checked with
// core/receipt.ts against the TSA root of keys/: of the history row's day and time for `id=`, the earliest of the
// published day for `hash=`. The HTML page offers it as a data: URL download (<first 16 hex>.tsr); the PDF attaches
// it.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import {
  dayCheckpointPath,
  ecdsaSignaturePath,
  ledgerOtsPath,
  ledgerPath,
  mldsaSignaturePath,
  signaturesMetaPath,
} from '../../core/archive.ts';
import { NOT_REACHED_REASON } from '../../core/anchoring-note.ts';
import { fromHex, toBase64 } from '../../core/encoding.ts';
import { encodeProofBundle } from '../../core/proof.ts';
import { checkReceipt } from '../../core/receipt.ts';
import { pemCertificates } from '../../core/rfc3161.ts';
import { PUBLIC_TSA_CHAIN_PEM, PUBLIC_TSA_ROOT_PEM } from '../../runtime/keys.ts';
import { sessionUser } from '../accounts/sessions.ts';
import {
  certificatePdf,
  certificateSummary,
  receiptCommand,
  receiptFileName,
  serialText,
  type CertificateLink,
  type CertificateReceipt,
  type CertificateView,
} from '../certificate-pdf.ts';
import { ClientError } from '../errors.ts';
import { anchoringDetails, anchoringText } from '../archive-view.ts';
import { HASH_PATTERN, plainErrors, type TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
:root{color-scheme:light}
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#0f172a;background:#f8fafc;max-width:50rem;margin:2rem auto;padding:0 1rem;line-height:1.55;overflow-wrap:anywhere}
a{color:#047857}h1{font-size:1.75rem;margin:.2rem 0}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.brand{color:#047857;font-weight:700;letter-spacing:.04em;text-transform:uppercase;font-size:.8rem;margin:0}
.sub{color:#475569;margin-top:0}
.frame{background:#fff;border:1px solid #e2e8f0;border-radius:.75rem;padding:1.25rem 1.5rem;margin-top:1.25rem}
.summary{font-size:1.05rem}
dl{display:grid;grid-template-columns:12rem 1fr;gap:.45rem 1rem;margin:0}dt{color:#475569;font-weight:600}dd{margin:0;overflow-wrap:anywhere}
code,pre{font-family:ui-monospace,Menlo,Consolas,'DejaVu Sans Mono',monospace;font-size:.85rem;word-break:break-all;white-space:pre-wrap}
pre{background:#f1f5f9;padding:.75rem;border:1px solid #e2e8f0;border-radius:.5rem}
.ok{color:#047857;font-weight:600}.bad{color:#991b1b;font-weight:600}.wait{color:#92400e}
.appendix{font-size:.92rem}.appendix summary{cursor:pointer;color:#047857}
ul.links{columns:2;padding-left:1.2rem}footer{font-size:.8rem;color:#475569;margin-top:1.25rem}
@media (max-width:40rem){dl{grid-template-columns:1fr}dd{margin-bottom:.4rem}ul.links{columns:1}}
@media print{.noprint{display:none}body{margin:0;background:#fff}.frame{border:none;padding:0}}
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

function confirmationText(confirmations: number): string {
  if (confirmations >= 100) return 'deeply confirmed';
  if (confirmations >= 6) return 'secure';
  return 'wait for 6+';
}

/** The receipt section of the HTML certificate: time, TSA, serial number, a download of the .tsr (a data: URL,
 * so no other route and no other request), and the OpenSSL command with the two certificates of /keys/. */
function receiptSection(hash: string, r: CertificateReceipt): string {
  const href = `data:application/timestamp-reply;base64,${toBase64(r.der)}`;
  return `<h2>RFC 3161 receipt</h2>
<p>The hash's RFC 3161 time-stamp token from Timeseal's time-stamp authority, made when it was submitted.</p>
<dl>
<dt>Time (UTC)</dt><dd>${escapeHtml(r.genTime)}</dd>
<dt>Time-stamp authority</dt><dd>${escapeHtml(r.tsaName)}</dd>
<dt>Serial number</dt><dd><code>${escapeHtml(serialText(r.serialNumber))}</code></dd>
<dt>Receipt file</dt><dd><a href="${escapeHtml(href)}" download="${escapeHtml(r.file)}" type="application/timestamp-reply">Download ${escapeHtml(r.file)}</a></dd>
</dl>
<p>Check it with OpenSSL and the two certificates <a href="/keys/${PUBLIC_TSA_ROOT_PEM}" download>${PUBLIC_TSA_ROOT_PEM}</a> and <a href="/keys/${PUBLIC_TSA_CHAIN_PEM}" download>${PUBLIC_TSA_CHAIN_PEM}</a>:</p>
<pre>${escapeHtml(receiptCommand(hash, r.file))}</pre>`;
}

export const certificateRoutes: TypedRoutes<Services> = async (app, s) => {
  /** The TSA root of the served keys (keys/timeseal-tsa-root.pem); none when the file is absent. */
  const tsaRoot = (): Uint8Array[] => {
    try {
      return pemCertificates(fs.readFileSync(path.join(s.config.keys, PUBLIC_TSA_ROOT_PEM), 'utf8'));
    } catch {
      return [];
    }
  };
  /**
   * The hash's receipt of `date` that the store kept and that checks (core/receipt.ts, for this hash, against
   * the TSA root): the one made at `submittedAt` when given and kept, else the earliest; undefined when none.
   */
  const keptReceipt = async (
    hash: string,
    date: string,
    log: FastifyBaseLogger,
    submittedAt?: string,
  ): Promise<CertificateReceipt | undefined> => {
    const kept = await s.store.receipts.forDay(hash, date);
    if (kept.length === 0) return undefined;
    const root = tsaRoot();
    const checked: CertificateReceipt[] = [];
    for (const der of kept) {
      try {
        const facts = await checkReceipt(der, root, fromHex(hash));
        checked.push({
          file: receiptFileName(hash),
          genTime: facts.genTime.toISOString(),
          tsaName: facts.tsaName,
          serialNumber: facts.serialNumber,
          der,
        });
      } catch (err) {
        log.warn(
          { hash, date, reason: (err as Error).message },
          'a stored receipt does not check: left out of the certificate',
        );
      }
    }
    return checked.find((r) => r.genTime === submittedAt) ?? checked[0];
  };

  const sendPdf = async (reply: FastifyReply, view: CertificateView) =>
    reply
      .code(200)
      .type('application/pdf')
      .header(
        'Content-Disposition',
        `attachment; filename="timeseal-certificate-${view.hash.slice(0, 12)}-${view.ledgerDate}.pdf"`,
      )
      .send(Buffer.from(await certificatePdf(view)));

  app.get(
    '/api/certificate.php',
    {
      schema: {
        hide: false,
        summary: "A published hash's certificate, as an HTML page or a PDF",
        tags: ['proofs'],
        querystring: {
          type: 'object',
          properties: {
            hash: { type: 'string', pattern: HASH_PATTERN },
            id: { type: 'string', maxLength: 64 },
            format: {
              type: 'string',
              enum: ['html', 'pdf'],
              description: 'pdf: the certificate as a PDF download (default html)',
            },
          },
          additionalProperties: false,
        },
        response: {
          200: { type: 'string', description: 'text/html, or application/pdf with format=pdf' },
          404: { type: 'string' },
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const { hash: rawHash, id, format } = request.query;
      if ((rawHash === undefined) === (id === undefined)) throw new ClientError(400, 'Give exactly one of hash or id');
      reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-cache');
      let hash: string;
      let owned: { fileName: string | null; submittedAt: string; ledgerDate: string } | undefined;
      if (id !== undefined) {
        reply.header('Cache-Control', 'private, no-store');
        const user = await sessionUser(s.store, request, s.clock());
        const row = user && /^[1-9][0-9]{0,14}$/.test(id) ? await s.store.history.get(Number(id), user.id) : undefined;
        if (!row) {
          return reply
            .code(404)
            .send(
              page(
                'Certificate not found',
                `<main><h1>Certificate not found</h1><p>No certificate with id <code>${escapeHtml(id)}</code> in your history. Certificates from an account's history open only for their owner, while logged in.</p><p><a href="/login">Log in</a> · <a href="/">Go to Home</a></p></main>`,
              ),
            );
        }
        hash = row.hash;
        owned = row;
      } else {
        hash = rawHash!.toLowerCase();
      }
      const fileRow = owned?.fileName ? `<dt>File name</dt><dd>${escapeHtml(owned.fileName)}</dd>\n` : '';
      const found = s.archive.find(hash)[0];
      const base = s.config.origin.replace(/\/+$/, '');
      const verifyUrl = `${base}/verify?hash=${hash}&search=true`;
      // The receipt: a history row's own (its day and time), else the earliest of the published day. Never for
      // a hash= certificate of an unpublished hash (a 404 below: nothing is said of it before its ledger).
      const receipt = owned
        ? await keptReceipt(hash, owned.ledgerDate, request.log, owned.submittedAt)
        : found
          ? await keptReceipt(hash, found.date, request.log)
          : undefined;
      const receiptHtml = receipt ? receiptSection(hash, receipt) : '';
      if (!found && owned && format === 'pdf') {
        return sendPdf(reply, {
          state: 'pending',
          hash,
          fileName: owned.fileName,
          submittedAt: owned.submittedAt,
          ledgerDate: owned.ledgerDate,
          verifyUrl,
          origin: base,
          files: [],
          ...(receipt ? { receipt } : {}),
          bitcoin: { ok: false, text: 'Queued: not yet in a published ledger' },
          next: `Come back after 00:01 UTC on the day after ${owned.ledgerDate}, when the ledger of ${owned.ledgerDate} is published and dual-signed; download this certificate again then for the signatures, the checkpoint and the proof files. The Bitcoin anchor follows from 00:02 UTC, confirmed typically within 12 to 24 hours.`,
        });
      }
      if (!found && owned) {
        return reply.code(200).send(
          page(
            `Timestamp certificate ${hash.slice(0, 16)}… (pending)`,
            `<main>
<h1>Timestamp Certificate</h1>
<p class="sub">Timeseal — pending: this submission enters the ledger published at 00:01 UTC after its day</p>
<div class="frame">
<dl>
${fileRow}<dt>SHA-256 hash</dt><dd><code>${escapeHtml(hash)}</code></dd>
<dt>Submitted at (UTC)</dt><dd>${escapeHtml(owned.submittedAt)}</dd>
<dt>Ledger date (UTC)</dt><dd>${escapeHtml(owned.ledgerDate)}</dd>
<dt>Status</dt><dd><span class="wait">Queued: the ledger of ${escapeHtml(owned.ledgerDate)} is generated and dual-signed at 00:01 UTC the next day, then anchored to Bitcoin</span></dd>
</dl>
${receiptHtml}
</div>
<footer><p>Come back after 00:01 UTC on the day after ${escapeHtml(owned.ledgerDate)}: open this certificate again once the ledger is published for the signatures, the checkpoint and the proof files. <a href="/verify?hash=${escapeHtml(hash)}&amp;search=true">Search the ledgers</a></p></footer>
</main>`,
          ),
        );
      }
      if (!found) {
        return reply
          .code(404)
          .send(
            page(
              'Certificate not found',
              `<main><h1>Certificate not found</h1><p>The hash <code>${escapeHtml(hash)}</code> is not in any published ledger. A submitted hash enters the ledger published at 00:01 UTC after its day.</p><p><a href="/verify?hash=${escapeHtml(hash)}&amp;search=true">Search the ledgers</a></p></main>`,
            ),
          );
      }
      const date = found.date;
      const verification = await s.archive.verifyDay(date);
      const block = s.archive.blockInfo()[date];
      const otsState = s.archive.otsState(date);
      // The words of archive-view.ts anchoringText, as every surface says them ("Anchoring delayed: …" on a failure).
      const anchoring = s.archive.anchoring(date);
      const bitcoin =
        block && block.block_height !== null
          ? `<span class="ok">Anchored in Bitcoin block ${block.block_height}</span> (${block.confirmations} confirmation${block.confirmations === 1 ? '' : 's'}, ${confirmationText(block.confirmations)})`
          : otsState === 'verified'
            ? '<span class="ok">Anchored in Bitcoin</span>'
            : `<span class="${anchoring.state === 'delayed' ? 'bad' : 'wait'}">${escapeHtml(anchoringText(anchoring))}</span>`;
      const flag = (ok: boolean | undefined, yes: string, no: string) =>
        ok ? `<span class="ok">${yes}</span>` : `<span class="bad">${no}</span>`;
      let checkpoint = '';
      try {
        checkpoint = fs.readFileSync(path.join(s.config.archive, dayCheckpointPath(date)), 'utf8');
      } catch {
        checkpoint = '(checkpoint file missing)';
      }
      const anchoredFile = fs.existsSync(path.join(s.config.archive, ledgerOtsPath(date)));
      const stamps = await s.archive.timeStamps(found.day);
      const files: CertificateLink[] = [
        { url: `/api/proof/${hash}`, label: 'Proof bundle (JSON)' },
        ...(anchoredFile ? [{ url: `/api/proof/${hash}.ots`, label: 'OpenTimestamps proof of this hash' }] : []),
        { url: `/ledgers/${ledgerPath(date)}`, label: 'Ledger file' },
        { url: `/ledgers/${ecdsaSignaturePath(date)}`, label: 'ECDSA P-256 signature' },
        { url: `/ledgers/${mldsaSignaturePath(date)}`, label: 'ML-DSA-65 signature' },
        { url: `/ledgers/${signaturesMetaPath(date)}`, label: 'Signature metadata' },
        ...(anchoredFile
          ? [{ url: `/ledgers/${ledgerOtsPath(date)}`, label: 'OpenTimestamps proof of the ledger' }]
          : []),
        ...stamps.map((t) => ({ url: `/ledgers/${t.file}`, label: `RFC 3161 time-stamp token (${t.tsaName})` })),
        { url: '/keys/public.pem', label: 'ECDSA P-256 public key' },
        { url: '/keys/dilithium_public.key', label: 'ML-DSA-65 public key' },
      ];
      // A delayed anchoring is said as everywhere (its next try), not "come back after 00:02", long gone then.
      const anchorNote = anchoredFile
        ? undefined
        : anchoring.state === 'delayed'
          ? `The OpenTimestamps proofs of this ledger do not exist yet: ${anchoringText(anchoring)}. The .ots files follow once the calendars answer, and the Bitcoin block 12 to 24 hours later.`
          : anchoring.state === 'not-reached'
            ? `The OpenTimestamps proofs of this ledger do not exist yet: ${NOT_REACHED_REASON}. The .ots files follow once it is stamped, and the Bitcoin block 12 to 24 hours later.`
            : `The OpenTimestamps proofs of this ledger do not exist yet: the ledger is submitted to the calendars at 00:02 UTC after ${date}. Come back after that for the .ots files, and 12 to 24 hours later for the Bitcoin block.`;
      if (format === 'pdf') {
        const bitcoinText =
          block && block.block_height !== null
            ? `Anchored in Bitcoin block ${block.block_height} (${block.confirmations} confirmation${block.confirmations === 1 ? '' : 's'}, ${confirmationText(block.confirmations)})`
            : otsState === 'verified'
              ? 'Anchored in Bitcoin'
              : anchoringText(anchoring);
        return sendPdf(reply, {
          state: 'published',
          hash,
          fileName: owned?.fileName ?? null,
          submittedAt: found.submittedAt,
          ledgerDate: date,
          verifyUrl,
          origin: base,
          leaf: `${found.leafIndex} of a log of ${found.day.treeSize}`,
          ledgerSha256: found.day.sha256,
          ecdsa: verification?.ecdsa,
          mldsa: verification?.quantumShield,
          dual: verification?.dualSignature,
          bitcoin: { ok: otsState === 'verified', text: bitcoinText },
          checkpoint,
          files: files.map((f) => ({ ...f, url: `${base}${f.url}` })),
          anchored: anchoredFile,
          rfc3161: stamps,
          ...(receipt ? { receipt } : {}),
          ...(anchoringDetails(anchoring) !== null ? { anchoringDetails: anchoringDetails(anchoring)! } : {}),
          bundle: {
            file: `timeseal-proof-${hash.slice(0, 12)}.json`,
            text: encodeProofBundle({
              ...s.archive.proof(hash),
              receipts: (await s.store.receipts.forDay(hash, date)).map(toBase64),
            }),
          },
          next: anchorNote,
        });
      }
      const link = (href: string, label: string) =>
        `<li><a href="${escapeHtml(href)}" download>${escapeHtml(label)}</a></li>`;
      const details = anchoringDetails(anchoring);
      const both = verification?.dualSignature === true;
      const summary = certificateSummary({
        hash,
        fileName: owned?.fileName ?? null,
        submittedAt: found.submittedAt,
        ledgerDate: date,
        origin: base,
        signed: both,
      });
      const body = `<main>
<p class="brand">Timeseal</p>
<h1>Timestamp Certificate</h1>
<p class="sub">What the public archive of ${escapeHtml(base)} shows about one SHA-256 hash</p>
<div class="frame">
<p class="summary" data-part="summary">${escapeHtml(summary)}</p>
<dl>
${fileRow}<dt>SHA-256 hash</dt><dd><code>${escapeHtml(hash)}</code></dd>
<dt>Recorded at (UTC)</dt><dd>${escapeHtml(found.submittedAt)}</dd>
<dt>Ledger date (UTC)</dt><dd>${escapeHtml(date)}</dd>
<dt>Published at</dt><dd><a href="/ledgers/${escapeHtml(ledgerPath(date))}" download>${escapeHtml(base)}/ledgers/${escapeHtml(ledgerPath(date))}</a></dd>
<dt>Signatures</dt><dd>${flag(both, 'Both verified', 'Not verified')}: ECDSA P-256 and ML-DSA-65 (quantum-resistant)</dd>
<dt>Bitcoin</dt><dd>${bitcoin}</dd>
${receipt ? `<dt>Receipt</dt><dd>RFC 3161 time-stamp token of ${escapeHtml(receipt.genTime)}, below</dd>` : ''}
</dl>
<h2>How anyone can check it</h2>
<p>Without Timeseal: save the <a href="/api/proof/${escapeHtml(hash)}" download>proof bundle</a> and open it with your file in the <a href="/offline-verifier.html">offline verifier</a>, a single page that needs no network; or follow the commands in the appendix with OpenSSL and the public keys. Online: <a href="/verify?hash=${escapeHtml(hash)}&amp;search=true">search the ledgers</a>.</p>
${receiptHtml}
</div>
<section class="frame appendix" aria-labelledby="appendix-title">
<h2 id="appendix-title">Appendix: the machine material</h2>
<dl>
<dt>Leaf index</dt><dd>${found.leafIndex} of a log of ${found.day.treeSize} (day entries ${found.day.firstIndex}–${found.day.treeSize - 1})</dd>
<dt>Ledger file SHA-256</dt><dd><code>${escapeHtml(found.day.sha256)}</code></dd>
<dt>ECDSA P-256 signature</dt><dd>${flag(verification?.ecdsa, 'Verified', 'Not verified')}</dd>
<dt>ML-DSA-65 signature (quantum shield)</dt><dd>${flag(verification?.quantumShield, 'Verified', 'Not verified')}</dd>
<dt>Dual signature</dt><dd>${flag(verification?.dualSignature, 'Verified (ledger, signatures and checkpoint)', 'Not verified')}</dd>
${details ? `<dt>Anchoring, in detail</dt><dd><code data-part="anchoring-details">${escapeHtml(details)}</code></dd>` : ''}
${stamps.map((t) => `<dt>RFC 3161 time-stamp</dt><dd><span class="ok">${escapeHtml(t.genTime)}</span> by ${escapeHtml(t.tsaName)}<br><code>openssl ts -verify -data ${escapeHtml(date)}.json -in ${escapeHtml(t.file)} -CAfile tsa-ca.pem</code></dd>`).join('\n')}
</dl>
<details>
<summary>Signed checkpoint of ${escapeHtml(date)}</summary>
<pre>${escapeHtml(checkpoint)}</pre>
</details>
<h2>Proof files</h2>
<ul class="links">
${files.map((f) => link(f.url, f.label)).join('\n')}
</ul>
${anchorNote ? `<p class="wait">${escapeHtml(anchorNote)}</p>` : ''}
</section>
<footer>
<p>Verify online: <a href="/verify?hash=${escapeHtml(hash)}&amp;search=true">${escapeHtml(base)}/verify?hash=${escapeHtml(hash)}&amp;search=true</a>. The proof bundle verifies offline with the two public keys. Timeseal is not a qualified timestamp authority; this certificate states what the public archive shows.</p>
<p class="noprint"><a href="/api/certificate.php?${id !== undefined ? `id=${escapeHtml(id)}` : `hash=${escapeHtml(hash)}`}&amp;format=pdf" download>Download the PDF certificate</a> · <button type="button" onclick="window.print()">Print</button></p>
</footer>
</main>`;
      return reply.code(200).send(page(`Timestamp certificate ${hash.slice(0, 16)}…`, body));
    },
  );
};
