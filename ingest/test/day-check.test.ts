// The server's check of a published day (ingest/archive-view.ts verifyDay, behind /api/verify-quantum.php,
// /api/ledgers.php and the certificates) holds neither the ledger nor the event loop: a large day's ledger (a
// sparse file of 256 MiB in place of the fixture's, its header and then zeros, which the check reads and hashes
// whole, as it would the 9.7 GB of a 100,000,000-hash day) is read in pieces, and requests that come while it is
// checked are answered between them. A second request for the day during the check waits for the same check
// (the ledger is open once), and a later one is answered from its result.
// On the code that checked synchronously, the GET /robots.txt in flight waited for the whole check: none was
// answered during it. Without the shared check, the ledger was open twice at once.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ledgerPath } from '../../core/archive.ts';
import { DAY, makeFixture, removeTempDirs, type Fixture } from './fixture.ts';

const LEDGER_BYTES = 256 << 20;
/** The answers to robots.txt before the second request for the day. */
const ASK_SECOND_AFTER = 10;

let f: Fixture;
let ledger: string;
let url: string;
beforeAll(async () => {
  f = await makeFixture();
  ledger = path.join(f.config.archive, ledgerPath(DAY));
  // Over a socket, as clients ask: every request is a turn of the event loop of its own.
  url = await f.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

const get = async (rel: string): Promise<{ status: number; body: unknown }> => {
  const res = await fetch(`${url}${rel}`);
  return {
    status: res.status,
    body: res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : await res.text(),
  };
};
const verifyQuantum = () => get(`/api/verify-quantum.php?date=${DAY}`);
/** How many of this process's file descriptors are open on the day's ledger (Linux: /proc/self/fd). */
const openedLedgers = (): number => {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`) === ledger) n++;
    } catch {
      // closed meanwhile (the descriptor of the listing itself)
    }
  }
  return n;
};
const cpuMs = (since: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

it("a large day's check leaves the server answering, and a second request for the day during it shares it", async () => {
  const original = fs.readFileSync(ledger);
  // In place of the day's ledger (a new size and time: the day is checked again), its header and then zeros,
  // a sparse file: the first entry does not parse, and the rest is only read and hashed.
  const open = '"entries":[\n';
  fs.rmSync(ledger);
  fs.writeFileSync(ledger, original.subarray(0, original.indexOf(open) + open.length));
  fs.truncateSync(ledger, LEDGER_BYTES);
  const cpu = process.cpuUsage();
  const answered: string[] = [];
  const check = (name: string) =>
    verifyQuantum().then((res) => {
      answered.push(name);
      return res;
    });
  const first = check('first');
  let second: ReturnType<typeof check> | undefined;
  // GET /robots.txt, one after another until both checks are answered; the second check is asked after the
  // tenth answer to robots.txt (or the first's answer). Synchronously, the robots.txt in flight waited for the
  // whole check.
  let beforeFirst = 0;
  let mostOpen = 0;
  while (answered.length < 2) {
    expect((await get('/robots.txt')).status).toBe(200);
    if (answered.length === 0) beforeFirst++;
    mostOpen = Math.max(mostOpen, openedLedgers());
    if (beforeFirst === ASK_SECOND_AFTER) second ??= check('second');
    else if (answered.length > 0) second ??= check('second');
  }
  const checkMs = cpuMs(cpu);
  // The ledger does not parse, so nothing of the day verifies; the check still read and hashed all of it.
  for (const res of [await first, await second!]) {
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      date: DAY,
      quantum_shield: false,
      dual_signature: false,
      ecdsa_p256: false,
      ml_dsa_65: false,
    });
  }
  // The check reads 256 pieces of 1 MiB, and robots.txt is answered between them.
  expect(beforeFirst, 'robots.txt answered during the check').toBeGreaterThanOrEqual(20);
  // The second request waited for the first one's check: the ledger was open once at a time. A check of its
  // own would have read it beside the first (2 here when the second request waits for no check).
  expect(mostOpen, 'the most descriptors open on the ledger at once').toBe(1);
  // Checked once: a later request is answered from the result.
  const later = process.cpuUsage();
  expect((await verifyQuantum()).body).toMatchObject({ dual_signature: false });
  expect(cpuMs(later), `a request for the checked day; the check took ${checkMs} ms`).toBeLessThan(checkMs / 10);
  // The day's own ledger back (a new time again): checked again, and it verifies.
  fs.writeFileSync(ledger, original);
  expect((await verifyQuantum()).body).toMatchObject({ dual_signature: true, ecdsa_p256: true, ml_dsa_65: true });
});
