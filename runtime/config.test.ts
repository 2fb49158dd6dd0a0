// Configuration from the environment: the public base URL (links) and the log origin (fixed per archive).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadDotEnv } from './config.ts';

describe('.env', () => {
  it('takes a comment after a value as a comment, quotes and export prefixes as written, and never overrides a real variable', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeseal-dotenv-'));
    try {
      const file = path.join(dir, '.env');
      fs.writeFileSync(
        file,
        'PORT=8080 # the local port\nexport TIMESEAL_ARCHIVE="/srv/a b"\n# LOG_LEVEL=debug\nHOST=127.0.0.2\n',
      );
      const env: NodeJS.ProcessEnv = { HOST: '0.0.0.0' };
      loadDotEnv(file, env);
      expect(env).toEqual({ PORT: '8080', TIMESEAL_ARCHIVE: '/srv/a b', HOST: '0.0.0.0' });
      expect(loadConfig(env)).toMatchObject({ port: 8080 });
      loadDotEnv(path.join(dir, 'missing.env'), env);
      expect(Object.keys(env)).toHaveLength(3);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loadConfig', () => {
  it('without TIMESEAL_ORIGIN, links follow PORT while the log origin stays localhost:8080', () => {
    expect(loadConfig({ PORT: '8765' })).toMatchObject({
      port: 8765,
      origin: 'http://localhost:8765',
      logOrigin: 'localhost:8080',
    });
    expect(loadConfig({})).toMatchObject({ port: 8080, origin: 'http://localhost:8080', logOrigin: 'localhost:8080' });
    expect(loadConfig({ PORT: '0' })).toMatchObject({
      port: 0,
      origin: 'http://localhost:8080',
      logOrigin: 'localhost:8080',
    });
  });

  it('TIMESEAL_ORIGIN sets both, whatever the port', () => {
    expect(loadConfig({ PORT: '8765', TIMESEAL_ORIGIN: 'https://timeseal.example/' })).toMatchObject({
      origin: 'https://timeseal.example/',
      logOrigin: 'timeseal.example',
    });
  });

  it('refuses a port that is not one', () => {
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT/);
  });

  it('an s3:// archive is published from a working copy: TIMESEAL_ARCHIVE_CACHE, else archive-cache beside the database', () => {
    expect(loadConfig({ TIMESEAL_ARCHIVE: 's3://bucket/ledgers' })).toMatchObject({
      archive: 'data/archive-cache',
      archiveStore: 's3://bucket/ledgers',
    });
    expect(
      loadConfig({ TIMESEAL_ARCHIVE: 's3://bucket', TIMESEAL_DB: '/srv/ts/db.sqlite', TIMESEAL_ARCHIVE_CACHE: '' }),
    ).toMatchObject({ archive: '/srv/ts/archive-cache', archiveStore: 's3://bucket' });
    expect(loadConfig({ TIMESEAL_ARCHIVE: 's3://bucket', TIMESEAL_ARCHIVE_CACHE: '/var/cache/ts' }).archive).toBe(
      '/var/cache/ts',
    );
    expect(() => loadConfig({ TIMESEAL_ARCHIVE: 's3://bucket', TIMESEAL_ARCHIVE_CACHE: 's3://other' })).toThrow(
      /TIMESEAL_ARCHIVE_CACHE must be a folder/,
    );
    const folder = loadConfig({ TIMESEAL_ARCHIVE: 'archive/s3' });
    expect([folder.archive, folder.archiveStore]).toEqual(['archive/s3', undefined]);
  });

  it('TIMESEAL_DATABASE_POOL: 10 by default (unset or empty), a whole number from 1 to 1000, anything else refused with its name', () => {
    expect(loadConfig({}).databasePool).toBe(10);
    expect(loadConfig({ TIMESEAL_DATABASE_POOL: '' }).databasePool).toBe(10);
    expect(loadConfig({ TIMESEAL_DATABASE_POOL: '3' }).databasePool).toBe(3);
    for (const bad of ['0', '-1', '2.5', 'ten', '1001', '1e2'])
      expect(() => loadConfig({ TIMESEAL_DATABASE_POOL: bad }), bad).toThrow(/TIMESEAL_DATABASE_POOL/);
  });

  it('TIMESEAL_TSA_KEY_FILE and TIMESEAL_TSA_CHAIN_FILE: both or neither (an empty value is unset)', () => {
    const config = loadConfig({});
    expect(config.tsaKeyFile).toBeUndefined();
    expect(config.tsaChainFile).toBeUndefined();
    expect(
      loadConfig({
        TIMESEAL_TSA_KEY_FILE: '/etc/timeseal/tsa.key',
        TIMESEAL_TSA_CHAIN_FILE: '/etc/timeseal/tsa-chain.pem',
      }),
    ).toMatchObject({
      tsaKeyFile: '/etc/timeseal/tsa.key',
      tsaChainFile: '/etc/timeseal/tsa-chain.pem',
    });
    expect(() => loadConfig({ TIMESEAL_TSA_KEY_FILE: 'tsa.key' })).toThrow(
      /TIMESEAL_TSA_KEY_FILE and TIMESEAL_TSA_CHAIN_FILE go together .*TIMESEAL_TSA_CHAIN_FILE is not set/,
    );
    expect(() => loadConfig({ TIMESEAL_TSA_CHAIN_FILE: 'chain.pem', TIMESEAL_TSA_KEY_FILE: '' })).toThrow(
      /TIMESEAL_TSA_KEY_FILE is not set/,
    );
  });
});
