// Pricing (/pricing; docs/API.md): monthly/annual toggle (annual by default, "Save 40%"), four tiers, the
// "Current Plan" badge from /api/auth/me and /api/subscription, Subscribe (visitors go to /signup, users
// start checkout; a 403 is the "Email verification required" toast, shown again on /dashboard where the user is
// sent); when the server has no Stripe keys (GET /api/stripe/config) the Standard card says payments are
// unavailable and its button is disabled for everyone (a visitor sent to /signup would meet the same
// disabled button there: a circle), and the
// Professional waitlist dialog (cannot close while pending; closing resets it).
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { getJson, HttpError, postJson } from '../lib/api.ts';
import { toast } from '../lib/toast.ts';
import { toastAcrossNavigation } from '../lib/account.ts';
import { validateWaitlist, type Errors, type WaitlistInput } from '../lib/validation.ts';

type Period = 'monthly' | 'annual';
type Plan = 'visitor' | 'free' | 'standard';

const PAYING = new Set(['active', 'trialing']);

function Check() {
  return (
    <svg
      className="mt-0.5 h-4 w-4 shrink-0 text-emerald-600 dark:text-emerald-400"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="3"
      aria-hidden="true"
    >
      <path d="M5 13l4 4L19 7" />
    </svg>
  );
}

function Features({ items }: { items: string[] }) {
  return (
    <ul className="mt-6 flex-1 space-y-2 text-sm">
      {items.map((f) => (
        <li key={f} className="flex gap-2">
          <Check />
          {f}
        </li>
      ))}
    </ul>
  );
}

function WaitlistDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const empty: WaitlistInput = { name: '', email: '', message: '' };
  const [values, setValues] = useState(empty);
  const [errors, setErrors] = useState<Errors<WaitlistInput>>({});
  const [pending, setPending] = useState(false);

  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);

  const close = () => {
    if (pending) return;
    setValues(empty);
    setErrors({});
    onClose();
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const found = validateWaitlist(values);
    setErrors(found);
    if (Object.keys(found).length) return;
    setPending(true);
    try {
      const answer = await postJson<{ alreadyExists?: boolean; message?: string }>('/api/professional-waitlist.php', {
        name: values.name.trim(),
        email: values.email.trim(),
        message: values.message.trim(),
      });
      toast({
        title: answer.alreadyExists ? 'Already on waitlist' : 'Success!',
        description: answer.message || "We'll notify you when Professional tier launches.",
      });
      setPending(false);
      setValues(empty);
      setErrors({});
      onClose();
    } catch (err) {
      toast({
        title: 'Error',
        description: (err instanceof HttpError && err.serverMessage) || 'Failed to join waitlist. Please try again.',
        variant: 'destructive',
      });
      setPending(false);
    }
  };

  const set = (f: keyof WaitlistInput) => (e: { target: { value: string } }) =>
    setValues((v) => ({ ...v, [f]: e.target.value }));
  return (
    <dialog
      ref={ref}
      aria-labelledby="waitlist-title"
      className="m-auto w-[min(32rem,calc(100vw-2rem))] rounded-xl border border-slate-200 bg-white p-0 text-slate-900 shadow-2xl backdrop:bg-slate-950/70 dark:border-slate-700 dark:bg-slate-900 dark:text-slate-100"
      onCancel={(e) => {
        e.preventDefault();
        close();
      }}
      onClick={(e) => {
        if (e.target === ref.current) close();
      }}
    >
      <form onSubmit={submit} noValidate className="space-y-4 p-6">
        <h2 id="waitlist-title" className="text-xl font-semibold">
          Join the Professional Tier Waitlist
        </h2>
        <p className="muted text-sm">
          Team collaboration, analytics and API access are coming. Leave your details and we will tell you first.
        </p>
        <div>
          <label htmlFor="waitlist-name" className="label">
            Name
          </label>
          <input
            id="waitlist-name"
            className="input"
            value={values.name}
            onChange={set('name')}
            maxLength={300}
            required
            aria-invalid={!!errors.name}
            aria-describedby={errors.name ? 'waitlist-name-error' : undefined}
          />
          {errors.name && (
            <p id="waitlist-name-error" className="field-error">
              {errors.name}
            </p>
          )}
        </div>
        <div>
          <label htmlFor="waitlist-email" className="label">
            Email address
          </label>
          <input
            id="waitlist-email"
            type="email"
            className="input"
            value={values.email}
            onChange={set('email')}
            required
            aria-invalid={!!errors.email}
            aria-describedby={errors.email ? 'waitlist-email-error' : undefined}
          />
          {errors.email && (
            <p id="waitlist-email-error" className="field-error">
              {errors.email}
            </p>
          )}
        </div>
        <div>
          <label htmlFor="waitlist-message" className="label">
            Message
          </label>
          <textarea
            id="waitlist-message"
            className="input min-h-24"
            value={values.message}
            onChange={set('message')}
            required
            placeholder="What would you use the Professional tier for?"
            aria-invalid={!!errors.message}
            aria-describedby={errors.message ? 'waitlist-message-error' : undefined}
          />
          {errors.message && (
            <p id="waitlist-message-error" className="field-error">
              {errors.message}
            </p>
          )}
        </div>
        <div className="flex justify-end gap-2">
          <button type="button" className="btn-secondary" onClick={close} disabled={pending}>
            Cancel
          </button>
          <button type="submit" className="btn-primary" disabled={pending}>
            {pending ? 'Joining...' : 'Join Waitlist'}
          </button>
        </div>
      </form>
    </dialog>
  );
}

