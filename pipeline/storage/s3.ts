// The S3 engine of the archive store (archive-store.ts), on the official AWS SDK: one object per archive file,
// under `prefix/` in a bucket, each with the Cache-Control and Content-Type of its path.
// - create: PutObject with `If-None-Match: *`. The store refuses it (412) when the object exists; the object is
//   then read and compared: identical bytes are success, other bytes a ConflictError naming the object. Nothing
//   is ever overwritten, even by two writers racing (the store decides, not a read before the write).
// - replace: a PutObject (S3 replaces an object whole: readers get the old or the new one); conditional, with
//   `If-Match: <ETag>` (a version is the ETag, unquoted: Ceph RGW matches only an unquoted one, AWS either) or
//   `If-None-Match: *`; a 412 (or AWS's 404 for If-Match on no object) is a StaleVersionError.
// - remove (retired index segments only): DeleteObject.
// Stores that ignore the condition would silently overwrite, so the engine is opened only after a probe
// (probeConditionalWrites) shows that a second create-only PUT of one key is refused; an operator may instead
// accept plain PUTs explicitly, and then create reads the object first and writes only when it is absent — safe
// for one writer, not against two racing.
import crypto from 'node:crypto';
import os from 'node:os';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { TimesealError } from '../../core/errors.ts';
import { UsageError } from '../../runtime/config.ts';
import { setting } from '../../runtime/settings.ts';
import { ConflictError } from '../files.ts';
import { archiveCacheControl, archiveContentType } from '../../core/archive.ts';
import {
  checkListPrefix,
  checkObjectPath,
  checkRemovable,
  StaleVersionError,
  type ArchiveStore,
  type VersionedObject,
} from './archive-store.ts';
import { byteOrder } from './folder.ts';

/** Where an S3 archive is: a bucket and a key prefix ('' or a path without leading or trailing `/`). */
export interface S3Location {
  bucket: string;
  prefix: string;
}

/** Reads `s3://bucket` or `s3://bucket/prefix` (a trailing `/` is ignored). */
export function parseS3Url(url: string): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (m === null) throw new TimesealError('usage', `TIMESEAL_ARCHIVE: not an S3 location s3://BUCKET[/PREFIX]: ${url}`);
  const prefix = (m[2] ?? '').replace(/\/+$/, '');
  if (prefix !== '') checkObjectPath(prefix);
  return { bucket: m[1]!, prefix };
}

/** How the engine writes immutable objects: create-only PUTs the store enforces, or (the operator's explicit
 * choice, for a store that ignores the condition) a read and then a plain PUT. */
export type CreateMode = 'conditional' | 'plain';

export class S3ArchiveStore implements ArchiveStore {
  readonly location: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly mode: CreateMode;
  private readonly listPageSize: number;

  /** `listPageSize`: keys asked of each ListObjectsV2 request (S3's most and default, 1,000). */
  constructor(client: S3Client, where: S3Location, mode: CreateMode, options: { listPageSize?: number } = {}) {
    this.client = client;
    this.bucket = where.bucket;
    this.prefix = where.prefix;
    this.mode = mode;
    this.listPageSize = options.listPageSize ?? 1000;
    this.location = `s3://${where.bucket}${where.prefix === '' ? '' : `/${where.prefix}`}`;
  }

  private key(rel: string): string {
    return this.prefix === '' ? rel : `${this.prefix}/${rel}`;
  }

