// A PostgreSQL server that cannot be reached was reported as a disk problem ("writing to its disk
// failed", "Check the database's disk."), sending the operator to the wrong machine. The storage's error keeps
// the engine's code for the log, and the engine gives it a kind (store/store.ts StorageKind); ingest words the
// answer, queue-stats and the log by the kind alone: "it cannot reach its database" for a connection that
// failed or was lost, the disk only for the disk.
import net from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { neutralError } from '../../store/postgres/errors.ts';
import { StorageUnavailableError } from '../../store/store.ts';
import { neutralError as neutralSqlite } from '../../store/sqlite/errors.ts';
import { storageFault, storageMessage, storageRefusal, type StorageFault } from '../errors.ts';
import { createSubmissionGate } from '../submission-gate.ts';
import { removeTempDirs, tempDir } from './fixture.ts';

afterAll(removeTempDirs);

const unavailable = (kind: StorageFault, code: string) =>
  new StorageUnavailableError(kind, code, `PostgreSQL: ${code}`);

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a database server out of reach', () => {
  it('is told apart from the disk by the engine, which gives its error the kind; ingest reads only the kind', () => {
    const kindOf = (err: object) => (neutralError(err) as StorageUnavailableError).kind;
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'ENOTFOUND',
      'EHOSTUNREACH',
      '08006',
      '08001',
      '57P01',
      '57P03',
      '53300',
    ]) {
      expect(kindOf({ code, message: code }), code).toBe('unreachable');
    }
    // A connection lost without a code (the pg client's own text), kept as ECONNLOST for the log.
    const lost = neutralError(new Error('Connection terminated unexpectedly')) as StorageUnavailableError;
    expect([lost.kind, lost.code]).toEqual(['unreachable', 'ECONNLOST']);
    expect(kindOf({ code: '53100', message: 'could not extend file' })).toBe('full');
    expect(kindOf({ code: '58030', message: 'could not write' })).toBe('io');
    // SQLite's faults are the disk's.
    expect(neutralSqlite(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }))).toMatchObject({
      kind: 'io',
    });
    expect(neutralSqlite(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toMatchObject({
      kind: 'full',
    });
    // Ingest words the answer by the kind alone: a socket's code under the kind 'io' is the disk's words.
    expect(storageRefusal(unavailable('io', 'ECONNREFUSED'), undefined, 'data')!.message).toMatch(
      /\(writing to its disk failed\)/,
    );
    expect(storageRefusal(unavailable('unreachable', '58030'), undefined, 'data')!.message).toMatch(
      /\(it cannot reach its database\)/,
    );
  });

  it('is worded as that in the 503, for a real refused connection and a server shutting down', async () => {
    const client = new pg.Client({
      connectionString: `postgres://timeseal@127.0.0.1:${await closedPort()}/timeseal`,
      connectionTimeoutMillis: 5000,
    });
    const refused = neutralError(
      await client.connect().then(
        () => new Error('connected'),
        (err: unknown) => err,
      ),
    );
    expect(refused).toBeInstanceOf(StorageUnavailableError);
    expect((refused as StorageUnavailableError).code).toBe('ECONNREFUSED');
    const shutdown = neutralError(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    );
    const lost = neutralError(new Error('Connection terminated unexpectedly'));
    const reported: Array<{ fault: StorageFault; err: unknown }> = [];
    const monitor = { storageFailed: (fault: StorageFault, err: unknown) => reported.push({ fault, err }) };
    for (const err of [refused, shutdown]) {
      expect(storageRefusal(err, monitor, 'submission')).toEqual({
        message:
          'The server cannot store submissions right now (it cannot reach its database); nothing was recorded. Please try again later.',
        retryAfter: '60',
      });
      expect(storageRefusal(err, monitor, 'data')!.message).toBe(
        'The server cannot store anything right now (it cannot reach its database). Please try again later.',
      );
    }
    expect(storageRefusal(lost, monitor, 'submission')!.message).toMatch(/\(it cannot reach its database\)/);
    expect(reported.map((r) => r.fault)).toEqual([
      'unreachable',
      'unreachable',
      'unreachable',
      'unreachable',
      'unreachable',
    ]);
    // A full or failing disk keeps its words.
    expect(
      storageRefusal(neutralError({ code: '53100', message: 'could not extend file' }), monitor, 'submission')!.message,
    ).toMatch(/\(its disk is full\)/);
    expect(
      storageRefusal(neutralError({ code: '58030', message: 'could not write' }), monitor, 'data')!.message,
    ).toMatch(/\(writing to its disk failed\)/);
    expect(storageFault(refused)).toBe('unreachable');
    expect(storageMessage('unreachable', 'submission', true)).toBe(
      'The server could not confirm that your submission was stored (it cannot reach its database). Please submit it again later.',
    );
  });

  it('is said so in queue-stats and the log, which sends the operator to the database server', () => {
    const lines: string[] = [];
    const log = {
      error: (_: object, msg: string) => lines.push(msg),
      warn: (_: object, msg: string) => lines.push(msg),
    };
    const gate = createSubmissionGate({
      archive: tempDir('gate-unreachable'),
      log,
      wallClock: () => new Date('2025-11-03T12:00:00.000Z'),
    });
    gate.storageFailed('unreachable', unavailable('unreachable', 'ECONNREFUSED'));
    expect(gate.condition('2025-11-03')).toEqual({
      kind: 'storage',
      fault: 'unreachable',
      code: 'ECONNREFUSED',
      since: '2025-11-03T12:00:00.000Z',
      problem:
        'The server cannot store submissions since 2025-11-03T12:00:00.000Z: it cannot reach its database. Submissions are refused until it is fixed.',
    });
    expect(lines).toEqual([
      'STORAGE FAILING: a write to the database failed (ECONNREFUSED: PostgreSQL: ECONNREFUSED); submissions and other writes are answered 503 until one succeeds. Check that the database server is running and reachable.',
    ]);
    gate.stored();
    gate.storageFailed('io', unavailable('io', '58030'));
    expect(lines.at(-1)).toMatch(/Check the database's disk\.$/);
    expect(gate.condition('2025-11-03')).toMatchObject({ problem: /: writing to its disk fails\./ });
  });
});
