// Dashboard (/dashboard; docs/API.md "Accounts"): login required (otherwise /login); "Loading..." while loading;
// "Welcome, {username}"; the unverified-e-mail alert with "Resend Email"; Subscription Status; Monthly Usage and
// Next Renewal (paying) or Daily Limit (free); Quick Actions; Account Information; Timestamp History with
// certificates (paying). Every user-supplied text is rendered as text by React (never as HTML).
import { useEffect, useState, type ReactNode } from 'react';
import { errorMessage, getJson, postJson } from '../lib/api.ts';
import {
  fetchMe,
  formatDay,
  formatDayTime,
  isPaying,
  showPendingToast,
  type CurrentUser,
  type HistoryRecord,
  type QuotaUsage,
  type Subscription,
} from '../lib/account.ts';
import { toast } from '../lib/toast.ts';

interface Data {
  user: CurrentUser;
  subscription: Subscription | null;
  usage: QuotaUsage;
  history: HistoryRecord[] | null;
  /** Whether Standard can be bought on this server (GET /api/stripe/config); "Upgrade to Standard" only then. */
  paymentsAvailable: boolean;
}

function Card({ title, children, testid }: { title: string; children: ReactNode; testid?: string }) {
  return (
    <section className="card" data-testid={testid} aria-label={title}>
      <h2 className="muted text-sm font-medium">{title}</h2>
      {children}
    </section>
  );
}

