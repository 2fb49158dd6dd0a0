// E-mail verification (/verify-email; docs/API.md): reads ?token=, posts it once; "Verifying Email"
// while loading; "Email Verified!" with the server's message, or "Verification Failed" with the server's
// message (fallback "Failed to verify email"; no token: "No verification token provided"). A link that
// succeeded in this tab is remembered (sessionStorage), so reloading the success page shows it again instead of
// "Verification Failed" (the token is single use); the server also answers "already verified" to the verified
// user's own session. The link of an e-mail that a resend replaced (410) says "A newer link was sent" instead of
// "Verification Failed", with the server's message.
import { useEffect, useState } from 'react';
import { errorMessage, HttpError, postJson } from '../lib/api.ts';

const VERIFIED_KEY = 'timeseal-verified-token';

type State =
  | { kind: 'loading' }
  | { kind: 'success'; message: string }
  | { kind: 'replaced'; message: string }
  | { kind: 'error'; message: string };

export default function VerifyEmail() {
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    const token = new URLSearchParams(location.search).get('token');
    if (!token) {
      setState({ kind: 'error', message: 'No verification token provided' });
      return;
    }
    let remembered: string | null = null;
    try {
      remembered = sessionStorage.getItem(VERIFIED_KEY);
    } catch {
      // storage unavailable: no memory of an earlier success
    }
    if (remembered === token) {
      setState({ kind: 'success', message: 'Your email address is already verified' });
      return;
    }
    postJson<{ message?: string }>('/api/auth/verify-email', { token })
      .then((answer) => {
        try {
          sessionStorage.setItem(VERIFIED_KEY, token);
        } catch {
          // storage unavailable
        }
        setState({ kind: 'success', message: answer.message || 'Your email address has been verified.' });
      })
      .catch((err: unknown) =>
        setState({
          // 410: the link of an e-mail a resend replaced; a newer one was sent.
          kind: err instanceof HttpError && err.status === 410 ? 'replaced' : 'error',
          message: errorMessage(err, 'Failed to verify email'),
        }),
      );
  }, []);

  if (state.kind === 'loading') {
    return (
      <div className="flex flex-col items-center gap-4 text-center" role="status">
        <span
          className="h-10 w-10 animate-spin rounded-full border-4 border-emerald-600 border-t-transparent"
          aria-hidden="true"
        />
        <h2 className="text-xl font-semibold">Verifying Email</h2>
        <p className="muted text-sm">Please wait while we check your link.</p>
      </div>
    );
  }
  if (state.kind === 'success')
    return (
      <Outcome testId="verify-success" badge={SUCCESS_BADGE} symbol="✓" heading="Email Verified!">
        {state.message}
      </Outcome>
    );
  if (state.kind === 'replaced')
    return (
      <Outcome testId="verify-replaced" badge={REPLACED_BADGE} symbol="✉" heading="A newer link was sent">
        {state.message}
      </Outcome>
    );
  return (
    <div className="space-y-4 text-center" data-testid="verify-error">
      <div
        className="mx-auto flex h-12 w-12 items-center justify-center rounded-full bg-red-100 text-2xl text-red-700 dark:bg-red-950 dark:text-red-300"
        aria-hidden="true"
      >
        ✕
      </div>
      <h2 className="text-xl font-semibold">Verification Failed</h2>
      <p className="text-sm text-red-700 dark:text-red-400">{state.message}</p>
      <p className="muted text-sm">
        The link may be invalid or expired. Log in and request a new verification email from your dashboard.
      </p>
      <div className="flex flex-col gap-2 sm:flex-row sm:justify-center">
        <a href="/login" className="btn-primary">
          Go to Login
        </a>
        <a href="/" className="btn-secondary">
          Go to Home
        </a>
      </div>
    </div>
  );
}

const SUCCESS_BADGE = 'bg-emerald-100 text-emerald-700 dark:bg-emerald-900 dark:text-emerald-300';
const REPLACED_BADGE = 'bg-amber-100 text-amber-800 dark:bg-amber-950 dark:text-amber-200';

/** A link's outcome that leads on to the dashboard: its badge, heading and the server's sentence. */
function Outcome(props: { testId: string; badge: string; symbol: string; heading: string; children: string }) {
  return (
    <div className="space-y-4 text-center" data-testid={props.testId}>
      <div
        className={`mx-auto flex h-12 w-12 items-center justify-center rounded-full text-2xl ${props.badge}`}
        aria-hidden="true"
      >
        {props.symbol}
      </div>
      <h2 className="text-xl font-semibold">{props.heading}</h2>
      <p className="muted text-sm">{props.children}</p>
      <div className="flex flex-col gap-2 sm:flex-row sm:justify-center">
        <a href="/dashboard" className="btn-primary">
          Go to Dashboard
        </a>
        <a href="/" className="btn-secondary">
          Go to Home
        </a>
      </div>
    </div>
  );
}
