// The account e-mails (ingest/accounts/README.md): verification, password reset and "you already have an account", each in plain text and HTML, with
// links to the site (`${TIMESEAL_ORIGIN}/verify-email?token=…`, `/reset-password?token=…`). The username is
// the only user-chosen text in them; it is HTML-escaped in the HTML part.
import type { FastifyRequest } from 'fastify';
import { escapeHtml } from '../routes/certificate.ts';
import type { OutgoingMail } from '../mail.ts';
import type { AccountServices } from './services.ts';

/** mail.ts passes every field to nodemailer; `html` adds the HTML alternative. */
export type AccountMail = OutgoingMail & { html: string };

export const VERIFY_HOURS = 24;
export const RESET_MINUTES = 60;
export const VERIFY_MS = VERIFY_HOURS * 3_600_000;
export const RESET_MS = RESET_MINUTES * 60_000;

function html(title: string, paragraphs: string[], link: string, button: string): string {
  return `<!doctype html><html lang="en"><body style="font-family:system-ui,sans-serif;color:#0f172a;line-height:1.5;max-width:36rem;margin:auto;padding:1.5rem">
<h1 style="font-size:1.3rem">${escapeHtml(title)}</h1>
${paragraphs.map((p) => `<p>${p}</p>`).join('\n')}
<p><a href="${escapeHtml(link)}" style="display:inline-block;background:#047857;color:#fff;padding:.6rem 1rem;border-radius:.5rem;text-decoration:none;font-weight:600">${escapeHtml(button)}</a></p>
<p style="font-size:.85rem;color:#475569">Or paste this address into your browser:<br>${escapeHtml(link)}</p>
</body></html>`;
}

export function verificationMail(origin: string, to: string, username: string, token: string): AccountMail {
  const link = `${origin}/verify-email?token=${token}`;
  return {
    to,
    subject: 'Verify your Timeseal email address',
    text: `Hello ${username},\n\nPlease verify your email address for your Timeseal account by opening this link:\n\n${link}\n\nThe link is valid for ${VERIFY_HOURS} hours and can be used once. A verified address is needed to subscribe to a paid plan.\n\nIf you did not create a Timeseal account, ignore this message.\n`,
    html: html(
      'Verify your email address',
      [
        `Hello ${escapeHtml(username)},`,
        `Please verify your email address for your Timeseal account. The link is valid for ${VERIFY_HOURS} hours and can be used once. A verified address is needed to subscribe to a paid plan.`,
        'If you did not create a Timeseal account, ignore this message.',
      ],
      link,
      'Verify email',
    ),
  };
}

export function resetMail(origin: string, to: string, username: string, token: string): AccountMail {
  const link = `${origin}/reset-password?token=${token}`;
  return {
    to,
    subject: 'Reset your Timeseal password',
    text: `Hello ${username},\n\nSomeone (hopefully you) asked to reset the password of your Timeseal account. Open this link to choose a new password:\n\n${link}\n\nThe link expires in 1 hour and can be used once. If you did not ask for this, ignore this message: your password stays as it is.\n`,
    html: html(
      'Reset your password',
      [
        `Hello ${escapeHtml(username)},`,
        'Someone (hopefully you) asked to reset the password of your Timeseal account. The link expires in 1 hour and can be used once.',
        'If you did not ask for this, ignore this message: your password stays as it is.',
      ],
      link,
      'Reset password',
    ),
  };
}

/**
 * To the address of an existing account when someone signs up with it (the sign-up is answered as a new one, so
 * the answer does not tell which addresses have an account; open-routes.ts). Our text: the spec gives none.
 */
export function existingAccountMail(origin: string, to: string, username: string): AccountMail {
  const link = `${origin}/login`;
  return {
    to,
    subject: 'You already have a Timeseal account',
    text: `Hello ${username},\n\nSomeone (hopefully you) tried to create a Timeseal account with this email address, which already has one: ${username}. No new account was created.\n\nLog in here:\n\n${link}\n\nIf you forgot your password, reset it at ${origin}/forgot-password. If this was not you, ignore this message: your account is unchanged.\n`,
    html: html(
      'You already have an account',
      [
        `Hello ${escapeHtml(username)},`,
        `Someone (hopefully you) tried to create a Timeseal account with this email address, which already has one: ${escapeHtml(username)}. No new account was created.`,
        `If you forgot your password, reset it at <a href="${escapeHtml(`${origin}/forgot-password`)}">${escapeHtml(`${origin}/forgot-password`)}</a>. If this was not you, ignore this message: your account is unchanged.`,
      ],
      link,
      'Log in',
    ),
  };
}

/** Sends an account e-mail and, when it went to the outbox (no SMTP_URL: `make start`), logs the file's path;
 * never its link, which is a live credential (a password reset or an e-mail verification). */
export async function sendAccountMail(s: AccountServices, request: FastifyRequest, mail: AccountMail): Promise<void> {
  const receipt = await s.mailer.send(mail);
  if (receipt.via === 'outbox')
    request.log.info({ path: receipt.path }, `account e-mail for the outbox: ${mail.subject}`);
}

/** Fire and forget: the answer never waits for (or reveals) the mail server. Failures are logged. */
export function sendInBackground(s: AccountServices, request: FastifyRequest, mail: AccountMail): void {
  sendAccountMail(s, request, mail).catch((err: unknown) => request.log.error({ err }, 'account e-mail failed'));
}
