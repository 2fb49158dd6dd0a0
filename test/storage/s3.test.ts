// The S3 engine (pipeline/storage/s3.ts). Against a real Ceph RADOS Gateway (test/support/ceph-rgw.ts, the
// test run's cluster, a bucket of this file's own): the archive store contract (contract.ts), each test under a new key prefix of the
// bucket; the cache class and type of each kind of object, as `timeseal serve` answers them; the start-up probe
// passing; a real archive built by `timeseal ledger build`, stored through the engine and verified over HTTP. Against a stand-in S3 server written here that accepts every PUT, as many S3 look-alikes do: the probe
// refusing it, and plain PUTs when the operator accepts them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import {
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheClass, DAYS_PATH } from '../../core/archive.ts';
import { archiveCacheControl, archiveContentType } from '../../core/archive.ts';
import type { ArchiveStore } from '../../pipeline/storage/archive-store.ts';
import { FolderArchiveStore } from '../../pipeline/storage/folder.ts';
import { ACCEPT_PLAIN_PUTS, openArchiveStore } from '../../pipeline/storage/open.ts';
import {
  parseS3Url,
  probeConditionalComplete,
  probeConditionalWrites,
  PROBE_PREFIX,
  s3Client,
  S3ArchiveStore,
} from '../../pipeline/storage/s3.ts';
import { makeHashes, removeTempProjects, run, runJson, tempProject, writeHashFile } from '../cli/helpers.ts';
import { cephForSuite, publicArchiveUrl } from '../support/ceph-rgw.ts';
import { archiveStoreContract, LARGE_FILE } from './contract.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Copies an archive folder into a store in the build's order of writes: every immutable object (created only if
 * absent), then days.json (the commit point), then the other mutable objects. */
async function storeArchive(folder: string, store: ArchiveStore): Promise<string[]> {
  const source = new FolderArchiveStore(folder);
  const rels = await source.list('');
  const immutable = rels.filter((rel) => cacheClass(rel) === 'immutable');
  const mutable = rels.filter((rel) => cacheClass(rel) !== 'immutable' && rel !== DAYS_PATH);
  for (const rel of immutable) await store.create(rel, (await source.read(rel))!);
  for (const rel of [DAYS_PATH, ...mutable]) await store.replace(rel, (await source.read(rel))!);
  return rels;
}

