// Account screens' shared browser code (login … dashboard; docs/API.md "Accounts"): the current
// user, plan state, date formats of the dashboard, the signup/reset rules, and a toast that survives one
// navigation (the checkout 403 toast is shown on /dashboard, where the user is sent).
import { toast, type ToastOptions } from './toast.ts';
import { EMAIL_PATTERN } from './validation.ts';

export interface Subscription {
  status: string;
  stripePriceId: string | null;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  plan: string | null;
  paymentsAvailable?: boolean;
}

export interface CurrentUser {
  username: string;
  email: string;
  emailVerified: boolean;
  subscription?: Subscription;
}

export interface QuotaUsage {
  used: number;
  limit: number;
  /** Beyond the spec: 'day' for the free tier (per IP address), 'month' for Standard. Absent from older servers. */
  period?: 'day' | 'month';
}

export interface HistoryRecord {
  id: number;
  fileName: string | null;
  submittedAt: string;
  hash: string;
}

/** Stripe's subscription statuses: "active" and "trialing" count as paying; anything else is the free tier. */
export const isPaying = (s: Pick<Subscription, 'status'> | null | undefined): boolean =>
  !!s && (s.status === 'active' || s.status === 'trialing');

export const PASSWORD_MIN = 8;

/** GET /api/auth/me: the user, or null when logged out (or when the call fails). */
export async function fetchMe(): Promise<CurrentUser | null> {
  try {
    const res = await fetch('/api/auth/me', {
      credentials: 'include',
      headers: { accept: 'application/json' },
      cache: 'no-store',
    });
    if (!res.ok) return null;
    const user = (await res.json()) as CurrentUser | null;
    return user && typeof user.username === 'string' ? user : null;
  } catch {
    return null;
  }
}

const parts = (iso: string) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
};

/** "Nov 2, 2025" (the dashboard's Next Renewal). */
export function formatDay(iso: string): string {
  const d = parts(iso);
  return d ? new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', year: 'numeric' }).format(d) : iso;
}

/** "Nov 2, 2025 3:06 AM" (the dashboard's Timestamp History). */
export function formatDayTime(iso: string): string {
  const d = parts(iso);
  if (!d) return iso;
  const time = new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit' }).format(d);
  return `${formatDay(iso)} ${time}`;
}

export interface SignupInput {
  username: string;
  email: string;
  password: string;
  agreeTerms: boolean;
}

export function validateSignup(v: SignupInput): Partial<Record<keyof SignupInput, string>> {
  const errors: Partial<Record<keyof SignupInput, string>> = {};
  if (!v.username.trim()) errors.username = 'Username is required';
  if (!v.email.trim()) errors.email = 'Email is required';
  else if (!EMAIL_PATTERN.test(v.email.trim())) errors.email = 'Please enter a valid email address';
  if (!v.password) errors.password = 'Password is required';
  else if (v.password.length < PASSWORD_MIN) errors.password = 'Must be at least 8 characters';
  if (!v.agreeTerms) errors.agreeTerms = 'You must agree to the Terms of Service and Privacy Policy';
  return errors;
}

const PENDING_TOAST = 'timeseal.pendingToast';

/** Shows the toast now and again on the next page (which shows it with `showPendingToast`). */
export function toastAcrossNavigation(options: ToastOptions): void {
  toast(options);
  try {
    sessionStorage.setItem(PENDING_TOAST, JSON.stringify(options));
  } catch {
    // Storage refused: the toast is only seen until the page changes.
  }
}

export function showPendingToast(): void {
  try {
    const stored = sessionStorage.getItem(PENDING_TOAST);
    if (!stored) return;
    sessionStorage.removeItem(PENDING_TOAST);
    toast(JSON.parse(stored) as ToastOptions);
  } catch {
    // Nothing stored, or storage refused.
  }
}
