// Forgot password (docs/API.md): e-mail and "Send reset link" ("Sending..."); an empty e-mail is the toast
// "Email required"; success shows "Check your email" (link valid 1 hour, check spam) with "Back to Login" and
// "Try a different email" (back to the form, e-mail cleared); failure is the toast "Error".
import { useEffect, useState, type FormEvent } from 'react';
import { errorMessage, postJson } from '../lib/api.ts';
import { toast } from '../lib/toast.ts';
import { showPendingToast } from '../lib/account.ts';

export default function ForgotPasswordForm() {
  const [email, setEmail] = useState('');
  const [pending, setPending] = useState(false);
  const [sent, setSent] = useState<string | null>(null);

  // The reset page sends here with an "Invalid link" toast when its URL has no token.
  useEffect(showPendingToast, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!email.trim()) {
      toast({ title: 'Email required', description: 'Please enter your email address', variant: 'destructive' });
      return;
    }
    setPending(true);
    try {
      const answer = await postJson<{ message?: string }>('/api/auth/forgot-password', { email: email.trim() });
      setSent(answer.message || 'If an account exists with that email, a password reset link has been sent');
    } catch (err) {
      toast({ title: 'Error', description: errorMessage(err, 'Failed to send reset email'), variant: 'destructive' });
    } finally {
      setPending(false);
    }
  };

  if (sent !== null) {
    return (
      <div className="space-y-4 text-center" data-testid="reset-sent">
        <h2 className="text-xl font-semibold">Check your email</h2>
        <p className="muted text-sm">
          {sent}. The link expires in 1 hour. If you don't see the email, check your spam folder.
        </p>
        <div className="flex flex-col gap-2">
          <a href="/login" className="btn-primary">
            Back to Login
          </a>
          <button
            type="button"
            className="btn-secondary"
            onClick={() => {
              setEmail('');
              setSent(null);
            }}
          >
            Try a different email
          </button>
        </div>
      </div>
    );
  }
  return (
    <form onSubmit={submit} noValidate className="space-y-4" aria-label="Request a password reset">
      <div>
        <label htmlFor="forgot-email" className="label">
          Email
        </label>
        <input
          id="forgot-email"
          type="email"
          className="input"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          autoComplete="email"
        />
      </div>
      <button type="submit" className="btn-primary w-full" disabled={pending}>
        {pending ? 'Sending...' : 'Send reset link'}
      </button>
      <p className="muted text-center text-sm">
        Remembered it?{' '}
        <a href="/login" className="link">
          Back to Login
        </a>
      </p>
    </form>
  );
}
