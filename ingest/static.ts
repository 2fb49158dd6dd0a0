// The static routes: the built site (TIMESEAL_SITE), the public archive under /ledgers/, and the public keys
// under /keys/ (exactly the files PUBLIC_KEY_FILES names). Nothing else on disk is reachable. What they answer
// with is decided elsewhere: which archive files are published (published-archive.ts, the commit-point rule),
// how a file is sent (http-file.ts: ranges, ETags, cache classes) and which file a site path means
// (site-files.ts, with the 404 page).
import path from 'node:path';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import {
  archiveCacheControl,
  archiveContentType,
  CACHE_IMMUTABLE,
  CACHE_SHORT,
  CHECKPOINT_PATH,
  INDEX_JSON_PATH,
} from '../core/archive.ts';
import { errorBody } from './errors.ts';
import { GzipCopies, sendFile } from './http-file.ts';
import { IndexJsonCache, IndexJsonPreparingError, type IndexJsonFile } from './index-json.ts';
import { archivePath, CommittedView, isCommitted, latestCheckpointFile } from './published-archive.ts';
import type { ArchiveAccess } from './services.ts';
import { sendNotFoundPage, serveSite, sitePath } from './site-files.ts';

/** The tree size an index-sha256.json answer covers: the current head's, or a smaller one while that is made. */
export const TREE_SIZE_HEADER = 'Timeseal-Tree-Size';
/** Our text (the spec has none) for the first index-sha256.json of an archive, while it is made. */
export const INDEX_JSON_PREPARING =
  'index-sha256.json is being prepared for this archive; please try again in a minute.';
const INDEX_JSON_RETRY_AFTER = '60';

export interface StaticOptions {
  site: string;
  archive: string;
  keys: string;
  /** How long a request for the first index-sha256.json waits for it (default READY_WAIT_MS). */
  indexJsonWaitMs?: number;
  /** Where index-sha256.json is made on request (ingest/index-json.ts). */
  cache: string;
  /** The index head and index-sha256.json's text (services.ts). */
  index: Pick<ArchiveAccess, 'indexHead' | 'indexJson'>;
}

/** The only files served from the keys folder (docs/FORMAT.md §9). */
export const PUBLIC_KEY_FILES: Record<string, string> = {
  'public.pem': 'application/x-pem-file',
  'dilithium_public.key': 'application/octet-stream',
  'dilithium_public.pem': 'application/x-pem-file',
  // The checkpoint keys witnesses know (C2SP vkeys) and the witness policy (pipeline/witness.ts), when present.
  'ed25519.vkey': 'text/plain; charset=utf-8',
  'mldsa44.vkey': 'text/plain; charset=utf-8',
  witnesses: 'text/plain; charset=utf-8',
  'witnesses.retired': 'text/plain; charset=utf-8',
  // The CA chain of the RFC 3161 time-stamp authorities, when the operator publishes it (pipeline/tsa-client.ts).
  'tsa-ca.pem': 'application/x-pem-file',
  // Timeseal's own time-stamp authority (POST /tsa): its certificate then root, and the root alone.
  'timeseal-tsa.pem': 'application/x-pem-file',
  'timeseal-tsa-root.pem': 'application/x-pem-file',
  // The COSE receipt keys (docs/FORMAT.md §11), also served as a COSE Key Set at /.well-known/scitt-keys.
  'receipt-es256.pem': 'application/x-pem-file',
  'receipt-mldsa65.pem': 'application/x-pem-file',
  'receipt-keys.retired': 'text/plain; charset=utf-8',
};

export const staticRoutes: FastifyPluginAsync<StaticOptions> = async (app, options) => {
  const site = path.resolve(options.site);
  const archive = path.resolve(options.archive);
  const keys = path.resolve(options.keys);

  const rawPath = (request: FastifyRequest): string => request.url.split('?')[0]!;
  // The archive and the keys are public data meant for any verifier, including other origins: their CORS and
  // Cross-Origin-Resource-Policy headers are set with the other security headers (security-headers.ts).
  const wildcard = {
    params: { type: 'object', properties: { '*': { type: 'string', maxLength: 2048 } }, additionalProperties: false },
    hide: true,
  };

  const indexJson = new IndexJsonCache(options.index, path.resolve(options.cache));
  const gzipCopies = new GzipCopies(path.join(path.resolve(options.cache), 'gz'));
  const committedView = new CommittedView(archive);

  app.get('/ledgers/*', { schema: wildcard }, async (request, reply) => {
    const raw = rawPath(request).slice('/ledgers/'.length);
    if (raw === '') return serveSite(site, request, reply, 'ledgers/');
    if (raw === INDEX_JSON_PATH) {
      // Twice: an earlier file sent while the current one is made may be removed the moment that one is done.
      for (let attempt = 0; attempt < 2; attempt++) {
        let made: IndexJsonFile;
        try {
          made = await indexJson.file(options.indexJsonWaitMs);
        } catch (err) {
          if (!(err instanceof IndexJsonPreparingError)) throw err;
          return reply
            .code(503)
            .header('Retry-After', INDEX_JSON_RETRY_AFTER)
            .type('application/json; charset=utf-8')
            .send(errorBody('plain', INDEX_JSON_PREPARING));
        }
        void reply.header(TREE_SIZE_HEADER, String(made.treeSize));
        if (
          await sendFile(request, reply, made.path, archiveContentType(INDEX_JSON_PATH), CACHE_SHORT, {
            gzip: { copies: gzipCopies, name: INDEX_JSON_PATH },
          })
        )
          return;
      }
      return sendNotFoundPage(site, reply);
    }
    const rel = archivePath(raw);
    if (rel === null) return sendNotFoundPage(site, reply);
    const committed = await committedView.get();
    if (!isCommitted(rel, committed)) return sendNotFoundPage(site, reply);
    // The latest checkpoint is the last published day's: never missing or behind days.json after a crash. Once
    // witnesses have cosigned it, the `checkpoint` file is that day's checkpoint followed by their lines
    // (pipeline/witness.ts): it is sent when it begins with the day's checkpoint.
    const file =
      rel === CHECKPOINT_PATH
        ? committed.last === null
          ? null
          : await latestCheckpointFile(archive, committed.last)
        : rel;
    // Immutable archive files are sent as stored: never compressed again per request, with strong ETags for If-Range.
    const cacheControl = archiveCacheControl(rel);
    if (
      file === null ||
      !(await sendFile(request, reply, path.join(archive, file), archiveContentType(rel), cacheControl, {
        asStored: cacheControl === CACHE_IMMUTABLE,
        gzip: { copies: gzipCopies, name: rel },
      }))
    ) {
      return sendNotFoundPage(site, reply);
    }
  });

  app.get('/keys/*', { schema: wildcard }, async (request, reply) => {
    const name = rawPath(request).slice('/keys/'.length);
    const type = Object.hasOwn(PUBLIC_KEY_FILES, name) ? PUBLIC_KEY_FILES[name] : undefined;
    if (type === undefined || !(await sendFile(request, reply, path.join(keys, name), type, 'public, max-age=300'))) {
      return sendNotFoundPage(site, reply);
    }
  });

  app.get('/*', { schema: wildcard }, async (request, reply) => {
    const raw = rawPath(request);
    if (raw === '/api' || raw.startsWith('/api/')) return reply.callNotFound();
    return serveSite(site, request, reply, sitePath(raw));
  });
};