describe('on a Ceph RADOS Gateway', () => {
  const ceph = cephForSuite();
  afterAll(() => removeTempProjects());
  let n = 0;
  let location = '';
  const sdk = (): S3Client =>
    new S3Client({
      endpoint: ceph.current.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: ceph.current.accessKeyId, secretAccessKey: ceph.current.secretAccessKey },
    });

  // Pages of 100 keys, so that the contract's listing spans several with a few hundred objects. The probe that
  // openArchiveStore runs first is tested below.
  archiveStoreContract('S3 on Ceph RGW', {
    fresh: () => void (location = `s3://${ceph.current.bucket}/contract-${++n}/ledgers`),
    open: async () =>
      new S3ArchiveStore(s3Client(ceph.current.env), parseS3Url(location), 'conditional', {
        listPageSize: 100,
        multipartThreshold: LARGE_FILE,
        partSize: LARGE_FILE,
      }),
  });

  it('the probe passes (RGW refuses a second create-only PUT) and leaves no scratch object behind', async () => {
    const store = await openArchiveStore(`s3://${ceph.current.bucket}/probed`, ceph.current.env);
    expect(store).toBeInstanceOf(S3ArchiveStore);
    expect(store.location).toBe(`s3://${ceph.current.bucket}/probed`);
    const listed = await sdk().send(new ListObjectsV2Command({ Bucket: ceph.current.bucket, Prefix: 'probed/' }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });

  it('every object carries the Cache-Control and Content-Type `timeseal serve` answers its path with', async () => {
    const store = await openArchiveStore(`s3://${ceph.current.bucket}/classes`, ceph.current.env);
    const year = 'public, max-age=31536000, immutable';
    const minute = 'public, max-age=60';
    const json = 'application/json; charset=utf-8';
    const note = 'text/plain; charset=utf-8';
    const binary = 'application/octet-stream';
    const objects: Array<[string, 'create' | 'replace', string, string]> = [
      ['2025-11-02.json', 'create', year, json],
      ['2025-11-02.json.sig', 'create', year, binary],
      ['2025-11-02.json.dilithium.sig', 'create', year, binary],
      ['2025-11-02.json.signatures.json', 'create', year, json],
      ['2025-11-02.checkpoint', 'create', year, note],
      ['2025-11-02.json.tsr', 'create', year, 'application/timestamp-reply'],
      ['tile/0/x001/234', 'create', year, binary],
      ['tile/1/000.p/17', 'create', year, binary],
      ['tile/entries/x002/005', 'create', year, binary],
      ['index/0-200.idx', 'create', year, binary],
      ['checkpoint', 'replace', minute, note],
      ['days.json', 'replace', minute, json],
      ['index/segments.json', 'replace', minute, json],
      ['2025-11-02.cosignatures', 'replace', minute, note],
      ['2025-11-02.json.ots', 'replace', minute, binary],
      ['ots_status.json', 'replace', 'no-cache', json],
      ['block_info.json', 'replace', 'no-cache', json],
      ['block-info/2025-11.json', 'replace', 'no-cache', json],
    ];
    const client = sdk();
    for (const [rel, how, cacheControl, contentType] of objects) {
      await (how === 'create' ? store.create(rel, bytes(rel)) : store.replace(rel, bytes(rel)));
      const head = await client.send(new HeadObjectCommand({ Bucket: ceph.current.bucket, Key: `classes/${rel}` }));
      expect([rel, head.CacheControl, head.ContentType]).toEqual([rel, cacheControl, contentType]);
      // The server's own answer for the path (core/archive.ts, what `timeseal serve` sends) is the same.
      expect([rel, archiveCacheControl(rel), archiveContentType(rel)]).toEqual([rel, cacheControl, contentType]);
    }
    // A replaced object keeps its class.
    await store.replace('checkpoint', bytes('again'));
    expect(
      (await client.send(new HeadObjectCommand({ Bucket: ceph.current.bucket, Key: 'classes/checkpoint' })))
        .CacheControl,
    ).toBe(minute);
  });

  it("an archive at the bucket root (no prefix) is listed without the bucket's other prefixes", async () => {
    const store = await openArchiveStore(`s3://${ceph.current.bucket}`, ceph.current.env);
    await store.create('2024-01-01.json', bytes('root'));
    expect(await store.list('2024-')).toEqual(['2024-01-01.json']);
    expect(await store.read('2024-01-01.json')).toEqual(new Uint8Array(bytes('root')));
  });

  it('two days built by `timeseal ledger build`, stored through the engine, are the same bytes in RGW, and `timeseal verify` passes on the bucket over HTTP; an object changed by hand in the bucket fails it, named', async () => {
    const dir = tempProject('s3-archive');
    expect(run(dir, ['keys', 'init']).code).toBe(0);
    const hashes = makeHashes('s3-archive', 300);
    for (const [i, [at, lines]] of (
      [
        ['2025-11-01T09:00:00Z', hashes.slice(0, 120)],
        ['2025-11-02T17:30:00Z', hashes.slice(120)],
      ] as const
    ).entries()) {
      const imported = run(dir, ['import', writeHashFile(dir, `day-${i}.txt`, [...lines])], {
        env: { TIMESEAL_NOW: at },
      });
      expect(imported.code, imported.stderr).toBe(0);
    }
    const built = runJson(dir, ['ledger', 'build'], { env: { TIMESEAL_NOW: '2025-11-03T00:01:00Z' } });
    expect(built.result.code, built.result.stderr).toBe(0);
    expect(built.json.days.map((d: { entryCount: number }) => d.entryCount)).toEqual([120, 180]);
    const folder = path.join(dir, 'ledgers');
    expect(run(dir, ['index-json', '--out', path.join(folder, 'index-sha256.json')]).code).toBe(0);

    const store = await openArchiveStore(`s3://${ceph.current.bucket}/archive/ledgers`, ceph.current.env);
    const rels = await storeArchive(folder, store);
    expect(rels).toEqual(
      expect.arrayContaining([
        '2025-11-02.json',
        '2025-11-02.checkpoint',
        'checkpoint',
        DAYS_PATH,
        'index/segments.json',
        'tile/0/001.p/44',
      ]),
    );
    expect(await store.list('')).toEqual(rels);
    const source = new FolderArchiveStore(folder);
    for (const rel of rels)
      expect(Buffer.from((await store.read(rel))!).equals(Buffer.from((await source.read(rel))!)), rel).toBe(true);
    // Storing it again (a rerun) writes nothing new and changes nothing.
    await storeArchive(folder, store);

    // Readable by anyone, as behind a CDN: GET with the stored cache classes, and `timeseal verify` over HTTP.
    const client = sdk();
    const url = await publicArchiveUrl(ceph.current, 'archive/ledgers');
    const ledger = await fetch(`${url}2025-11-01.json`);
    expect([ledger.status, ledger.headers.get('cache-control')]).toEqual([200, 'public, max-age=31536000, immutable']);
    expect(Buffer.from(await ledger.arrayBuffer()).equals(Buffer.from((await source.read('2025-11-01.json'))!))).toBe(
      true,
    );
    expect((await fetch(`${url}checkpoint`)).headers.get('cache-control')).toBe('public, max-age=60');
    expect((await fetch(`${url}2025-11-04.json`)).status).toBe(404);
    const keys = ['--keys', path.join(dir, 'keys')];
    const good = runJson(dir, ['verify', '--archive', url, ...keys]);
    expect(good.result.code, good.result.stderr).toBe(0);
    expect(good.json).toMatchObject({ ok: true, days: 2, treeSize: 300, problems: [] });

    // By hand, behind the writer's back: one byte of a day's signature changed in the bucket.
    const rel = '2025-11-01.json.sig';
    const changed = Buffer.from((await store.read(rel))!);
    changed[10]! ^= 1;
    await client.send(
      new PutObjectCommand({ Bucket: ceph.current.bucket, Key: `archive/ledgers/${rel}`, Body: changed }),
    );
    const bad = runJson(dir, ['verify', '--archive', url, ...keys]);
    expect(bad.result.code).toBe(1);
    expect(
      bad.json.problems.some((p: string) => p.includes(rel)),
      JSON.stringify(bad.json.problems),
    ).toBe(true);
    // And the engine refuses to put the original back over it, naming it: a published object is never overwritten.
    await expect(store.create(rel, (await source.read(rel))!)).rejects.toThrow(
      `s3://${ceph.current.bucket}/archive/ledgers/${rel} differs`,
    );
  });

  describe('createFromFile in parts (5 MiB parts from 5 MiB on; Ceph RGW refuses a smaller part but the last: 400 EntityTooSmall)', () => {
    const files = tempProject('s3-parts');
    const localFile = (name: string, data: Uint8Array): string => {
      const file = path.join(files, name);
      fs.writeFileSync(file, data);
      return file;
    };
    /** A store on `prefix` whose SDK client runs `before` ahead of each request it sends and `after` once each
     * answered (a failure thrown there is that request's), given the command's name ('probe' for the probe's). */
    const storeWith = (
      prefix: string,
      hooks: {
        before?: (command: string, input: Record<string, unknown>) => Promise<void> | void;
        after?: typeof hooks.before;
      },
    ): S3ArchiveStore => {
      const client = s3Client(ceph.current.env);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as Record<string, unknown>;
          // The store's own probe (probeConditionalComplete) is not the upload under test.
          const command = String(input.Key).includes(PROBE_PREFIX) ? 'probe' : (context.commandName ?? '');
          await hooks.before?.(command, input);
          const answer = await next(args);
          await hooks.after?.(command, input);
          return answer;
        },
        { step: 'initialize', name: 'testHooks' },
      );
      return new S3ArchiveStore(client, parseS3Url(`s3://${ceph.current.bucket}/${prefix}`), 'conditional', {
        multipartThreshold: LARGE_FILE,
        partSize: LARGE_FILE,
      });
    };
    const pending = async (prefix: string): Promise<string[]> =>
      (
        (await sdk().send(new ListMultipartUploadsCommand({ Bucket: ceph.current.bucket, Prefix: `${prefix}/` })))
          .Uploads ?? []
      ).map((u) => u.Key ?? '');

    it('a file of three parts is one multipart upload (its ETag says 3 parts) with the cache class and type of its path, read back byte for byte; nothing is left pending', async () => {
      const data = crypto.randomBytes(2 * LARGE_FILE + 1);
      const sent: number[] = [];
      const store = storeWith('parts', {
        before: (command, input) => void (command === 'UploadPartCommand' && sent.push(input.PartNumber as number)),
      });
      expect(await store.createFromFile('2025-11-02.json', localFile('three', data))).toBe(true);
      expect(sent.sort()).toEqual([1, 2, 3]);
      const head = await sdk().send(
        new HeadObjectCommand({ Bucket: ceph.current.bucket, Key: 'parts/2025-11-02.json' }),
      );
      expect([head.ETag?.endsWith('-3"'), head.ContentLength, head.CacheControl, head.ContentType]).toEqual([
        true,
        data.length,
        'public, max-age=31536000, immutable',
        'application/json; charset=utf-8',
      ]);
      expect(Buffer.from((await store.read('2025-11-02.json'))!).equals(data)).toBe(true);
      expect(await pending('parts')).toEqual([]);
    });

    it('a failed part or a failed completion leaves no object and no pending multipart upload, and says which object', async () => {
      const data = crypto.randomBytes(2 * LARGE_FILE + 1);
      const file = localFile('failing', data);
      for (const [failing, what] of [
        ['UploadPartCommand', /could not upload part \d of it: injected failure/],
        ['CompleteMultipartUploadCommand', /could not complete the upload of it: injected failure/],
      ] as const) {
        let started = 0;
        const store = storeWith('failed', {
          before: (command, input) => {
            if (command === 'CreateMultipartUploadCommand') started++;
            if (command === failing && (command !== 'UploadPartCommand' || input.PartNumber === 2))
              throw new Error('injected failure');
          },
        });
        const err = await store.createFromFile('2025-11-02.json', file).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(err?.message, failing).toMatch(what);
        expect(err?.message).toContain(`s3://${ceph.current.bucket}/failed/2025-11-02.json`);
        expect(started, failing).toBe(1);
        expect(await store.exists('2025-11-02.json'), failing).toBe(false);
        expect(await pending('failed'), failing).toEqual([]);
      }
      // And then it goes through.
      expect(await storeWith('failed', {}).createFromFile('2025-11-02.json', file)).toBe(true);
    });

    it('a streamed PutObject or part whose first attempt fails in passing (no answer) is sent again from the file, and the object is the file', async () => {
      const failures = new Set(['PutObjectCommand', 'UploadPartCommand 2']);
      const attempts: string[] = [];
      const store = storeWith('again', {
        before: (command, input) => {
          const name = command === 'UploadPartCommand' ? `${command} ${input.PartNumber as number}` : command;
          attempts.push(name);
          if (failures.delete(name)) throw new Error('socket hang up (injected)');
        },
      });
      const small = crypto.randomBytes(70_000);
      const large = crypto.randomBytes(2 * LARGE_FILE + 1);
      expect(await store.createFromFile('2025-11-02.json.tsr', localFile('again-small', small))).toBe(true);
      expect(await store.createFromFile('2025-11-02.json', localFile('again-large', large))).toBe(true);
      expect(attempts.filter((a) => a === 'PutObjectCommand')).toHaveLength(2);
      expect(attempts.filter((a) => a === 'UploadPartCommand 2')).toHaveLength(2);
      expect(Buffer.from((await store.read('2025-11-02.json.tsr'))!).equals(small)).toBe(true);
      expect(Buffer.from((await store.read('2025-11-02.json'))!).equals(large)).toBe(true);
      expect(await pending('again')).toEqual([]);
    });

    it('Ceph RGW 16.2 completes a multipart upload over an existing key despite If-None-Match: * (the probe says "ignored", leaving nothing behind); so an object another writer creates while the parts go up is found before completing, the upload aborted and the object left as it was', async () => {
      const where = parseS3Url(`s3://${ceph.current.bucket}/probe-complete`);
      expect(await probeConditionalComplete(s3Client(ceph.current.env), where)).toBe('ignored');
      expect(
        (await sdk().send(new ListObjectsV2Command({ Bucket: ceph.current.bucket, Prefix: 'probe-complete/' })))
          .KeyCount ?? 0,
      ).toBe(0);
      expect(await pending('probe-complete')).toEqual([]);

      const data = crypto.randomBytes(2 * LARGE_FILE + 1);
      const theirs = bytes('another writer');
      const store = storeWith('raced', {
        after: async (command, input) => {
          if (command === 'UploadPartCommand' && input.PartNumber === 3)
            await sdk().send(
              new PutObjectCommand({ Bucket: ceph.current.bucket, Key: 'raced/2025-11-02.json', Body: theirs }),
            );
        },
      });
      const err = await store.createFromFile('2025-11-02.json', localFile('raced', data)).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.name).toBe('ConflictError');
      expect(err?.message).toContain(crypto.hash('sha256', data, 'hex'));
      expect(await store.read('2025-11-02.json')).toEqual(new Uint8Array(theirs));
      expect(await pending('raced')).toEqual([]);
    });

    it('where completing is not create-only, an object another writer completes over this one in the same moment is found by its ETag and refused, naming both SHA-256s', async () => {
      const data = crypto.randomBytes(2 * LARGE_FILE + 1);
      const theirs = crypto.randomBytes(1000);
      const store = storeWith('overwritten', {
        after: async (command) => {
          if (command === 'CompleteMultipartUploadCommand')
            await sdk().send(
              new PutObjectCommand({ Bucket: ceph.current.bucket, Key: 'overwritten/2025-11-02.json', Body: theirs }),
            );
        },
      });
      await expect(store.createFromFile('2025-11-02.json', localFile('overwritten', data))).rejects.toThrow(
        `sha256 in the store ${crypto.hash('sha256', theirs, 'hex')} != rebuilt ${crypto.hash('sha256', data, 'hex')}`,
      );
    });
  });

  it('wrong credentials or a missing bucket fail at start, naming the location and what the store answered', async () => {
    const env = { ...ceph.current.env, AWS_SECRET_ACCESS_KEY: 'wrong' };
    await expect(openArchiveStore(`s3://${ceph.current.bucket}/x`, env)).rejects.toThrow(
      new RegExp(
        `s3://${ceph.current.bucket}/x/\\.timeseal-probe/.*: the probe's first create-only PUT failed: 403 SignatureDoesNotMatch`,
      ),
    );
    await expect(openArchiveStore('s3://no-such-bucket/x', ceph.current.env)).rejects.toThrow(
      /s3:\/\/no-such-bucket\/x\/.*first create-only PUT failed: 404 NoSuchBucket/,
    );
  });
});

