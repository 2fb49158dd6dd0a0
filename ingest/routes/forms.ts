// The two forms that write to the database: POST /api/professional-waitlist.php {name, email, message} and
// POST /api/contact {name, email, subject, message} (the Pricing and Contact pages; their
// validation and texts in docs/API.md). The schema checks types and hard size limits; the spec's own texts come from the checks below, so
// the site can show the server's message as it is. Both are throttled per client address (throttle.ts):
// 5 contact messages and 10 waitlist requests an hour, then 429.
import { ClientError } from '../errors.ts';
import { clientKey } from '../limits.ts';
import { MULTI_LINE, noQuery, plainErrors, SINGLE_LINE, type TypedRoutes } from '../schemas.ts';
import type { Services } from '../services.ts';
import { Throttle } from '../throttle.ts';

/** The forms' limits and texts (docs/API.md). */
export const TEXTS = {
  invalidEmail: 'Please enter a valid email address',
  waitlistJoined: "We'll notify you when Professional tier launches.",
  waitlistAlready: "You're already on the waitlist. We'll notify you when Professional tier launches.",
  nameRequired: 'Name is required',
  nameTooLong: 'Name must be at most 255 characters',
  messageRequired: 'Message is required',
  contactName: 'Name must be at least 2 characters',
  contactSubject: 'Please select a subject',
  contactMessage: 'Message must be at least 10 characters',
  contactSent: "Message sent successfully! We'll get back to you as soon as possible.",
  // Our text (the spec has none): the site shows its own failure toast for any error.
  contactTooMany: 'Too many messages from this address. Please try again in an hour.',
  // Our text (the spec has none): the site shows "Error" with it.
  waitlistTooMany: 'Too many waitlist requests from this address. Please try again in an hour.',
} as const;

/** Contact messages accepted per client address an hour: each one is e-mailed to the operator. */
export const CONTACT_PER_HOUR = 5;

/**
 * Waitlist requests accepted per client address an hour (a probe sent 300 entries of 5 KB came from one address
 * in 0.57 s). A person joins once; a few more leave room for an office behind one address.
 */
export const WAITLIST_PER_HOUR = 10;

export const CONTACT_SUBJECTS: Record<string, string> = {
  general: 'General inquiry',
  enterprise: 'Enterprise',
  support: 'Support',
  billing: 'Billing',
};

/** Longest text accepted in a message field (our limit; the body limit is 16 KB anyway). */
export const MESSAGE_MAX = 5000;
const EMAIL_MAX = 254;

/** A practical address check: local@domain.tld, no spaces, brackets, quotes or control characters. */
export function isEmail(text: string): boolean {
  return (
    text.length <= EMAIL_MAX &&
    /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"_]+\.[A-Za-z]{2,63}$/.test(text) &&
    !text.includes('..')
  );
}

const textField = (maxLength: number, pattern: string) => ({ type: 'string', maxLength, pattern }) as const;

export const formRoutes: TypedRoutes<Services> = async (app, s) => {
  const contactLimit = new Throttle(s.store, 'contact', CONTACT_PER_HOUR, 60 * 60_000);
  const waitlistLimit = new Throttle(s.store, 'waitlist', WAITLIST_PER_HOUR, 60 * 60_000);
  app.post(
    '/api/professional-waitlist.php',
    {
      schema: {
        querystring: noQuery,
        body: {
          type: 'object',
          properties: {
            name: textField(1024, SINGLE_LINE),
            email: textField(1024, SINGLE_LINE),
            message: textField(MESSAGE_MAX, MULTI_LINE),
          },
          required: ['name', 'email', 'message'],
          additionalProperties: false,
        },
        response: {
          '2xx': {
            type: 'object',
            properties: {
              success: { type: 'boolean' },
              alreadyExists: { type: 'boolean' },
              message: { type: 'string' },
            },
            required: ['success', 'alreadyExists', 'message'],
          },
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const name = request.body.name.trim();
      const email = request.body.email.trim();
      const message = request.body.message.trim();
      if (name === '') throw new ClientError(400, TEXTS.nameRequired);
      if (name.length > 255) throw new ClientError(400, TEXTS.nameTooLong);
      if (!isEmail(email)) throw new ClientError(400, TEXTS.invalidEmail);
      if (message === '') throw new ClientError(400, TEXTS.messageRequired);
      // Counted per address (throttle.ts, table auth_throttle), a repeated e-mail address too: at most
      // WAITLIST_PER_HOUR rows an hour from one address.
      const at = s.clock();
      if (!(await waitlistLimit.attempt([`ip:${clientKey(request.ip)}`], at))) {
        return reply.code(429).header('Retry-After', '3600').send({ error: TEXTS.waitlistTooMany });
      }
      const inserted = await s.store.forms.joinWaitlist({ name, email: email.toLowerCase(), message, createdAt: at });
      if (!inserted)
        return reply.code(200).send({ success: true, alreadyExists: true, message: TEXTS.waitlistAlready });
      return reply.code(201).send({ success: true, alreadyExists: false, message: TEXTS.waitlistJoined });
    },
  );

  app.post(
    '/api/contact',
    {
      schema: {
        querystring: noQuery,
        body: {
          type: 'object',
          properties: {
            name: textField(255, SINGLE_LINE),
            email: textField(1024, SINGLE_LINE),
            subject: textField(64, SINGLE_LINE),
            message: textField(MESSAGE_MAX, MULTI_LINE),
          },
          required: ['name', 'email', 'subject', 'message'],
          additionalProperties: false,
        },
        response: {
          201: {
            type: 'object',
            properties: { success: { type: 'boolean', const: true }, message: { type: 'string' } },
            required: ['success', 'message'],
          },
          ...plainErrors,
        },
      },
    },
    async (request, reply) => {
      const name = request.body.name.trim();
      const email = request.body.email.trim();
      const subject = request.body.subject;
      const message = request.body.message.trim();
      if (name.length < 2) throw new ClientError(400, TEXTS.contactName);
      if (!isEmail(email)) throw new ClientError(400, TEXTS.invalidEmail);
      if (!Object.hasOwn(CONTACT_SUBJECTS, subject)) throw new ClientError(400, TEXTS.contactSubject);
      if (message.length < 10) throw new ClientError(400, TEXTS.contactMessage);
      const at = s.clock();
      if (!(await contactLimit.attempt([`ip:${clientKey(request.ip)}`], at)))
        throw new ClientError(429, TEXTS.contactTooMany);
      const now = at.toISOString();
      const id = await s.store.forms.addContact({ name, email, subject, message, createdAt: at });
      let delivery: string;
      try {
        const receipt = await s.mailer.send({
          to: s.ingest.contactTo,
          replyTo: email,
          subject: `[Timeseal contact] ${CONTACT_SUBJECTS[subject]}: message #${id} from ${name}`,
          text: `From: ${name} <${email}>\nSubject: ${CONTACT_SUBJECTS[subject]}\nReceived: ${now}\nMessage #${id}\n\n${message}\n`,
        });
        delivery = receipt.via === 'smtp' ? `smtp:${receipt.messageId}` : `outbox:${receipt.path}`;
      } catch (err) {
        request.log.error(
          { err: (err as Error).message, contactMessage: Number(id) },
          'contact e-mail not sent; the message is stored',
        );
        delivery = 'failed';
      }
      await s.store.forms.setContactDelivery(id, delivery);
      return reply.code(201).send({ success: true, message: TEXTS.contactSent });
    },
  );
};
