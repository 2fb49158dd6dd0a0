// Opens the archive store that TIMESEAL_ARCHIVE names: a folder (the default, `ledgers`), or an S3 bucket
// `s3://bucket/prefix` reached with the standard AWS variables — AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3) for a
// store other than AWS, addressed path-style (http://host/bucket/key: what Ceph RGW, MinIO and most look-alikes
// answer without DNS names per bucket); AWS_REGION (default us-east-1 with an endpoint); AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (else the SDK's usual chain: profiles, instance roles). An S3 store is probed before
// use (s3.ts probeConditionalWrites) and refused when it ignores create-only writes, unless
// TIMESEAL_S3_ACCEPT_PLAIN_PUTS=1 says the operator accepts plain PUTs.
// The S3 engine (s3.ts, with the AWS SDK: ~0.2 s of CPU to load) is loaded only for an s3:// archive, so that every
// command on a folder archive starts without it.
import { UsageError } from '../../runtime/config.ts';
import { setting, type SettingName } from '../../runtime/settings.ts';
import { readerFor, type ArchiveReader } from '../archive-reader.ts';
import { archiveStoreReader, type ArchiveStore } from './archive-store.ts';
import { FolderArchiveStore } from './folder.ts';

export const ACCEPT_PLAIN_PUTS = 'TIMESEAL_S3_ACCEPT_PLAIN_PUTS' satisfies SettingName;

export function isS3Archive(archive: string): boolean {
  return archive.startsWith('s3://');
}

export async function openArchiveStore(archive: string, env: NodeJS.ProcessEnv = process.env): Promise<ArchiveStore> {
  if (!isS3Archive(archive)) return new FolderArchiveStore(archive);
  const { parseS3Url, probeConditionalWrites, s3Client, S3ArchiveStore } = await import('./s3.ts');
  const where = parseS3Url(archive);
  const client = s3Client(env);
  const accept = setting(env, ACCEPT_PLAIN_PUTS);
  if ((await probeConditionalWrites(client, where)) === 'enforced')
    return new S3ArchiveStore(client, where, 'conditional');
  if (accept === '1') return new S3ArchiveStore(client, where, 'plain');
  throw new UsageError(refusal(archive, env));
}

function refusal(archive: string, env: NodeJS.ProcessEnv): string {
  const endpoint = setting(env, 'AWS_ENDPOINT_URL_S3') ?? setting(env, 'AWS_ENDPOINT_URL') ?? 'AWS S3';
  return (
    `${archive} (${endpoint}) ignores create-only writes: a second PUT with If-None-Match: * of a scratch key was ` +
    `accepted, so published objects could be overwritten without an error. Use a store that refuses it with 412 ` +
    `(AWS S3, Ceph RGW, MinIO, Cloudflare R2), or set ${ACCEPT_PLAIN_PUTS}=1 to accept plain PUTs (each object is ` +
    `then read before it is written: safe with one writer, not with two racing)`
  );
}

/** The store TIMESEAL_ARCHIVE names, to read only (`timeseal verify`, `timeseal receipt check`): no probe, which would need the right to
 * write; an S3 store's keys need only s3:GetObject and s3:ListBucket. */
export async function openArchiveStoreToRead(
  archive: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ArchiveStore> {
  if (!isS3Archive(archive)) return new FolderArchiveStore(archive);
  const { parseS3Url, s3Client, S3ArchiveStore } = await import('./s3.ts');
  return new S3ArchiveStore(s3Client(env), parseS3Url(archive), 'conditional');
}

/** The archive at `location` as a reader (pipeline/archive-reader.ts), for `timeseal verify` and `timeseal receipt
 * check`: an s3:// archive through its store (openArchiveStoreToRead; a day's ledger streamed from the bucket),
 * a folder or an http(s) URL as readerFor reads it (`timeoutMs` its deadline of each HTTP request). */
export async function openArchiveReader(location: string, timeoutMs?: number): Promise<ArchiveReader> {
  if (!isS3Archive(location)) return readerFor(location, timeoutMs);
  const store = await openArchiveStoreToRead(location);
  return archiveStoreReader(
    store.location,
    (rel) => store.read(rel),
    (rel) => store.stream(rel),
  );
}
