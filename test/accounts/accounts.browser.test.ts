// The account screens in Debian's Chromium against the real server (`timeseal serve`, spawned) with a real SMTP
// server on loopback and the Stripe stand-in: sign-up rules, the free dashboard, resend, the checkout 403 toast
// and redirect, e-mail verification states, checkout, signed webhooks, the paying dashboard (usage, renewal,
// history, escaped file names, certificates), the portal, logout, the login error box, forgot and reset
// password. Under `make screenshots` (TIMESEAL_SCREENSHOTS=1) screenshots of every account screen land in
// test-results/screenshots/accounts-*.png; `make test` takes none.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  linkToken,
  PRICE_ANNUAL,
  PRICE_MONTHLY,
  signedEvent,
  startSmtp,
  startStripeStandIn,
  STRIPE_KEY,
  subscriptionObject,
  WEBHOOK_SECRET,
  type SmtpStandIn,
  type StripeStandIn,
} from '../../ingest/accounts/test/stand-ins.ts';
import {
  capture,
  CAPTURE,
  createProject,
  ensureBuilt,
  launchBrowser,
  pngProblems,
  removeProject,
  settled,
  startServer,
  type Project,
  type Server,
} from '../site/helpers.ts';

const NOW = '2025-11-02T03:06:00.000Z';
let project: Project;
let server: Server;
let browser: Browser;
let smtp: SmtpStandIn;
let stripe: StripeStandIn;
const pageErrors: string[] = [];

const user = { username: 'ada_l', email: 'ada@example.org', password: 'analytical engine' };

async function newPage(
  options: { theme?: 'light' | 'dark'; width?: number } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 900 },
    baseURL: server.url,
    timezoneId: 'UTC',
    locale: 'en-US',
  });
  if (options.theme) await context.addInitScript((t) => localStorage.setItem('theme', t), options.theme);
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(`${page.url()}: ${e.message}`));
  return { context, page };
}

/** Waits until the island around `selector` has hydrated. */
async function hydrated(page: Page, selector: string): Promise<void> {
  await page.locator(selector).first().waitFor();
  await page.waitForFunction((s) => {
    const island = document.querySelector(s)?.closest('astro-island');
    return !!island && !island.hasAttribute('ssr');
  }, selector);
}

const toastText = (page: Page) => page.locator('#toaster .toast').first();

/** A full-page screenshot test-results/screenshots/accounts-<name>.png under `make screenshots`; nothing otherwise. */
const shoot = (page: Page, name: string) => capture(page, `accounts-${name}`, { fullPage: true });

/** Under `make screenshots`, `url` at 1280 and 390 px in both themes, each once `ready` says it is drawn:
 *  accounts-<name>-{desktop,phone}-{dark,light}.png. */
async function shootEachWay(url: string, name: string, ready: (page: Page) => Promise<void>): Promise<void> {
  if (!CAPTURE) return;
  for (const [label, width] of [
    ['desktop', 1280],
    ['phone', 390],
  ] as const)
    for (const theme of ['dark', 'light'] as const) {
      const { context, page } = await newPage({ theme, width });
      await page.goto(url);
      await ready(page);
      await shoot(page, `${name}-${label}-${theme}`);
      await context.close();
    }
}

