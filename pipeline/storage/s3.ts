// The S3 engine of the archive store (archive-store.ts), on the official AWS SDK: one object per archive file,
// under `prefix/` in a bucket, each with the Cache-Control and Content-Type of its path.
// - create: PutObject with `If-None-Match: *`. The store refuses it (412) when the object exists; the object is
//   then read and compared: identical bytes are success, other bytes a ConflictError naming the object. Nothing
//   is ever overwritten, even by two writers racing (the store decides, not a read before the write).
// - replace: a PutObject (S3 replaces an object whole: readers get the old or the new one); conditional, with
//   `If-Match: <ETag>` (a version is the ETag, unquoted: Ceph RGW matches only an unquoted one, AWS either) or
//   `If-None-Match: *`; a 412 (or AWS's 404 for If-Match on no object) is a StaleVersionError.
// - createFromFile (a day's ledger: 9.25 GB at 100,000,000 hashes, beyond one PutObject's 5 GB): streamed from the
//   file, never held. Below `multipartThreshold` one PutObject as create; from it a multipart upload, its parts
//   streamed from ranges of the file, `partsInFlight` at a time, aborted on any failure (no parts linger, unless
//   the abort itself cannot reach the store: docs/OPERATIONS.md §8, the lifecycle rule). Create-only as create:
//   CompleteMultipartUpload with `If-None-Match: *` where the store enforces it there (AWS S3 since 2024; probed
//   once a store, probeConditionalComplete). Ceph RGW 16.2 ignores it and overwrites: then the object is looked
//   up (HEAD) before completing, and after completing its ETag must be the one these parts make — safe under the
//   archive's one writer (the schedule lease); two writers racing to complete one key within the same moment
//   could both succeed, the later's bytes replacing the earlier's (docs/DECISIONS.md). A 412, or an object
//   found there, is compared with the file, both streamed in step.
// - remove (retired index segments only): DeleteObject.
// Stores that ignore the condition would silently overwrite, so the engine is opened only after a probe
// (probeConditionalWrites) shows that a second create-only PUT of one key is refused; an operator may instead
// accept plain PUTs explicitly, and then create reads the object first and writes only when it is absent — safe
// for one writer, not against two racing.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { TimesealError } from '../../core/errors.ts';
import { UsageError } from '../../runtime/config.ts';
import { setting } from '../../runtime/settings.ts';
import { ConflictError } from '../files.ts';
import { inParallel } from '../in-parallel.ts';
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

const MiB = 1 << 20;
/** S3's limits on a multipart upload: parts of at least 5 MiB but the last (RGW's rgw_multipart_min_part_size
 * too: a smaller one is refused, 400 EntityTooSmall), at most 10,000 parts. */
export const MIN_PART_SIZE = 5 * MiB;
const MAX_PARTS = 10_000;

export interface S3StoreOptions {
  /** Keys asked of each ListObjectsV2 request (S3's most and default, 1,000). */
  listPageSize?: number;
  /** createFromFile of a file this large or larger is a multipart upload (default 64 MiB; one PutObject holds at
   * most 5 GB). */
  multipartThreshold?: number;
  /** Bytes of each part but the last (default 16 MiB, at least MIN_PART_SIZE; more when the file would need over
   * 10,000 parts). */
  partSize?: number;
  /** Parts uploaded at once (default 4); each streams from the file, so memory does not grow with it. */
  partsInFlight?: number;
}

export class S3ArchiveStore implements ArchiveStore {
  readonly location: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly mode: CreateMode;
  private readonly listPageSize: number;
  private readonly multipartThreshold: number;
  private readonly partSize: number;
  private readonly partsInFlight: number;
  /** Whether the store refuses a CompleteMultipartUpload with `If-None-Match: *` of an existing key, asked once
   * (probeConditionalComplete) when the first multipart upload begins. */
  private completeProbe: Promise<'enforced' | 'ignored'> | undefined;

  constructor(client: S3Client, where: S3Location, mode: CreateMode, options: S3StoreOptions = {}) {
    this.client = client;
    this.bucket = where.bucket;
    this.prefix = where.prefix;
    this.mode = mode;
    this.listPageSize = options.listPageSize ?? 1000;
    this.multipartThreshold = options.multipartThreshold ?? 64 * MiB;
    this.partSize = Math.max(MIN_PART_SIZE, options.partSize ?? 16 * MiB);
    this.partsInFlight = options.partsInFlight ?? 4;
    this.location = `s3://${where.bucket}${where.prefix === '' ? '' : `/${where.prefix}`}`;
  }