  /** PUTs the object; returns its ETag (undefined from a store that sends none: some look-alikes). */
  private async put(
    rel: string,
    bytes: Uint8Array,
    condition: { ifNoneMatch?: '*'; ifMatch?: string } = {},
  ): Promise<string | undefined> {
    const answer = await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.key(rel),
        Body: bytes,
        ContentLength: bytes.length,
        CacheControl: archiveCacheControl(rel),
        ContentType: archiveContentType(rel),
        ...(condition.ifNoneMatch === undefined ? {} : { IfNoneMatch: condition.ifNoneMatch }),
        ...(condition.ifMatch === undefined ? {} : { IfMatch: condition.ifMatch }),
      }),
    );
    return answer.ETag;
  }

  async create(rel: string, bytes: Uint8Array): Promise<boolean> {
    checkObjectPath(rel);
    if (this.mode === 'plain') {
      const existing = await this.read(rel);
      if (existing !== undefined) return this.same(rel, existing, bytes);
      await this.put(rel, bytes);
      return true;
    }
    // A 409 is a concurrent conditional write of the same key still in progress (AWS): asked again.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.put(rel, bytes, { ifNoneMatch: '*' });
        return true;
      } catch (err) {
        const status = statusOf(err);
        if (status !== 412 && !(status === 409 && attempt < 5)) throw this.failed('create', rel, err);
        if (status === 409) {
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
          continue;
        }
      }
      const existing = await this.read(rel);
      if (existing === undefined)
        throw new TimesealError(
          'io',
          `${this.where(rel)}: the store refused to create it (412) but has no such object`,
        );
      return this.same(rel, existing, bytes);
    }
  }

  private same(rel: string, existing: Uint8Array, bytes: Uint8Array): false {
    if (Buffer.compare(existing, bytes) !== 0) {
      throw new ConflictError(
        `published object ${this.where(rel)} differs from the rebuild: sha256 in the store ${sha256(existing)} != rebuilt ${sha256(bytes)}`,
      );
    }
    return false;
  }

  async replace(rel: string, bytes: Uint8Array, expected?: string | null): Promise<string> {
    checkObjectPath(rel);
    if (expected !== undefined && this.mode === 'plain') {
      // The store ignores conditions: compared here, then written (one writer only, as for create).
      const found = (await this.readVersioned(rel))?.version ?? null;
      if (found !== expected) throw this.stale(rel, expected, found);
      expected = undefined;
    }
    const condition =
      expected === undefined ? {} : expected === null ? { ifNoneMatch: '*' as const } : { ifMatch: expected };
    // A 409 is a concurrent conditional write of the same key still in progress (AWS): asked again.
    for (let attempt = 1; ; attempt++) {
      try {
        return unquoted(await this.put(rel, bytes, condition), this.where(rel));
      } catch (err) {
        if (err instanceof TimesealError) throw err;
        const status = statusOf(err);
        if (expected !== undefined && (status === 412 || (status === 404 && expected !== null))) {
          throw this.stale(rel, expected, (await this.readVersioned(rel))?.version ?? null, err);
        }
        if (!(status === 409 && expected !== undefined && attempt < 5)) throw this.failed('replace', rel, err);
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  }

  private stale(rel: string, expected: string | null, found: string | null, cause?: unknown): StaleVersionError {
    return new StaleVersionError(
      `${this.where(rel)} is at version ${found ?? '(absent)'}, not ${expected ?? '(absent)'}: another writer changed it`,
      { cause },
    );
  }

  async read(rel: string): Promise<Uint8Array | undefined> {
    return (await this.get(rel))?.bytes;
  }

  /** GetObject's body as it arrives (never collected whole, as read does): a failure half way names the object. */
  async stream(rel: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    checkObjectPath(rel);
    let body: unknown;
    try {
      body = (await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(rel) }))).Body;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw this.failed('read', rel, err);
    }
    if (!(body instanceof Readable))
      throw new TimesealError('io', `${this.where(rel)}: the store answered without a body`);
    const failed = (err: unknown) => this.failed('read', rel, err);
    return (async function* () {
      try {
        // Leaving the loop early (a caller that stops) destroys the body, which ends the transfer.
        for await (const piece of body) yield piece as Uint8Array;
      } catch (err) {
        throw failed(err);
      }
    })();
  }

  async readVersioned(rel: string): Promise<VersionedObject | undefined> {
    const found = await this.get(rel);
    return found && { bytes: found.bytes, version: unquoted(found.etag, this.where(rel)) };
  }

  private async get(rel: string): Promise<{ bytes: Uint8Array; etag: string | undefined } | undefined> {
    checkObjectPath(rel);
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(rel) }));
      if (answer.Body === undefined)
        throw new TimesealError('io', `${this.where(rel)}: the store answered without a body`);
      return { bytes: await answer.Body.transformToByteArray(), etag: answer.ETag };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw this.failed('read', rel, err);
    }
  }

  async exists(rel: string): Promise<boolean> {
    checkObjectPath(rel);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(rel) }));
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw this.failed('look up', rel, err);
    }
  }

  async list(prefix: string): Promise<string[]> {
    checkListPrefix(prefix);
    const strip = this.prefix === '' ? 0 : this.prefix.length + 1;
    const found: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client
        .send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.key(prefix),
            MaxKeys: this.listPageSize,
            ContinuationToken: token,
          }),
        )
        .catch((err: unknown) => {
          throw this.failed('list', `${prefix}*`, err);
        });
      for (const object of page.Contents ?? []) if (object.Key !== undefined) found.push(object.Key.slice(strip));
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return found.sort(byteOrder);
  }

  async remove(rel: string): Promise<void> {
    checkRemovable(rel);
    try {
      // S3 answers 204 whether or not there was such an object; some look-alikes answer 404 for none.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(rel) }));
    } catch (err) {
      if (statusOf(err) !== 404) throw this.failed('remove', rel, err);
    }
  }

  private where(rel: string): string {
    return `${this.location}/${rel}`;
  }

  private failed(action: string, rel: string, err: unknown): TimesealError {
    if (err instanceof TimesealError) return err;
    return new TimesealError('io', `${this.where(rel)}: could not ${action} it: ${describe(err)}`, { cause: err });
  }
}