async function deliver(event: { payload: string; signature: string }): Promise<number> {
  const res = await fetch(`${server.url}/api/stripe/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': event.signature },
    body: event.payload,
  });
  return res.status;
}

beforeAll(async () => {
  ensureBuilt();
  smtp = await startSmtp();
  stripe = await startStripeStandIn();
  project = createProject();
  Object.assign(project.env, {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Timeseal <noreply@timeseal.test>',
    STRIPE_SECRET_KEY: STRIPE_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_PRICE_MONTHLY: PRICE_MONTHLY,
    STRIPE_PRICE_ANNUAL: PRICE_ANNUAL,
    STRIPE_API_BASE: stripe.url,
  });
  server = await startServer(project, { now: NOW });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await stripe?.close();
  await smtp?.close();
  if (project) removeProject(project);
});

describe('account screens', () => {
  let context: BrowserContext;
  let page: Page;

  it('signup: the terms checkbox message sends nothing; then the account is created and the free dashboard shows', async () => {
    ({ context, page } = await newPage());
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/auth/signup')) sent.push(r.postData() ?? '');
    });
    await page.goto('/signup');
    await hydrated(page, 'form[aria-label="Create an account"]');
    await expect(page.getByRole('link', { name: 'Terms of Service' }).getAttribute('target')).resolves.toBe('_blank');
    await expect(page.getByRole('link', { name: 'Privacy Policy' }).getAttribute('href')).resolves.toBe('/privacy');
    await page.getByLabel('Username', { exact: true }).fill(user.username);
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('You must agree to the Terms of Service and Privacy Policy').waitFor();
    await page.getByText('Must be at least 8 characters').waitFor();
    await shoot(page, 'signup-errors-desktop-dark');
    expect(sent).toEqual([]);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('checkbox', { name: /I agree/ }).check();
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL('**/dashboard');
    expect(JSON.parse(sent[0]!)).toEqual({ ...user, agreeTerms: true, newsletterSubscribed: false });
    await page.getByRole('heading', { name: `Welcome, ${user.username}` }).waitFor();
    await page.getByText('Email Verification Required').waitFor();
    const status = page.locator('[data-testid=status-card]');
    await expect(status.textContent()).resolves.toContain('Free Tier');
    await expect(status.textContent()).resolves.toContain('2 timestamps per day');
    await expect(page.locator('[data-testid=daily-card]').textContent()).resolves.toMatch(
      /2 per day.*Based on your IP address/,
    );
    await expect(page.getByRole('link', { name: 'Upgrade to Standard' }).getAttribute('href')).resolves.toBe(
      '/pricing',
    );
    await expect(page.locator('[data-testid=account-plan]').textContent()).resolves.toBe('Free Tier');
    await expect(page.locator('[data-testid=history]').count()).resolves.toBe(0);
    // The header shows Dashboard and Logout once logged in.
    await page.locator('header [data-auth=in]').first().waitFor({ state: 'visible' });
    await expect(page.locator('header [data-auth=out]').first().isVisible()).resolves.toBe(false);
    await shoot(page, 'dashboard-free-desktop-dark');
  });

  it('resend e-mail, and the checkout 403 toast and redirect for an unverified user', async () => {
    await smtp.next(user.email);
    const count = smtp.mails.length;
    await page.getByRole('button', { name: 'Resend Email' }).click();
    await toastText(page).getByText('Email sent').waitFor();
    await smtp.next(user.email, count);

    await page.goto('/pricing');
    await hydrated(page, '[data-tier=standard]');
    await page.getByText('Current Plan: Free Tier').waitFor();
    await page.getByRole('button', { name: 'Subscribe Now' }).click();
    await page.waitForURL('**/dashboard');
    await toastText(page).getByText('Email verification required').waitFor();
    await expect(toastText(page).textContent()).resolves.toContain(
      'Please verify your email address before subscribing. Check your inbox or go to your dashboard to resend the verification link.',
    );
  });

  it('verify-email: no token, a replaced link (a newer one was sent), success; the same link again or a reload says already verified; elsewhere it fails', async () => {
    await page.goto('/verify-email');
    await page.getByRole('heading', { name: 'Verification Failed' }).waitFor();
    await page.getByText('No verification token provided').waitFor();
    const mails = smtp.mails.filter((m) => m.to.includes(user.email));
    // The first e-mail's link, which the resend above replaced: a newer one was sent, in any browser.
    const replaced = linkToken(mails.at(0)!, 'verify-email');
    const elsewhere = await browser.newContext({ baseURL: server.url });
    for (const p of [page, await elsewhere.newPage()]) {
      await p.goto(`/verify-email?token=${replaced}`);
      await p.getByRole('heading', { name: 'A newer link was sent' }).waitFor();
      await p.getByText(/a newer one replaced it.*most recent verification e-mail/).waitFor();
      await expect(p.getByText('Verification Failed').count()).resolves.toBe(0);
    }
    await elsewhere.close();
    // While the address is not verified the link stays replaced: its screen at both widths, in both themes.
    await shootEachWay(`/verify-email?token=${replaced}`, 'verify-email-replaced', (p) =>
      p.getByRole('heading', { name: 'A newer link was sent' }).waitFor(),
    );
    const token = linkToken(mails.at(-1)!, 'verify-email');
    await page.goto(`/verify-email?token=${token}`);
    await page.getByRole('heading', { name: 'Email Verified!' }).waitFor();
    await shoot(page, 'verify-success-desktop-dark');
    await expect(page.getByRole('link', { name: 'Go to Dashboard' }).getAttribute('href')).resolves.toBe('/dashboard');
    // Reloading the success page, and opening the link again in this (logged-in) browser: already verified.
    await page.reload();
    await page.getByRole('heading', { name: 'Email Verified!' }).waitFor();
    await page.getByText('Your email address is already verified').waitFor();
    await page.evaluate(() => sessionStorage.clear());
    await page.goto(`/verify-email?token=${token}`);
    await page.getByRole('heading', { name: 'Email Verified!' }).waitFor();
    await page.getByText('Your email address is already verified').waitFor();
    // Another browser, without the session: the used link is invalid.
    const other = await browser.newContext({ baseURL: server.url });
    const stranger = await other.newPage();
    await stranger.goto(`/verify-email?token=${token}`);
    await stranger.getByRole('heading', { name: 'Verification Failed' }).waitFor();
    await stranger.getByText('Invalid or expired verification link').waitFor();
    await expect(stranger.getByRole('link', { name: 'Go to Login' }).getAttribute('href')).resolves.toBe('/login');
    await other.close();
  });

  it('checkout through the stand-in, signed webhooks, and the paying dashboard with history and certificates', async () => {
    await page.goto('/pricing');
    await hydrated(page, '[data-tier=standard]');
    await page.getByRole('button', { name: 'Monthly' }).click();
    await page.getByRole('button', { name: 'Subscribe Now' }).click();
    await page.waitForURL(`${stripe.url}/checkout/**`);
    const call = stripe.calls.filter((c) => c.path === '/v1/checkout/sessions').at(-1)!;
    expect(call.params['line_items[0][price]']).toBe(PRICE_MONTHLY);
    const userId = call.params.client_reference_id!;
    const sub = subscriptionObject({
      customer: call.params.customer!,
      price: PRICE_MONTHLY,
      status: 'active',
      userId,
      periodStart: Date.parse(NOW) / 1000,
      periodEnd: Date.parse('2025-12-02T03:06:00Z') / 1000,
    });
    stripe.subscriptions.set(sub.id, sub);
    expect(
      await deliver(
        signedEvent('checkout.session.completed', {
          id: 'cs_1',
          object: 'checkout.session',
          mode: 'subscription',
          customer: call.params.customer,
          subscription: sub.id,
          client_reference_id: userId,
        }),
      ),
    ).toBe(200);
    expect(await deliver(signedEvent('customer.subscription.created', sub))).toBe(200);

    await page.goto('/dashboard');
    await page.getByText('No timestamps yet').waitFor();
    await page.getByText('Create your first timestamp to get started').waitFor();
    await expect(page.locator('[data-testid=status-card]').textContent()).resolves.toMatch(/Active.*Standard Monthly/);
    await expect(page.locator('[data-testid=renewal-card]').textContent()).resolves.toMatch(
      /Dec 2, 2025.*Automatic renewal/,
    );
    await expect(page.locator('[data-testid=account-plan]').textContent()).resolves.toBe('Standard Tier');
    await expect(page.locator('[data-testid=verify-alert]').count()).resolves.toBe(0);

    const evil = '<img src=x onerror="window.__pwned=1">.pdf';
    const hash = 'ab'.repeat(32);
    const answer = await page.evaluate(
      async ({ hash, evil }) =>
        (
          await fetch('/api/submit', {
            method: 'POST',
            credentials: 'include',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ hash, fileName: evil }),
          })
        ).json(),
      { hash, evil },
    );
    expect(answer).toMatchObject({ ok: true, remainingThisMonth: 499 });
    await page.reload();
    await page.locator('[data-testid=history-item]').first().waitFor();
    await expect(page.locator('[data-testid=usage-card]').textContent()).resolves.toMatch(
      /1 \/ 500.*499 timestamps remaining/,
    );
    await expect(page.locator('[data-testid=history-file]').textContent()).resolves.toBe(evil);
    await expect(page.locator('[data-testid=history-item]').textContent()).resolves.toContain('Nov 2, 2025 3:06 AM');
    await expect(page.locator('[data-testid=history-item] img').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).resolves.toBeUndefined();
    await shoot(page, 'dashboard-standard-after-checkout-desktop-dark');

    // "Download Certificate" downloads the PDF; its text (pdftotext) holds the file name as text.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download Certificate' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^timeseal-certificate-[0-9a-f]{12}-\d{4}-\d{2}-\d{2}\.pdf$/);
    const pdfFile = path.join(os.tmpdir(), `timeseal-cert-${process.pid}.pdf`);
    await download.saveAs(pdfFile);
    const pdfText = execFileSync('pdftotext', ['-enc', 'UTF-8', pdfFile, '-'], { encoding: 'utf8' });
    fs.rmSync(pdfFile, { force: true });
    expect(pdfText).toContain(evil);
    expect(pdfText).toContain(hash);

    await page.goto('/pricing');
    await hydrated(page, '[data-tier=standard]');
    await page.getByText('Current Plan: Standard Tier').waitFor();
    await expect(page.locator('[data-tier=standard] button').textContent()).resolves.toBe('Current Plan');
    await expect(page.locator('[data-tier=standard] button').isDisabled()).resolves.toBe(true);

    await page.goto('/dashboard');
    await page.getByRole('button', { name: 'Manage Subscription' }).click();
    await page.waitForURL(`${stripe.url}/portal/**`);
  });

  it('logout clears the header and the dashboard sends to /login; a wrong password shows the error box', async () => {
    await page.goto('/dashboard');
    await page.getByRole('heading', { name: `Welcome, ${user.username}` }).waitFor();
    await page.locator('header [data-logout]').first().click();
    await page.waitForURL((u) => u.pathname === '/');
    await page.locator('header [data-auth=out]').first().waitFor({ state: 'visible' });
    await page.goto('/dashboard');
    await page.waitForURL('**/login');
    await hydrated(page, 'form[aria-label="Log in"]');
    await page.getByLabel('Username', { exact: true }).fill(user.username);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.locator('[data-testid=form-error]').textContent()).resolves.toBe('Invalid username or password');
    await shoot(page, 'login-error-desktop-dark');
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/dashboard');
    await page.getByText('Standard Monthly').waitFor();
    await context.close();
  });

  it('forgot password: empty e-mail toast, confirmation, "Try a different email"; reset: messages, success, missing token', async () => {
    ({ context, page } = await newPage({ theme: 'light' }));
    await page.goto('/forgot-password');
    await hydrated(page, 'form[aria-label="Request a password reset"]');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await toastText(page).getByText('Email required').waitFor();
    await expect(toastText(page).textContent()).resolves.toContain('Please enter your email address');
    const count = smtp.mails.length;
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    await expect(page.locator('[data-testid=reset-sent]').textContent()).resolves.toMatch(
      /If an account exists with that email, a password reset link has been sent.*1 hour.*spam/,
    );
    await shoot(page, 'forgot-sent-desktop-light');
    await expect(page.getByRole('link', { name: 'Back to Login' }).getAttribute('href')).resolves.toBe('/login');
    await page.getByRole('button', { name: 'Try a different email' }).click();
    await expect(page.getByLabel('Email', { exact: true }).inputValue()).resolves.toBe('');

    const token = linkToken(await smtp.next(user.email, count), 'reset-password');
    await page.goto(`/reset-password?token=${token}`);
    await hydrated(page, 'form[aria-label="Choose a new password"]');
    await page.getByText('Must be at least 8 characters').waitFor();
    await page.getByText('Choose a new password for your account.').waitFor();
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByLabel('Confirm password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Reset password' }).click();
    await toastText(page).getByText('Password too short').waitFor();
    await page.getByLabel('New password', { exact: true }).fill('difference engine');
    await page.getByLabel('Confirm password', { exact: true }).fill('difference engin');
    await page.getByRole('button', { name: 'Reset password' }).click();
    await toastText(page).getByText("Passwords don't match").waitFor();
    await shoot(page, 'reset-form-desktop-light');
    await page.getByLabel('Confirm password', { exact: true }).fill('difference engine');
    await page.getByRole('button', { name: 'Reset password' }).click();
    await page.getByRole('heading', { name: 'Password reset successful' }).waitFor();
    await page.getByText('You can now log in with your new password').waitFor();
    await expect(page.getByText('Choose a new password').count()).resolves.toBe(0);
    // The same link a second time: said at once, with a way to a new one, instead of the form again.
    await page.goto(`/reset-password?token=${token}`);
    const used = page.locator('[data-testid=reset-link-used]');
    await used.waitFor();
    await expect(used.innerText()).resolves.toMatch(/can no longer be used.*already used or has expired/s);
    await expect(used.getByRole('link', { name: 'Send a new reset link' }).getAttribute('href')).resolves.toBe(
      '/forgot-password',
    );
    await expect(page.locator('form[aria-label="Choose a new password"]').count()).resolves.toBe(0);
    // Nor the form's invitation above it (it said "Choose a new password for your account." there).
    await expect(page.getByText('Choose a new password').count()).resolves.toBe(0);
    await shootEachWay(`/reset-password?token=${token}`, 'reset-link-used', (p) =>
      p.locator('[data-testid=reset-link-used]').waitFor(),
    );
    // No token at all.
    await page.goto('/reset-password');
    await page.waitForURL('**/forgot-password');
    await toastText(page).getByText('Invalid link').waitFor();
    await expect(toastText(page).textContent()).resolves.toContain('This password reset link is invalid or incomplete');
    await context.close();
  });

  // Only takes screenshots: registered under `make screenshots` alone. After the tests above, which made the
  // paying account (history, certificates) and set its password to "difference engine".
  if (CAPTURE) {
    it('captures the account screens in both themes on desktop and phone', async () => {
      const start = Date.now();
      const written: string[] = [];
      for (const [label, width] of [
        ['desktop', 1280],
        ['phone', 390],
      ] as const) {
        for (const theme of ['dark', 'light'] as const) {
          const { context: c, page: p } = await newPage({ theme, width });
          for (const route of [
            '/login',
            '/signup',
            '/forgot-password',
            '/reset-password?token=x',
            '/verify-email?token=' + 'x'.repeat(43),
          ]) {
            await p.goto(route);
            await settled(p);
            written.push((await shoot(p, `${route.slice(1).split('?')[0]}-${label}-${theme}`))!);
          }
          await p.goto('/login');
          await hydrated(p, 'form[aria-label="Log in"]');
          await p.getByLabel('Username', { exact: true }).fill(user.username);
          await p.getByLabel('Password', { exact: true }).fill('difference engine');
          await p.getByRole('button', { name: 'Log in' }).click();
          await p.waitForURL('**/dashboard');
          await p.locator('[data-testid=history-item]').first().waitFor();
          await settled(p);
          written.push((await shoot(p, `dashboard-standard-${label}-${theme}`))!);
          await c.close();
        }
      }
      expect(written).toHaveLength(2 * 2 * 6);
      expect(pngProblems(written, start)).toEqual([]);
    }, 120_000);
  }

  it('raised no uncaught error in any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
