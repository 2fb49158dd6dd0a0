// Form rules (contact, waitlist, the search field), with the product's messages word for word (docs/API.md "Forms").
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const CONTACT_SUBJECTS = ['general', 'enterprise', 'support', 'billing'] as const;
export const WAITLIST_NAME_MAX = 255;

export interface ContactInput {
  name: string;
  email: string;
  subject: string;
  message: string;
}
export type Errors<T> = Partial<Record<keyof T, string>>;

export function validateContact(v: ContactInput): Errors<ContactInput> {
  const errors: Errors<ContactInput> = {};
  if (v.name.trim().length < 2) errors.name = 'Name must be at least 2 characters';
  if (!EMAIL_PATTERN.test(v.email.trim())) errors.email = 'Please enter a valid email address';
  if (!(CONTACT_SUBJECTS as readonly string[]).includes(v.subject)) errors.subject = 'Please select a subject';
  if (v.message.trim().length < 10) errors.message = 'Message must be at least 10 characters';
  return errors;
}

export interface WaitlistInput {
  name: string;
  email: string;
  message: string;
}

export function validateWaitlist(v: WaitlistInput): Errors<WaitlistInput> {
  const errors: Errors<WaitlistInput> = {};
  if (!v.name.trim()) errors.name = 'Name is required';
  else if (v.name.length > WAITLIST_NAME_MAX) errors.name = `Name must be at most ${WAITLIST_NAME_MAX} characters`;
  if (!v.email.trim()) errors.email = 'Email is required';
  else if (!EMAIL_PATTERN.test(v.email.trim())) errors.email = 'Please enter a valid email address';
  if (!v.message.trim()) errors.message = 'Message is required';
  return errors;
}

/** A hash as people paste it (surrounding spaces, a line break, upper case) in the form the ledgers use:
 *  whitespace removed, lower case. The search's 64-character rule applies to the result. */
export function normalizeHashInput(value: string): string {
  return value.replace(/\s+/g, '').toLowerCase();
}
