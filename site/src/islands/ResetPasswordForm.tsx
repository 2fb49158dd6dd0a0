// Reset password (texts: docs/API.md "Accounts"): the token comes from the URL (none: toast "Invalid link" and off to
// /forgot-password); New password and Confirm password, hint "Must be at least 8 characters"; "Reset password"
// ("Resetting..."); the spec's toasts for a short or mismatched password and for a failure; success shows
// "Password reset successful" with "Go to Login". A link already used or expired (POST /api/auth/reset-password/check)
// says so at once, with a way to ask for a new one, instead of showing the form.
import { useEffect, useState, type FormEvent } from 'react';
import { errorMessage, postJson } from '../lib/api.ts';
import { PASSWORD_MIN, toastAcrossNavigation } from '../lib/account.ts';
import { toast } from '../lib/toast.ts';

export default function ResetPasswordForm() {
  const [token, setToken] = useState<string | null>(null);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [pending, setPending] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const [usable, setUsable] = useState(true);

  useEffect(() => {
    const t = new URLSearchParams(location.search).get('token');
    if (!t) {
      toastAcrossNavigation({
        title: 'Invalid link',
        description: 'This password reset link is invalid or incomplete',
        variant: 'destructive',
      });
      location.replace('/forgot-password');
      return;
    }
    setToken(t);
    postJson<{ valid?: boolean }>('/api/auth/reset-password/check', { token: t })
      .then((answer) => setUsable(answer.valid !== false))
      .catch(() => undefined);
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (password.length < PASSWORD_MIN) {
      toast({
        title: 'Password too short',
        description: 'Password must be at least 8 characters',
        variant: 'destructive',
      });
      return;
    }
    if (password !== confirm) {
      toast({
        title: "Passwords don't match",
        description: 'Please make sure both passwords match',
        variant: 'destructive',
      });
      return;
    }
    setPending(true);
    try {
      const answer = await postJson<{ message?: string }>('/api/auth/reset-password', { token, password });
      setDone(answer.message || 'You can now log in with your new password');
    } catch (err) {
      toast({
        title: 'Reset failed',
        description: errorMessage(err, 'Invalid or expired reset token'),
        variant: 'destructive',
      });
    } finally {
      setPending(false);
    }
  };

  if (done !== null) {
    return (
      <div className="mt-6 space-y-4 text-center" data-testid="reset-done">
        <h2 className="text-xl font-semibold">Password reset successful</h2>
        <p className="muted text-sm">{done}</p>
        <a href="/login" className="btn-primary w-full">
          Go to Login
        </a>
      </div>
    );
  }
  if (!usable) {
    return (
      <div className="mt-6 space-y-4 text-center" data-testid="reset-link-used">
        <h2 className="text-xl font-semibold">This link can no longer be used</h2>
        <p className="muted text-sm">
          A password reset link works once and for 1 hour. This one was already used or has expired.
        </p>
        <a href="/forgot-password" className="btn-primary w-full">
          Send a new reset link
        </a>
        <a href="/login" className="btn-secondary w-full">
          Go to Login
        </a>
      </div>
    );
  }
  return (
    <form onSubmit={submit} noValidate className="mt-1 space-y-4" aria-label="Choose a new password">
      {/* Said with the form only: above a used link's or a reset's answer it would ask for what cannot be done. */}
      <p className="muted mb-6 text-sm">Choose a new password for your account.</p>
      <div>
        <label htmlFor="reset-password" className="label">
          New password
        </label>
        <input
          id="reset-password"
          type="password"
          className="input"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="new-password"
          aria-describedby="reset-password-hint"
        />
        <p id="reset-password-hint" className="muted mt-1 text-xs">
          Must be at least 8 characters
        </p>
      </div>
      <div>
        <label htmlFor="reset-confirm" className="label">
          Confirm password
        </label>
        <input
          id="reset-confirm"
          type="password"
          className="input"
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
          autoComplete="new-password"
        />
      </div>
      <button type="submit" className="btn-primary w-full" disabled={pending || token === null}>
        {pending ? 'Resetting...' : 'Reset password'}
      </button>
    </form>
  );
}