  private key(rel: string): string {
    return this.prefix === '' ? rel : `${this.prefix}/${rel}`;
  }

  /** PUTs the object; returns its ETag (undefined from a store that sends none: some look-alikes). */
  private async put(
    rel: string,
    body: Uint8Array | LocalFile,
    condition: { ifNoneMatch?: '*'; ifMatch?: string } = {},
  ): Promise<string | undefined> {
    const stream = body instanceof Uint8Array ? undefined : fileRange(body.file, 0, body.size);
    try {
      const answer = await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key(rel),
          ...(body instanceof Uint8Array
            ? { Body: body, ContentLength: body.length }
            : { Body: stream, ContentLength: body.size }),
          CacheControl: archiveCacheControl(rel),
          ContentType: archiveContentType(rel),
          ...(condition.ifNoneMatch === undefined ? {} : { IfNoneMatch: condition.ifNoneMatch }),
          ...(condition.ifMatch === undefined ? {} : { IfMatch: condition.ifMatch }),
        }),
      );
      return answer.ETag;
    } finally {
      // A request that failed before its body was read (or half way) leaves the file open otherwise.
      stream?.destroy();
    }
  }

  async create(rel: string, bytes: Uint8Array): Promise<boolean> {
    checkObjectPath(rel);
    const compare = async (): Promise<false> => {
      const existing = await this.read(rel);
      if (existing === undefined) throw this.vanished(rel);
      if (Buffer.compare(existing, bytes) !== 0) throw this.differs(rel, sha256(existing), sha256(bytes));
      return false;
    };
    return this.createOnly(rel, bytes, compare);
  }

  async createFromFile(rel: string, file: string): Promise<boolean> {
    checkObjectPath(rel);
    const local: LocalFile = { file, size: (await fs.promises.stat(file)).size };
    const compare = () => this.sameAsFile(rel, local);
    return local.size < this.multipartThreshold
      ? this.createOnly(rel, local, compare)
      : this.createInParts(rel, local, compare);
  }

  /** One create-only PutObject of `body`; `compare` answers when the object is there (false, or a ConflictError). */
  private async createOnly(rel: string, body: Uint8Array | LocalFile, compare: () => Promise<false>): Promise<boolean> {
    if (this.mode === 'plain') {
      if (await this.exists(rel)) return compare();
      for (let attempt = 1; ; attempt++) {
        try {
          await this.put(rel, body);
          return true;
        } catch (err) {
          if (!sendAgain(body, err, attempt)) throw this.failed('create', rel, err);
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
      }
    }
    // A 409 is a concurrent conditional write of the same key still in progress (AWS): asked again. A body streamed
    // from a file that failed in passing is sent again too (the SDK sends bytes given whole again itself); should
    // the first have arrived after all, the next is refused with 412 and compared.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.put(rel, body, { ifNoneMatch: '*' });
        return true;
      } catch (err) {
        const status = statusOf(err);
        const again = (status === 409 && attempt < 5) || sendAgain(body, err, attempt);
        if (status !== 412 && !again) throw this.failed('create', rel, err);
        if (again) {
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
          continue;
        }
      }
      return compare();
    }
  }

  /**
   * A multipart upload of the file (see the module comment): created, its parts streamed `partsInFlight` at a
   * time, completed create-only (the store's `If-None-Match: *`, or a HEAD before and the ETag after where the
   * store ignores it), and aborted on any failure or when the object turns out to be there already.
   */
  private async createInParts(rel: string, local: LocalFile, compare: () => Promise<false>): Promise<boolean> {
    const guarded = this.mode === 'plain' || (await this.conditionalComplete()) === 'ignored';
    if (guarded && (await this.exists(rel))) return compare();
    const key = this.key(rel);
    const started = await this.client
      .send(
        new CreateMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          CacheControl: archiveCacheControl(rel),
          ContentType: archiveContentType(rel),
        }),
      )
      .catch((err: unknown) => {
        throw this.failed('start the upload of', rel, err);
      });
    const uploadId = started.UploadId;
    if (uploadId === undefined) throw new TimesealError('io', `${this.where(rel)}: the store gave no upload id`);
    const partSize = Math.max(this.partSize, Math.ceil(local.size / MAX_PARTS));
    const etags: string[] = [];
    let outcome: 'created' | 'present' | undefined;
    try {
      const numbers = Array.from({ length: Math.max(1, Math.ceil(local.size / partSize)) }, (_, i) => i + 1);
      await inParallel(numbers, this.partsInFlight, async (n) => {
        const start = (n - 1) * partSize;
        const length = Math.min(partSize, local.size - start);
        // The SDK never retries a streamed body: a part that failed in passing is sent again (sendAgain), from a
        // new stream of its range.
        for (let attempt = 1; ; attempt++) {
          const stream = fileRange(local.file, start, length);
          try {
            const answer = await this.client.send(
              new UploadPartCommand({
                Bucket: this.bucket,
                Key: key,
                UploadId: uploadId,
                PartNumber: n,
                Body: stream,
                ContentLength: length,
              }),
            );
            etags[n - 1] = unquoted(answer.ETag, `${this.where(rel)} part ${n}`);
            return;
          } catch (err) {
            if (!sendAgain(local, err, attempt)) throw this.failed(`upload part ${n} of`, rel, err);
            await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
          } finally {
            stream.destroy();
          }
        }
      });
      if (guarded && (await this.exists(rel))) outcome = 'present';
      else {
        try {
          await this.client.send(
            new CompleteMultipartUploadCommand({
              Bucket: this.bucket,
              Key: key,
              UploadId: uploadId,
              MultipartUpload: { Parts: etags.map((etag, i) => ({ PartNumber: i + 1, ETag: `"${etag}"` })) },
              ...(guarded ? {} : { IfNoneMatch: '*' }),
            }),
          );
          outcome = 'created';
        } catch (err) {
          if (statusOf(err) !== 412) throw this.failed('complete the upload of', rel, err);
          outcome = 'present';
        }
      }
    } finally {
      if (outcome !== 'created')
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }))
          .catch(() => undefined);
    }
    if (outcome === 'present') return compare();
    // Where the store ignores the condition: these parts' object must be the one there now (else another writer
    // completed the same key in the same moment, which the store let overwrite).
    if (guarded && (await this.etagOf(rel)) !== multipartEtag(etags)) await compare();
    return true;
  }

  /** The store's answer to probeConditionalComplete, asked once. */
  private conditionalComplete(): Promise<'enforced' | 'ignored'> {
    this.completeProbe ??= probeConditionalComplete(this.client, { bucket: this.bucket, prefix: this.prefix });
    return this.completeProbe;
  }

  private async etagOf(rel: string): Promise<string | undefined> {
    const head = await this.client
      .send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(rel) }))
      .catch((err: unknown) => {
        if (statusOf(err) === 404) return undefined;
        throw this.failed('look up', rel, err);
      });
    return head?.ETag?.replace(/^"(.*)"$/, '$1');
  }

  /** Compares the object with the local file, both streamed in step and hashed: false when they are the same, a
   * ConflictError naming both SHA-256s when not. */
  private async sameAsFile(rel: string, local: LocalFile): Promise<false> {
    const body = await this.stream(rel);
    if (body === undefined) throw this.vanished(rel);
    const inStore = crypto.createHash('sha256');
    const inFile = crypto.createHash('sha256');
    const handle = await fs.promises.open(local.file, 'r');
    let same = true;
    let position = 0;
    try {
      const buffer = Buffer.alloc(MiB);
      for await (const piece of body) {
        inStore.update(piece);
        for (let done = 0; done < piece.length;) {
          const want = Math.min(buffer.length, piece.length - done);
          const { bytesRead } = await handle.read(buffer, 0, want, position);
          inFile.update(buffer.subarray(0, bytesRead));
          if (bytesRead < want || buffer.compare(piece, done, done + want, 0, want) !== 0) same = false;
          position += bytesRead;
          done += want;
        }
      }
      // The file's rest, when it is longer than the object.
      for (let n; (n = (await handle.read(buffer, 0, buffer.length, position)).bytesRead) > 0; position += n) {
        inFile.update(buffer.subarray(0, n));
        same = false;
      }
    } finally {
      await handle.close();
    }
    if (!same) throw this.differs(rel, inStore.digest('hex'), inFile.digest('hex'));
    return false;
  }

  private differs(rel: string, inStore: string, rebuilt: string): ConflictError {
    return new ConflictError(
      `published object ${this.where(rel)} differs from the rebuild: sha256 in the store ${inStore} != rebuilt ${rebuilt}`,
    );
  }

  private vanished(rel: string): TimesealError {
    return new TimesealError(
      'io',
      `${this.where(rel)}: the store said it was there (a 412, or a HEAD) but has no such object`,
    );
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

/**
 * Asks the store whether it enforces create-only completion of multipart uploads: a scratch key is PUT, then a
 * one-part upload of the same key is completed with `If-None-Match: *`. 'enforced' when that is refused with 412
 * (AWS S3); 'ignored' when it completes (Ceph RGW 16.2: the object is overwritten) or the store refuses the
 * header as not implemented (501, or 400 NotImplemented). Other failures are thrown; the scratch key and the
 * upload are removed afterwards.
 */
export async function probeConditionalComplete(client: S3Client, where: S3Location): Promise<'enforced' | 'ignored'> {
  const key = `${where.prefix === '' ? '' : `${where.prefix}/`}${PROBE_PREFIX}${os.hostname()}-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  const location = `s3://${where.bucket}/${key}`;
  let uploadId: string | undefined;
  try {
    await client.send(
      new PutObjectCommand({ Bucket: where.bucket, Key: key, Body: 'first\n', CacheControl: 'no-store' }),
    );
    uploadId = (await client.send(new CreateMultipartUploadCommand({ Bucket: where.bucket, Key: key }))).UploadId;
    const part = await client.send(
      new UploadPartCommand({ Bucket: where.bucket, Key: key, UploadId: uploadId, PartNumber: 1, Body: 'second\n' }),
    );
    try {
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: where.bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
          IfNoneMatch: '*',
        }),
      );
      uploadId = undefined;
      return 'ignored';
    } catch (err) {
      const status = statusOf(err);
      if (status === 412) return 'enforced';
      if (status === 501 || (err instanceof S3ServiceException && err.name === 'NotImplemented')) return 'ignored';
      throw err;
    }
  } catch (err) {
    throw new TimesealError('io', `${location}: the probe of create-only multipart uploads failed: ${describe(err)}`, {
      cause: err,
    });
  } finally {
    if (uploadId !== undefined)
      await client
        .send(new AbortMultipartUploadCommand({ Bucket: where.bucket, Key: key, UploadId: uploadId }))
        .catch(() => undefined);
    await client.send(new DeleteObjectCommand({ Bucket: where.bucket, Key: key })).catch(() => undefined);
  }
}

