// A look-up on an archive whose index a build has not completed (an archive of the previous release before its
// first build with this one, or a crash right after a commit point) answers 503 with a reason, never 404
// "not in any published ledger".
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixture, removeTempDirs, sha256, type Fixture } from './fixture.ts';

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

describe('an incomplete index', () => {
  it('answers 503 with a reason on proofs, then the real answer once the index is back', async () => {
    const hash = sha256('first');
    const head = path.join(f.config.archive, 'index/segments.json');
    expect((await f.app.inject(`/api/proof/${hash}`)).statusCode).toBe(200);
    const saved = fs.readFileSync(head);
    fs.rmSync(head);
    try {
      for (const url of [`/api/proof/${hash}`, `/api/proof/${hash}.ots`, `/api/proof/${sha256('never sent')}`]) {
        const res = await f.app.inject(url);
        expect(res.statusCode, url).toBe(503);
        expect(res.headers['retry-after']).toBe('300');
        expect(res.json()).toEqual({
          error: "The archive's index is being completed; please try again in a few minutes.",
          message: "The archive's index is being completed; please try again in a few minutes.",
        });
      }
    } finally {
      fs.writeFileSync(head, saved);
    }
    expect((await f.app.inject(`/api/proof/${hash}`)).statusCode).toBe(200);
    expect((await f.app.inject(`/api/proof/${sha256('never sent')}`)).statusCode).toBe(404);
  });
});
