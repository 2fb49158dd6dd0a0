// Sign up (/signup; docs/API.md): username, email, password ("Must be at least 8 characters"), the terms
// checkbox (links open /terms and /privacy in a new tab; unchecked shows "You must agree to the Terms of
// Service and Privacy Policy" and sends nothing), optional newsletter; "Creating account..." while pending; the
// server's message in an error box (fallback "Failed to create account"); then /dashboard.
import { useState, type FormEvent } from 'react';
import { errorMessage, postJson } from '../lib/api.ts';
import { fetchMe, validateSignup, type SignupInput } from '../lib/account.ts';

export default function SignupForm() {
  const [values, setValues] = useState<SignupInput>({ username: '', email: '', password: '', agreeTerms: false });
  const [newsletter, setNewsletter] = useState(false);
  const [errors, setErrors] = useState<Partial<Record<keyof SignupInput, string>>>({});
  const [error, setError] = useState('');
  const [pending, setPending] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    const found = validateSignup(values);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    setPending(true);
    try {
      await postJson('/api/auth/signup', {
        username: values.username.trim(),
        email: values.email.trim(),
        password: values.password,
        agreeTerms: values.agreeTerms,
        newsletterSubscribed: newsletter,
      });
      await fetchMe();
      location.href = '/dashboard';
    } catch (err) {
      setError(errorMessage(err, 'Failed to create account'));
      setPending(false);
    }
  };

  const set = (field: 'username' | 'email' | 'password') => (e: { target: { value: string } }) =>
    setValues((v) => ({ ...v, [field]: e.target.value }));
  const fieldError = (f: keyof SignupInput) =>
    errors[f] && (
      <p id={`signup-${f}-error`} className="field-error">
        {errors[f]}
      </p>
    );

  return (
    <form onSubmit={submit} noValidate className="space-y-4" aria-label="Create an account">
      {error && (
        <div
          role="alert"
          data-testid="form-error"
          className="rounded-lg border border-red-300 bg-red-50 p-3 text-sm text-red-800 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
        >
          {error}
        </div>
      )}
      <div>
        <label htmlFor="signup-username" className="label">
          Username
        </label>
        <input
          id="signup-username"
          className="input"
          value={values.username}
          onChange={set('username')}
          autoComplete="username"
          required
          aria-invalid={!!errors.username}
          aria-describedby={errors.username ? 'signup-username-error' : undefined}
        />
        {fieldError('username')}
      </div>
      <div>
        <label htmlFor="signup-email" className="label">
          Email
        </label>
        <input
          id="signup-email"
          type="email"
          className="input"
          value={values.email}
          onChange={set('email')}
          autoComplete="email"
          required
          aria-invalid={!!errors.email}
          aria-describedby={errors.email ? 'signup-email-error' : undefined}
        />
        {fieldError('email')}
      </div>
      <div>
        <label htmlFor="signup-password" className="label">
          Password
        </label>
        <input
          id="signup-password"
          type="password"
          className="input"
          value={values.password}
          onChange={set('password')}
          autoComplete="new-password"
          minLength={8}
          required
          aria-invalid={!!errors.password}
          aria-describedby="signup-password-hint"
        />
        {errors.password ? (
          fieldError('password')
        ) : (
          <p id="signup-password-hint" className="muted mt-1 text-xs">
            Must be at least 8 characters
          </p>
        )}
      </div>
      <div>
        <label className="flex items-start gap-2 text-sm">
          <input
            type="checkbox"
            className="mt-0.5 h-4 w-4 accent-emerald-600"
            checked={values.agreeTerms}
            onChange={(e) => setValues((v) => ({ ...v, agreeTerms: e.target.checked }))}
            aria-invalid={!!errors.agreeTerms}
            aria-describedby={errors.agreeTerms ? 'signup-agreeTerms-error' : undefined}
          />
          <span>
            I agree to the{' '}
            <a href="/terms" target="_blank" rel="noopener" className="link">
              Terms of Service
            </a>{' '}
            and{' '}
            <a href="/privacy" target="_blank" rel="noopener" className="link">
              Privacy Policy
            </a>
          </span>
        </label>
        {fieldError('agreeTerms')}
      </div>
      <label className="flex items-start gap-2 text-sm">
        <input
          type="checkbox"
          className="mt-0.5 h-4 w-4 accent-emerald-600"
          checked={newsletter}
          onChange={(e) => setNewsletter(e.target.checked)}
        />
        <span>Send me occasional product news (optional)</span>
      </label>
      <button type="submit" className="btn-primary w-full" disabled={pending}>
        {pending ? 'Creating account...' : 'Create account'}
      </button>
      <p className="muted text-center text-sm">
        Already have an account?{' '}
        <a href="/login" className="link">
          Log in
        </a>
      </p>
    </form>
  );
}
