// The waitlist and contact forms: the product's validation texts (docs/API.md "Forms"), storage, and the e-mail to the
// operator, both through a real SMTP server on loopback (smtp-server) and into the outbox folder.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailer } from '../mail.ts';
import { CONTACT_PER_HOUR, TEXTS } from '../routes/forms.ts';
import { makeFixture, NOW, removeTempDirs, type Fixture } from './fixture.ts';

const valid = {
  name: 'Ada Lovelace',
  email: 'ada@example.org',
  subject: 'enterprise',
  message: 'We would like an on-premise archive.',
};

interface Received {
  from: string;
  to: string[];
  data: string;
}

let smtp: SMTPServer;
let smtpPort: number;
const received: Received[] = [];
let f: Fixture;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let data = '';
      stream.on('data', (d: Buffer) => (data += d.toString()));
      stream.on('end', () => {
        received.push({
          from: String(session.envelope.mailFrom && session.envelope.mailFrom.address),
          to: session.envelope.rcptTo.map((r) => r.address),
          data,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  f = await makeFixture({
    env: {
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      MAIL_FROM: 'Timeseal <noreply@timeseal.test>',
      CONTACT_TO: 'operator@timeseal.test',
    },
  });
  // The fixture's mailer must use the configured SMTP server.
  expect(f.ingest.smtpUrl).toBe(`smtp://127.0.0.1:${smtpPort}`);
});
afterAll(async () => {
  await f.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  removeTempDirs();
});

const post = (url: string, payload: unknown) => f.app.inject({ method: 'POST', url, payload: payload as object });

describe('POST /api/professional-waitlist.php', () => {
  it('joins once; a repeated e-mail (any case) answers alreadyExists', async () => {
    const first = await post('/api/professional-waitlist.php', {
      name: 'Grace',
      email: 'grace@example.org',
      message: 'Team plan please',
    });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      success: true,
      alreadyExists: false,
      message: "We'll notify you when Professional tier launches.",
    });
    const again = await post('/api/professional-waitlist.php', {
      name: 'Grace H.',
      email: ' GRACE@example.org ',
      message: 'again',
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ success: true, alreadyExists: true });
    expect(f.rowCounts().professional_waitlist).toBe(1);
  });

  it('validates name, e-mail and message with clear texts, writing nothing', async () => {
    const before = f.rowCounts();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'A', email: 'not-an-email', message: 'hi' }, 'Please enter a valid email address'],
      [{ name: 'A', email: 'a@b', message: 'hi' }, 'Please enter a valid email address'],
      [{ name: 'x'.repeat(256), email: 'a@example.org', message: 'hi' }, 'Name must be at most 255 characters'],
      [{ name: '   ', email: 'a@example.org', message: 'hi' }, 'Name is required'],
      [{ name: 'A', email: 'a@example.org', message: '' }, 'Message is required'],
      [{ name: 'A', email: 'a@example.org' }, 'message: is required'],
      [{ name: 'A', email: 'a@example.org', message: 'hi', admin: true }, 'body: unknown field "admin"'],
      [{ name: ['A'], email: 'a@example.org', message: 'hi' }, 'name: must be of type string'],
      [{ name: 'A\nBcc: x@y.z', email: 'a@example.org', message: 'hi' }, 'name: has the wrong format'],
    ];
    for (const [body, error] of cases) {
      const res = await post('/api/professional-waitlist.php', body);
      expect(res.statusCode, error).toBe(400);
      expect(res.json()).toEqual({ error, message: error });
    }
    expect(f.rowCounts()).toEqual(before);
  });
});

