// Settings of the accounts context (docs/CONFIGURATION.md): the site's public origin (links in e-mails, Stripe return
// URLs, the CSRF origin check, the Secure cookie flag) and Stripe. Without STRIPE_SECRET_KEY and both price
// ids, payments are off and the payment endpoints answer 503 (`PAYMENTS_UNAVAILABLE`).
import { setting } from '../../runtime/settings.ts';
import { PRODUCTION_COST, type PasswordCost } from './passwords.ts';

export interface StripeSettings {
  secretKey: string;
  /** Webhooks are refused (503) without it. */
  webhookSecret: string | undefined;
  priceMonthly: string;
  priceAnnual: string;
  /** STRIPE_API_BASE (tests only): e.g. http://127.0.0.1:4242 — the SDK's host, port and protocol. */
  apiBase: URL | undefined;
}

export interface AccountsConfig {
  /** TIMESEAL_ORIGIN without a trailing slash, e.g. https://timeseal.example */
  origin: string;
  stripe: StripeSettings | undefined;
  /** The scrypt cost of new password hashes: always the production cost from the environment; in-process
   * tests that hash many passwords build their configuration with a lower one. */
  passwordCost: PasswordCost;
}

export function loadAccountsConfig(origin: string, env: NodeJS.ProcessEnv = process.env): AccountsConfig {
  const secretKey = setting(env, 'STRIPE_SECRET_KEY');
  const priceMonthly = setting(env, 'STRIPE_PRICE_MONTHLY');
  const priceAnnual = setting(env, 'STRIPE_PRICE_ANNUAL');
  const apiBase = setting(env, 'STRIPE_API_BASE');
  const webhookSecret = setting(env, 'STRIPE_WEBHOOK_SECRET');
  const stripe =
    secretKey && priceMonthly && priceAnnual
      ? { secretKey, webhookSecret, priceMonthly, priceAnnual, apiBase }
      : undefined;
  return { origin: origin.replace(/\/+$/, ''), stripe, passwordCost: PRODUCTION_COST };
}