/** The scratch keys of the probe, beside the archive's objects (a name no archive path has: checkObjectPath
 * refuses names starting with a dot). */
export const PROBE_PREFIX = '.timeseal-probe/';

/**
 * Asks the store whether it enforces create-only writes: the same scratch key is PUT twice with
 * `If-None-Match: *`. 'enforced' when the second is refused with 412; 'ignored' when it is accepted (or refused as
 * not implemented, 501). Any other failure (credentials, a missing bucket, no answer) is thrown. The scratch key
 * is deleted afterwards.
 */
export async function probeConditionalWrites(client: S3Client, where: S3Location): Promise<'enforced' | 'ignored'> {
  const key = `${where.prefix === '' ? '' : `${where.prefix}/`}${PROBE_PREFIX}${os.hostname()}-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  const location = `s3://${where.bucket}/${key}`;
  const put = (body: string): Promise<unknown> =>
    client.send(
      new PutObjectCommand({
        Bucket: where.bucket,
        Key: key,
        Body: body,
        IfNoneMatch: '*',
        ContentType: 'text/plain; charset=utf-8',
        CacheControl: 'no-store',
      }),
    );
  try {
    try {
      await put('first\n');
    } catch (err) {
      if (statusOf(err) === 501) return 'ignored';
      throw new TimesealError('io', `${location}: the probe's first create-only PUT failed: ${describe(err)}`, {
        cause: err,
      });
    }
    try {
      await put('second\n');
      return 'ignored';
    } catch (err) {
      const status = statusOf(err);
      if (status === 412) return 'enforced';
      if (status === 501) return 'ignored';
      throw new TimesealError('io', `${location}: the probe's second create-only PUT failed: ${describe(err)}`, {
        cause: err,
      });
    }
  } finally {
    await client.send(new DeleteObjectCommand({ Bucket: where.bucket, Key: key })).catch(() => undefined);
  }
}

/** An ETag as a version: without its quotes (RGW's If-Match matches only the unquoted form). */
function unquoted(etag: string | undefined, where: string): string {
  if (etag === undefined || etag === '') throw new TimesealError('io', `${where}: the store answered without an ETag`);
  return etag.replace(/^"(.*)"$/, '$1');
}

/** The HTTP status of an SDK error, or undefined when no answer came. */
function statusOf(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined;
}

function describe(err: unknown): string {
  if (err instanceof S3ServiceException)
    return `${err.$metadata.httpStatusCode ?? 'no status'} ${err.name}${err.message && err.message !== err.name ? `: ${err.message}` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

function sha256(bytes: Uint8Array): string {
  return crypto.hash('sha256', bytes, 'hex');
}

/** A store that does not answer is given up on: 10 s to connect, and a request on which nothing moves for
 * `idleTimeoutMs` (default 60 s) fails (the SDK then tries twice more). */
const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 60_000;

/** An S3 client from the standard AWS variables of `env`. */
export function s3Client(env: NodeJS.ProcessEnv, options: { idleTimeoutMs?: number } = {}): S3Client {
  const endpoint = setting(env, 'AWS_ENDPOINT_URL_S3') ?? setting(env, 'AWS_ENDPOINT_URL');
  const region =
    setting(env, 'AWS_REGION') ??
    setting(env, 'AWS_DEFAULT_REGION') ??
    (endpoint === undefined ? undefined : 'us-east-1');
  if (region === undefined)
    throw new UsageError('TIMESEAL_ARCHIVE=s3://…: set AWS_REGION (or AWS_ENDPOINT_URL for a store other than AWS)');
  const accessKeyId = setting(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = setting(env, 'AWS_SECRET_ACCESS_KEY');
  const sessionToken = setting(env, 'AWS_SESSION_TOKEN');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined))
    throw new UsageError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither');
  return new S3Client({
    region,
    ...(endpoint === undefined ? {} : { endpoint, forcePathStyle: true }),
    ...(accessKeyId === undefined || secretAccessKey === undefined
      ? {}
      : { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }),
    // Checksums only where S3 requires them: many look-alikes refuse the SDK's newer default trailers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: options.idleTimeoutMs ?? IDLE_TIMEOUT_MS },
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Each command class's middleware stack is resolved once, not on every send (nothing here adds middleware to
    // one command): ~5-10% of the writer's CPU when a day's ~7,800 objects are published (docs/BENCHMARKS.md).
    cacheMiddleware: true,
  });
}
