// What the account routes receive: the service's own (store, clock, mailer, …) with the accounts settings, and
// the throttles of sign-up, login, password reset and the account e-mails (ingest/throttle.ts; their numbers
// are in ingest/accounts/README.md).
import type { Store } from '../../store/store.ts';
import type { Services } from '../services.ts';
import { LoginThrottle, Throttle } from '../throttle.ts';
import type { AccountsConfig } from './config.ts';

export type AccountServices = Services & { accounts: AccountsConfig };

/** Sign-ups accepted per client address an hour (each sends a verification e-mail). */
export const SIGNUPS_PER_HOUR = 20;

export interface AccountThrottles {
  signup: Throttle;
  login: LoginThrottle;
  reset: Throttle;
  forgotIp: Throttle;
  resetMails: Throttle;
  verifyMails: Throttle;
  /** "You already have an account" e-mails per account (a sign-up with its address). */
  existingMails: Throttle;
}

/** The throttles, counted in the store (so a restart forgets nothing). */
export function accountThrottles(store: Store): AccountThrottles {
  return {
    signup: new Throttle(store, 'signup', SIGNUPS_PER_HOUR, 60 * 60_000),
    login: new LoginThrottle(store),
    reset: new Throttle(store, 'reset'),
    forgotIp: new Throttle(store, 'forgot', 20, 60 * 60_000),
    resetMails: new Throttle(store, 'reset-mail', 5, 60 * 60_000),
    verifyMails: new Throttle(store, 'verify-mail', 5, 60 * 60_000),
    existingMails: new Throttle(store, 'existing-mail', 5, 60 * 60_000),
  };
}