describe('POST /api/contact', () => {
  it('stores the message and e-mails it to the operator over SMTP', async () => {
    const res = await post('/api/contact', valid);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      success: true,
      message: "Message sent successfully! We'll get back to you as soon as possible.",
    });
    const row = f.db.prepare('SELECT name, email, subject, message, delivery FROM contact_messages').get() as Record<
      string,
      string
    >;
    expect(row).toMatchObject({ name: valid.name, email: valid.email, subject: 'enterprise', message: valid.message });
    expect(row.delivery).toMatch(/^smtp:/);
    expect(received).toHaveLength(1);
    expect(received[0]!.to).toEqual(['operator@timeseal.test']);
    expect(received[0]!.from).toBe('noreply@timeseal.test');
    expect(received[0]!.data).toContain(valid.message);
    expect(received[0]!.data).toMatch(/^Reply-To: ada@example.org/m);
    expect(received[0]!.data).toMatch(/^Subject: \[Timeseal contact\] Enterprise: message #1 from Ada Lovelace/m);
  });

  it('gives the spec texts for each invalid field and writes nothing', async () => {
    const before = f.rowCounts();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...valid, name: 'A' }, 'Name must be at least 2 characters'],
      [{ ...valid, name: '  A ' }, 'Name must be at least 2 characters'],
      [{ ...valid, email: 'ada@' }, 'Please enter a valid email address'],
      [{ ...valid, subject: '' }, 'Please select a subject'],
      [{ ...valid, subject: 'sales' }, 'Please select a subject'],
      [{ ...valid, subject: '__proto__' }, 'Please select a subject'],
      [{ ...valid, message: 'too short' }, 'Message must be at least 10 characters'],
      [{ ...valid, message: 'x'.repeat(5001) }, 'message: must be at most 5000 characters'],
    ];
    for (const [body, error] of cases) {
      const res = await post('/api/contact', body);
      expect(res.statusCode, error).toBe(400);
      expect(res.json()).toEqual({ error, message: error });
    }
    expect(f.rowCounts()).toEqual(before);
    expect(received).toHaveLength(1);
  });

  it(`accepts ${CONTACT_PER_HOUR} messages an hour from one address, even sent at once; the others get 429 and are neither stored nor mailed`, async () => {
    let now = Date.parse(NOW);
    const g = await makeFixture({ publish: [], clock: () => new Date(now) });
    try {
      const from = (ip: string) =>
        g.app.inject({ method: 'POST', url: '/api/contact', payload: valid, remoteAddress: ip });
      const mails = () =>
        fs.readdirSync(path.join(g.dir, 'data/outbox')).filter((name) => name.endsWith('.eml')).length;
      const burst = await Promise.all(Array.from({ length: 2 * CONTACT_PER_HOUR }, () => from('198.51.100.20')));
      expect(burst.map((r) => r.statusCode).sort()).toEqual([
        ...Array(CONTACT_PER_HOUR).fill(201),
        ...Array(CONTACT_PER_HOUR).fill(429),
      ]);
      expect(burst.find((r) => r.statusCode === 429)!.json()).toEqual({
        error: TEXTS.contactTooMany,
        message: TEXTS.contactTooMany,
      });
      expect((g.db.prepare('SELECT COUNT(*) AS n FROM contact_messages').get() as { n: number }).n).toBe(
        CONTACT_PER_HOUR,
      );
      expect(mails()).toBe(CONTACT_PER_HOUR);
      // Another address is not affected; the first one may write again an hour later.
      expect((await from('198.51.100.21')).statusCode).toBe(201);
      expect((await from('198.51.100.20')).statusCode).toBe(429);
      now += 60 * 60_000;
      expect((await from('198.51.100.20')).statusCode).toBe(201);
      expect(mails()).toBe(CONTACT_PER_HOUR + 2);
    } finally {
      await g.close();
    }
  });

  it('without SMTP the e-mail is written to the outbox folder', async () => {
    const lines: string[] = [];
    const mailer = createMailer(
      { smtpUrl: undefined, mailFrom: 'Timeseal <noreply@timeseal.test>', outbox: `${f.dir}/outbox-test` },
      { info: (o) => lines.push(JSON.stringify(o)) },
    );
    const receipt = await mailer.send({
      to: 'operator@timeseal.test',
      subject: 'Hello',
      text: 'Body text',
      replyTo: 'ada@example.org',
    });
    expect(receipt.via).toBe('outbox');
    const file = (receipt as { path: string }).path;
    expect(file.endsWith('.eml')).toBe(true);
    const eml = fs.readFileSync(file, 'utf8');
    expect(eml).toMatch(/^To: operator@timeseal.test$/m);
    expect(eml).toContain('Body text');
    expect(lines.join()).toContain(file);
  });
});
