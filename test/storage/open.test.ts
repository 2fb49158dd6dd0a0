// TIMESEAL_ARCHIVE and the AWS variables read at the boundary (pipeline/storage/open.ts, s3.ts parseS3Url): which
// engine a value selects, and every malformed or half-given setting refused with a message that names it, before
// any request is sent.
import { describe, expect, it } from 'vitest';
import { FolderArchiveStore } from '../../pipeline/storage/folder.ts';
import { ACCEPT_PLAIN_PUTS, isS3Archive, openArchiveStore } from '../../pipeline/storage/open.ts';
import { parseS3Url, s3Client } from '../../pipeline/storage/s3.ts';

describe('TIMESEAL_ARCHIVE', () => {
  it.each([
    ['s3://timeseal', { bucket: 'timeseal', prefix: '' }],
    ['s3://timeseal/', { bucket: 'timeseal', prefix: '' }],
    ['s3://timeseal/ledgers', { bucket: 'timeseal', prefix: 'ledgers' }],
    ['s3://my.bucket-1/a/b/', { bucket: 'my.bucket-1', prefix: 'a/b' }],
  ])('%s is bucket and prefix %j', (url, where) => {
    expect(isS3Archive(url)).toBe(true);
    expect(parseS3Url(url)).toEqual(where);
  });

  it.each([
    's3://',
    's3://Upper',
    's3://ab',
    's3://b_c',
    's3://bucket/../x',
    's3://bucket/a//b',
    's3://bucket/.hidden',
    's3:/bucket',
  ])('%s is refused, quoted', (url) => {
    expect(() => parseS3Url(url)).toThrow(
      url.startsWith('s3://bucket/') ? /not an archive object path/ : `not an S3 location s3://BUCKET[/PREFIX]: ${url}`,
    );
  });

  it('anything else is a folder, as before', async () => {
    for (const value of ['ledgers', '/srv/timeseal/ledgers', './s3:/x']) {
      expect(isS3Archive(value)).toBe(false);
      expect(await openArchiveStore(value, {})).toBeInstanceOf(FolderArchiveStore);
    }
  });
});

describe('the AWS variables', () => {
  it('a region is needed unless an endpoint is given (other stores: us-east-1)', async () => {
    expect(() => s3Client({})).toThrow('set AWS_REGION (or AWS_ENDPOINT_URL for a store other than AWS)');
    expect(await s3Client({ AWS_ENDPOINT_URL: 'http://127.0.0.1:1' }).config.region()).toBe('us-east-1');
    expect(await s3Client({ AWS_REGION: 'eu-central-1' }).config.region()).toBe('eu-central-1');
    expect(await s3Client({ AWS_DEFAULT_REGION: 'eu-west-3' }).config.region()).toBe('eu-west-3');
  });

  it('an endpoint means path-style addressing; AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL', async () => {
    const client = s3Client({ AWS_ENDPOINT_URL: 'http://127.0.0.1:1', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:2' });
    expect(client.config.forcePathStyle).toBe(true);
    expect((await client.config.endpoint!()).port).toBe(2);
    expect(s3Client({ AWS_REGION: 'eu-central-1' }).config.forcePathStyle).toBe(false);
  });

  it("each command's middleware is resolved once, not on every request (a day publishes ~7,800 objects)", () => {
    expect(s3Client({ AWS_REGION: 'eu-central-1' }).config.cacheMiddleware).toBe(true);
  });

  it('keys are both given or neither', () => {
    expect(() => s3Client({ AWS_REGION: 'x', AWS_ACCESS_KEY_ID: 'k' })).toThrow(
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither',
    );
    expect(() => s3Client({ AWS_REGION: 'x', AWS_SECRET_ACCESS_KEY: 's' })).toThrow('set both or neither');
  });

  it(`${ACCEPT_PLAIN_PUTS} takes 1 or 0, checked before any request`, async () => {
    // Port 1 on loopback: nothing listens, so a request would fail otherwise.
    const env = { AWS_ENDPOINT_URL: 'http://127.0.0.1:1', [ACCEPT_PLAIN_PUTS]: 'true' };
    await expect(openArchiveStore('s3://archive', env)).rejects.toThrow(
      `${ACCEPT_PLAIN_PUTS} must be 1 or 0, got "true"`,
    );
  });
});