/** A stand-in S3 server that ignores If-None-Match, as many look-alikes do: every PUT overwrites. Path-style
 * requests; PUT, GET, HEAD, DELETE of objects. `puts` counts the PUTs each key received. */
function acceptingS3(): { url: () => string; objects: Map<string, Buffer>; puts: Map<string, number> } {
  const objects = new Map<string, Buffer>();
  const puts = new Map<string, number>();
  const notFound =
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>';
  const server = http.createServer((req, res) => {
    const key = decodeURIComponent(new URL(req.url!, 'http://x').pathname.slice(1));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = objects.get(key);
      if (req.method === 'PUT') {
        objects.set(key, Buffer.concat(chunks));
        puts.set(key, (puts.get(key) ?? 0) + 1);
        res.writeHead(200, { etag: `"${crypto.hash('md5', Buffer.concat(chunks), 'hex')}"` }).end();
      } else if (req.method === 'DELETE') {
        objects.delete(key);
        res.writeHead(204).end();
      } else if (body === undefined) {
        res.writeHead(404, { 'content-type': 'application/xml' }).end(req.method === 'HEAD' ? undefined : notFound);
      } else {
        res
          .writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' })
          .end(req.method === 'HEAD' ? undefined : body);
      }
    });
  });
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: () => `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, objects, puts };
}

describe('on a store that ignores If-None-Match', () => {
  const standIn = acceptingS3();
  const env = (): NodeJS.ProcessEnv => ({
    AWS_ENDPOINT_URL: standIn.url(),
    AWS_ACCESS_KEY_ID: 'k',
    AWS_SECRET_ACCESS_KEY: 's',
  });

  it('the probe refuses it with a message that says why and names the way out', async () => {
    const err = await openArchiveStore('s3://archive/ledgers', env()).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain(`s3://archive/ledgers (${standIn.url()}) ignores create-only writes`);
    expect(err?.message).toContain(`${ACCEPT_PLAIN_PUTS}=1`);
    // The probe did PUT twice, and cleaned up after itself.
    expect([...standIn.puts.values()]).toEqual([2]);
    expect(standIn.objects.size).toBe(0);
    await expect(openArchiveStore('s3://archive/ledgers', { ...env(), [ACCEPT_PLAIN_PUTS]: 'yes' })).rejects.toThrow(
      `${ACCEPT_PLAIN_PUTS} must be 1 or 0`,
    );
    await expect(openArchiveStore('s3://archive/ledgers', { ...env(), [ACCEPT_PLAIN_PUTS]: '0' })).rejects.toThrow(
      /ignores create-only writes/,
    );
  });

  it(`with ${ACCEPT_PLAIN_PUTS}=1 it is used with plain PUTs, and a published object is still never overwritten`, async () => {
    const store: ArchiveStore = await openArchiveStore('s3://archive/ledgers', { ...env(), [ACCEPT_PLAIN_PUTS]: '1' });
    expect(await store.create('2025-11-02.json', bytes('one'))).toBe(true);
    expect(await store.create('2025-11-02.json', bytes('one'))).toBe(false);
    await expect(store.create('2025-11-02.json', bytes('two'))).rejects.toThrow(
      /published object s3:\/\/archive\/ledgers\/2025-11-02\.json differs from the rebuild/,
    );
    expect(standIn.objects.get('archive/ledgers/2025-11-02.json')?.toString()).toBe('one');
    expect(standIn.puts.get('archive/ledgers/2025-11-02.json')).toBe(1);
  });

  it(`with ${ACCEPT_PLAIN_PUTS}=1, createFromFile looks first too: absent, one PUT streamed from the file; present, compared with the file and never PUT again`, async () => {
    const store = await openArchiveStore('s3://archive/ledgers', { ...env(), [ACCEPT_PLAIN_PUTS]: '1' });
    const dir = tempProject('s3-plain-files');
    const file = (name: string, data: string): string => {
      fs.writeFileSync(path.join(dir, name), data);
      return path.join(dir, name);
    };
    const key = 'archive/ledgers/2025-11-03.json';
    expect(await store.createFromFile('2025-11-03.json', file('one', 'one day'))).toBe(true);
    expect(await store.createFromFile('2025-11-03.json', file('same', 'one day'))).toBe(false);
    await expect(store.createFromFile('2025-11-03.json', file('other', 'another day'))).rejects.toThrow(
      `sha256 in the store ${crypto.hash('sha256', 'one day', 'hex')} != rebuilt ${crypto.hash('sha256', 'another day', 'hex')}`,
    );
    expect([standIn.objects.get(key)?.toString(), standIn.puts.get(key)]).toEqual(['one day', 1]);
  });
});

describe('on a store that never answers', () => {
  const sockets = new Set<net.Socket>();
  // Accepts connections and reads requests, never answers.
  const server = http.createServer(() => undefined);
  server.on('connection', (socket) => sockets.add(socket));
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('the probe gives up after the idle timeout and says where and why, instead of waiting for ever', async () => {
    const env = {
      AWS_ENDPOINT_URL: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
      AWS_ACCESS_KEY_ID: 'k',
      AWS_SECRET_ACCESS_KEY: 's',
    };
    const err = await probeConditionalWrites(
      s3Client(env, { idleTimeoutMs: 200 }),
      parseS3Url('s3://archive/ledgers'),
    ).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(
      /^s3:\/\/archive\/ledgers\/\.timeseal-probe\/.*: the probe's first create-only PUT failed: .*(timeout|timed out)/i,
    );
    expect(sockets.size).toBeGreaterThan(0);
  });
});