export default function Dashboard() {
  const [data, setData] = useState<Data | null>(null);
  const [resending, setResending] = useState(false);
  const [portalPending, setPortalPending] = useState(false);

  useEffect(() => {
    showPendingToast();
    void (async () => {
      const user = await fetchMe();
      if (!user) {
        location.replace('/login');
        return;
      }
      const subscription = await getJson<Subscription>('/api/subscription').catch(() => user.subscription ?? null);
      const usage = await getJson<QuotaUsage>('/api/quota/usage').catch(() => ({ used: 0, limit: 500 }));
      const history = isPaying(subscription) ? await getJson<HistoryRecord[]>('/api/timestamps').catch(() => []) : null;
      const paymentsAvailable = await getJson<{ paymentsAvailable?: boolean }>('/api/stripe/config').then(
        (c) => c.paymentsAvailable === true,
        () => false,
      );
      setData({ user, subscription, usage, history, paymentsAvailable });
    })();
  }, []);

  if (!data) {
    return (
      <div className="flex flex-col items-center gap-3 py-24" role="status">
        <span
          className="h-10 w-10 animate-spin rounded-full border-4 border-emerald-600 border-t-transparent"
          aria-hidden="true"
        />
        <p className="muted">Loading...</p>
      </div>
    );
  }

  const { user, subscription, usage, history, paymentsAvailable } = data;
  /** The free tier's daily limit: the server's when it said so, else the product's 2. */
  const freePerDay = usage.period === 'day' ? usage.limit : 2;
  const paying = isPaying(subscription);

  const resend = async () => {
    setResending(true);
    try {
      await postJson('/api/auth/resend-verification');
      toast({ title: 'Email sent', description: 'Please check your inbox for the verification link.' });
    } catch (err) {
      toast({
        title: 'Failed to send email',
        description: errorMessage(err, 'Please try again later.'),
        variant: 'destructive',
      });
    } finally {
      setResending(false);
    }
  };

  const portal = async () => {
    setPortalPending(true);
    try {
      const { url } = await postJson<{ url: string }>('/api/stripe/create-portal');
      location.href = url;
    } catch (err) {
      toast({
        title: 'Could not open the billing portal',
        description: errorMessage(err, 'Please try again.'),
        variant: 'destructive',
      });
      setPortalPending(false);
    }
  };

  const remaining = Math.max(0, usage.limit - usage.used);
  const percent = usage.limit > 0 ? Math.min(100, Math.round((usage.used / usage.limit) * 100)) : 0;

  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-3xl font-bold tracking-tight">Welcome, {user.username}</h1>
        <p className="muted mt-2">Manage your protected timestamps, your plan and your account.</p>
      </div>

      {!user.emailVerified && (
        <div
          role="alert"
          data-testid="verify-alert"
          className="flex flex-col gap-3 rounded-xl border border-amber-300 bg-amber-50 p-4 text-amber-900 sm:flex-row sm:items-center sm:justify-between dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
        >
          <div>
            <p className="font-semibold">Email Verification Required</p>
            <p className="text-sm">
              Please verify your email address to subscribe to a paid plan. We sent a link to {user.email}.
            </p>
          </div>
          <button type="button" className="btn-secondary shrink-0" onClick={resend} disabled={resending}>
            {resending ? 'Sending...' : 'Resend Email'}
          </button>
        </div>
      )}

      <div className="grid gap-4 md:grid-cols-3">
        <Card title="Subscription Status" testid="status-card">
          <p className="mt-2 text-2xl font-bold">{paying ? 'Active' : 'Free Tier'}</p>
          <p className="muted mt-1 text-sm">
            {paying ? (subscription!.plan ?? 'Standard') : `${freePerDay} timestamps per day`}
          </p>
        </Card>
        {paying ? (
          <>
            <Card title="Monthly Usage" testid="usage-card">
              <p className="mt-2 text-2xl font-bold">
                {usage.used} / {usage.limit}
              </p>
              <div
                className="mt-3 h-2 w-full overflow-hidden rounded-full bg-slate-200 dark:bg-slate-800"
                role="progressbar"
                aria-label="Monthly usage"
                aria-valuemin={0}
                aria-valuemax={usage.limit}
                aria-valuenow={usage.used}
              >
                <div
                  className="h-full rounded-full bg-emerald-600 dark:bg-emerald-500"
                  style={{ width: `${percent}%` }}
                />
              </div>
              <p className="muted mt-2 text-sm">{remaining} timestamps remaining</p>
            </Card>
            {subscription!.currentPeriodEnd && (
              <Card title="Next Renewal" testid="renewal-card">
                <p className="mt-2 text-2xl font-bold">{formatDay(subscription!.currentPeriodEnd)}</p>
                <p className="muted mt-1 text-sm">
                  {subscription!.cancelAtPeriodEnd ? 'Cancels at period end' : 'Automatic renewal'}
                </p>
              </Card>
            )}
          </>
        ) : (
          <Card title="Daily Limit" testid="daily-card">
            {usage.period === 'day' ? (
              <>
                <p className="mt-2 text-2xl font-bold" data-testid="daily-usage">
                  {usage.used} of {usage.limit} today
                </p>
                <p className="muted mt-1 text-sm">
                  {usage.limit} per day. Based on your IP address; resets at 00:00 UTC
                </p>
              </>
            ) : (
              <>
                <p className="mt-2 text-2xl font-bold">2 per day</p>
                <p className="muted mt-1 text-sm">Based on your IP address</p>
              </>
            )}
            <p className="muted mt-2 text-sm" data-testid="beta-terms">
              On this site. The{' '}
              <a className="link" href="/beta-api">
                beta API
              </a>
              , POST /tsa and the command-line client: free, no rate limit, no authentication during beta.
            </p>
          </Card>
        )}
      </div>

      <div className="grid gap-4 md:grid-cols-2">
        <section className="card" aria-labelledby="quick-actions">
          <h2 id="quick-actions" className="card-title">
            Quick Actions
          </h2>
          <div className="mt-4 flex flex-col gap-2">
            <a href="/" className="btn-primary">
              Create New Timestamp
            </a>
            {paying ? (
              <button type="button" className="btn-secondary" onClick={portal} disabled={portalPending}>
                Manage Subscription
              </button>
            ) : paymentsAvailable ? (
              <a href="/pricing" className="btn-secondary">
                Upgrade to Standard
              </a>
            ) : null}
          </div>
        </section>
        <section className="card" aria-labelledby="account-info">
          <h2 id="account-info" className="card-title">
            Account Information
          </h2>
          <dl className="mt-4 grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
            <dt className="muted">Email</dt>
            <dd className="break-all" data-testid="account-email">
              {user.email}
            </dd>
            <dt className="muted">Username</dt>
            <dd className="break-all">{user.username}</dd>
            <dt className="muted">Plan</dt>
            <dd data-testid="account-plan">{paying ? 'Standard Tier' : 'Free Tier'}</dd>
          </dl>
        </section>
      </div>

      {paying && history && (
        <section className="card" aria-labelledby="history-title" data-testid="history">
          <h2 id="history-title" className="card-title">
            Timestamp History
          </h2>
          {history.length === 0 ? (
            <div className="py-8 text-center">
              <p className="font-semibold">No timestamps yet</p>
              <p className="muted mt-1 text-sm">Create your first timestamp to get started</p>
            </div>
          ) : (
            <ul className="mt-4 divide-y divide-slate-200 dark:divide-slate-800">
              {history.map((r) => (
                <li
                  key={r.id}
                  className="flex flex-col gap-2 py-3 sm:flex-row sm:items-center sm:justify-between"
                  data-testid="history-item"
                >
                  <div className="min-w-0">
                    {r.fileName && (
                      <p className="truncate font-medium" data-testid="history-file">
                        {r.fileName}
                      </p>
                    )}
                    <p className="muted text-xs">{formatDayTime(r.submittedAt)}</p>
                    <p className="hash mt-1">{r.hash}</p>
                  </div>
                  <a
                    href={`/api/certificate.php?id=${encodeURIComponent(String(r.id))}&format=pdf`}
                    download
                    className="btn-secondary shrink-0"
                  >
                    Download Certificate
                  </a>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}