/** Whether a request with a body streamed from a file that failed in passing (no answer, or a 5xx) is sent again,
 * from a new stream: three attempts in all, as the SDK makes of one whose body it holds (which it sends again
 * itself: false for those). */
function sendAgain(body: Uint8Array | LocalFile, err: unknown, attempt: number): boolean {
  if (body instanceof Uint8Array || attempt >= 3 || err instanceof TimesealError) return false;
  const status = statusOf(err);
  return status === undefined || status >= 500;
}

/** `length` bytes of the file from `start`, read 1 MiB at a time (an empty range is an empty stream: a read
 * stream's `end` is inclusive). */
function fileRange(file: string, start: number, length: number): Readable {
  return length === 0
    ? Readable.from([])
    : fs.createReadStream(file, { start, end: start + length - 1, highWaterMark: MiB });
}

/** A local file to store, and its size. */
interface LocalFile {
  file: string;
  size: number;
}

/** The ETag S3 (and RGW) give an object completed from these parts: the MD5 of their MD5s, then `-` and their
 * count (unquoted). */
function multipartEtag(partEtags: readonly string[]): string {
  const md5s = Buffer.concat(partEtags.map((etag) => Buffer.from(etag, 'hex')));
  return `${crypto.hash('md5', md5s, 'hex')}-${partEtags.length}`;
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
    logger: SDK_LOGGER,
  });
}

/** The SDK's default logger says nothing, except one warning on the console at every failed request with a
 * streamed body (createFromFile), which it sends only when no logger is given: a 412 of an object already there is
 * an answer here, and a failed part is sent again or reported with its cause. So a logger that says nothing. */
const SDK_LOGGER = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
