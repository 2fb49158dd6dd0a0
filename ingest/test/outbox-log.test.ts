// Without SMTP_URL, account e-mails go to the outbox folder and the log names the file,
// never the link in it (a live password-reset or verification credential).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { makeFixture, removeTempDirs, startServer, type Fixture } from './fixture.ts';

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
});
afterAll(async () => {
  await f.close();
  removeTempDirs();
});

test(
  'sign-up and password reset: the log has the outbox path, the outbox file has the link, the log does not',
  { timeout: 60_000 },
  async () => {
    const server = await startServer(f.dir, f.env);
    const outbox = f.env.TIMESEAL_OUTBOX!;
    try {
      const post = (url: string, body: object) =>
        fetch(`${server.url}${url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const signup = await post('/api/auth/signup', {
        username: 'outboxuser',
        email: 'outbox@example.com',
        password: 'a long enough password 1',
        agreeTerms: true,
      });
      expect(signup.status).toBe(201);
      expect((await post('/api/auth/forgot-password', { email: 'outbox@example.com' })).status).toBe(200);
      for (
        let waited = 0;
        (fs.existsSync(outbox) ? fs.readdirSync(outbox).length : 0) < 2 && waited < 10_000;
        waited += 100
      )
        await new Promise((r) => setTimeout(r, 100));
    } finally {
      server.child.kill('SIGTERM');
    }
    await server.exited;
    const files = fs.readdirSync(outbox).map((n) => path.join(outbox, n));
    const contents = files.map((file) => fs.readFileSync(file, 'utf8')).join('\n');
    expect(contents).toMatch(/verify-email\?token=/);
    expect(contents).toMatch(/reset-password\?token=/);
    const log = server.stderr();
    for (const file of files) expect(log).toContain(path.basename(file));
    expect(log).not.toMatch(/token=/);
  },
);
