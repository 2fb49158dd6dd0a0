// Outgoing e-mail: nodemailer over SMTP when SMTP_URL is set; otherwise each message is
// written as an RFC 5322 .eml file into the outbox folder and its path logged, so a single machine needs no
// mail server. Used by the contact form and by the accounts (verification and reset e-mails).
//
// Contract of `Mailer.send(mail)`: resolves once the message is accepted by the SMTP server or written to
// the outbox (fsynced), with where it went; rejects when neither happened. Header values are encoded by
// nodemailer; callers pass plain text and never build headers themselves. nodemailer is loaded with the first
// message (~0.15 s of CPU): a server starts without it, and most never send one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import type { IngestConfig } from './config.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  replyTo?: string;
}

export type MailReceipt = { via: 'smtp'; messageId: string } | { via: 'outbox'; path: string };

export interface Mailer {
  send(mail: OutgoingMail): Promise<MailReceipt>;
  close(): void;
}

export interface MailLog {
  info(obj: object, msg: string): void;
}

/** A transport made on first use; close() closes it only if it was made. */
function lazyTransport(options: Parameters<typeof import('nodemailer').createTransport>[0]): {
  get(): Promise<Transporter>;
  close(): void;
} {
  let transport: Promise<Transporter> | undefined;
  return {
    get: () => (transport ??= import('nodemailer').then((m) => m.default.createTransport(options))),
    close: () =>
      void transport?.then(
        (t) => t.close(),
        () => undefined,
      ),
  };
}

export function createMailer(config: Pick<IngestConfig, 'smtpUrl' | 'mailFrom' | 'outbox'>, log: MailLog): Mailer {
  if (config.smtpUrl !== undefined) {
    const transport = lazyTransport(config.smtpUrl);
    return {
      async send(mail) {
        const info = await (await transport.get()).sendMail({ from: config.mailFrom, ...mail });
        log.info({ messageId: info.messageId }, 'e-mail sent');
        return { via: 'smtp', messageId: String(info.messageId) };
      },
      close: () => transport.close(),
    };
  }
  const transport = lazyTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(mail) {
      const info = await (await transport.get()).sendMail({ from: config.mailFrom, ...mail });
      fs.mkdirSync(config.outbox, { recursive: true });
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const file = path.resolve(config.outbox, `${stamp}-${crypto.randomBytes(4).toString('hex')}.eml`);
      const fd = fs.openSync(file, 'wx', 0o600);
      try {
        fs.writeFileSync(fd, info.message as Buffer);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      log.info({ path: file }, 'e-mail written to the outbox (no SMTP_URL configured)');
      return { via: 'outbox', path: file };
    },
    close: () => transport.close(),
  };
}