export default function Pricing() {
  const [period, setPeriod] = useState<Period>('annual');
  const [plan, setPlan] = useState<Plan>('visitor');
  const [waitlist, setWaitlist] = useState(false);
  const [checkingOut, setCheckingOut] = useState(false);
  const [paymentsAvailable, setPaymentsAvailable] = useState(true);

  useEffect(() => {
    getJson<{ paymentsAvailable?: boolean }>('/api/stripe/config')
      .then((c) => setPaymentsAvailable(c.paymentsAvailable !== false))
      .catch(() => {});
    getJson<{ username?: string } | null>('/api/auth/me')
      .then(async (user) => {
        if (!user?.username) return;
        setPlan('free');
        const sub = await getJson<{ status?: string } | null>('/api/subscription').catch(() => null);
        if (sub?.status && PAYING.has(sub.status)) setPlan('standard');
      })
      .catch(() => setPlan('visitor'));
  }, []);

  const subscribe = async () => {
    if (plan === 'visitor') {
      location.href = '/signup';
      return;
    }
    setCheckingOut(true);
    try {
      const { url } = await postJson<{ url: string }>('/api/stripe/create-checkout', { billingPeriod: period });
      location.href = url;
    } catch (err) {
      if (err instanceof HttpError && err.status === 403) {
        toastAcrossNavigation({
          title: 'Email verification required',
          description:
            'Please verify your email address before subscribing. Check your inbox or go to your dashboard to resend the verification link.',
          variant: 'destructive',
        });
        location.href = '/dashboard';
      } else {
        toast({
          title: 'Subscription failed',
          description: (err instanceof HttpError && err.serverMessage) || 'Failed to start checkout. Please try again.',
          variant: 'destructive',
        });
      }
    } finally {
      setCheckingOut(false);
    }
  };

  const annual = period === 'annual';
  const toggleClass = (on: boolean) =>
    `rounded-md px-4 py-2 text-sm font-semibold ${on ? 'bg-emerald-700 text-white dark:bg-emerald-500 dark:text-slate-950' : 'text-slate-700 dark:text-slate-300'}`;
  return (
    <div>
      {plan !== 'visitor' && (
        <p className="mb-6 text-center">
          <span className="badge-green" data-testid="current-plan">
            Current Plan: {plan === 'standard' ? 'Standard Tier' : 'Free Tier'}
          </span>
        </p>
      )}
      <div className="mb-10 flex items-center justify-center gap-3">
        <div
          role="group"
          aria-label="Billing period"
          className="inline-flex rounded-lg border border-slate-300 bg-white p-1 dark:border-slate-700 dark:bg-slate-900"
        >
          <button
            type="button"
            className={toggleClass(!annual)}
            aria-pressed={!annual}
            onClick={() => setPeriod('monthly')}
          >
            Monthly
          </button>
          <button
            type="button"
            className={toggleClass(annual)}
            aria-pressed={annual}
            onClick={() => setPeriod('annual')}
          >
            Annual
          </button>
        </div>
        <span className="badge-green">Save 40%</span>
      </div>
      <div className="grid gap-6 md:grid-cols-2 xl:grid-cols-4">
        <article className="card flex flex-col" data-tier="free">
          <h2 className="card-title">Free</h2>
          <p className="mt-4">
            <span className="text-4xl font-bold">$0</span> <span className="muted">forever</span>
          </p>
          <Features
            items={[
              '2 timestamps per day',
              'Beta API: free, no rate limit, no authentication during beta',
              'No login required',
              'Quantum shield (ML-DSA-65)',
              'Bitcoin anchoring',
              'Privacy-first: only hashes leave your device',
            ]}
          />
          <a href="/" className="btn-secondary mt-6">
            Start Free
          </a>
        </article>
        <article
          className="card relative flex flex-col border-2 border-emerald-600 dark:border-emerald-500"
          data-tier="standard"
        >
          <span className="badge-green absolute -top-3 left-6">Most Popular</span>
          <h2 className="card-title">Standard</h2>
          <p className="mt-4" data-testid="standard-price">
            <span className="text-4xl font-bold">{annual ? '$12' : '$20'}</span>
            <span className="muted">/month</span>
          </p>
          <p className="muted mt-1 text-sm" data-testid="standard-billing">
            {annual ? 'Billed at $144 per year' : 'Billed monthly'}
          </p>
          <Features
            items={[
              '500 timestamps/month',
              'Personal dashboard',
              'History tracking',
              'Quantum shield (ML-DSA-65)',
              'Bitcoin anchoring',
              'Priority support',
            ]}
          />
          {plan === 'standard' ? (
            <button type="button" className="btn-primary mt-6" disabled>
              Current Plan
            </button>
          ) : paymentsAvailable ? (
            <button type="button" className="btn-primary mt-6" onClick={subscribe} disabled={checkingOut}>
              Subscribe Now
            </button>
          ) : (
            <>
              <p
                role="status"
                id="standard-unavailable"
                data-testid="payments-unavailable"
                className="mt-6 rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
              >
                Payments are not available on this server right now, so Standard cannot be bought here. The free tier
                works as usual.
              </p>
              <button type="button" className="btn-primary mt-3" disabled aria-describedby="standard-unavailable">
                Subscribe Now
              </button>
            </>
          )}
        </article>
        <article className="card relative flex flex-col" data-tier="professional">
          <span className="badge-yellow absolute -top-3 left-6">Coming Soon</span>
          <h2 className="card-title">Professional</h2>
          <p className="mt-4" data-testid="professional-price">
            <span className="text-4xl font-bold">{annual ? '$29' : '$49'}</span>
            <span className="muted">/month</span>
          </p>
          <p className="muted mt-1 text-sm">{annual ? 'Billed at $348 per year' : 'Billed monthly'}</p>
          <Features
            items={[
              '5,000 timestamps/month',
              'Team collaboration',
              'Advanced analytics',
              'API access',
              'Quantum shield (ML-DSA-65)',
              'Premium support',
            ]}
          />
          <button type="button" className="btn-secondary mt-6" onClick={() => setWaitlist(true)}>
            Join Waitlist
          </button>
        </article>
        <article className="card relative flex flex-col" data-tier="enterprise">
          <span className="badge-yellow absolute -top-3 left-6">Coming Soon</span>
          <h2 className="card-title">Enterprise</h2>
          <p className="mt-4">
            <span className="text-4xl font-bold">Custom</span>
          </p>
          <p className="muted mt-1 text-sm">Pricing for your organization</p>
          <Features
            items={[
              'Unlimited timestamps',
              'Dedicated infrastructure',
              'SLA guarantees',
              'Custom integrations',
              'On-premise option',
              '24/7 dedicated support',
            ]}
          />
          <a href="/contact" className="btn-secondary mt-6">
            Contact Sales
          </a>
        </article>
      </div>
      <WaitlistDialog open={waitlist} onClose={() => setWaitlist(false)} />
    </div>
  );
}
