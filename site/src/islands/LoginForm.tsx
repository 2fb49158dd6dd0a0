// Login (/login; texts: docs/API.md): username and password, "Logging in..." while pending,
// the server's message in an error box (fallback "Failed to log in"), then /dashboard once /api/auth/me
// answers with the user. A visitor already logged in is sent on to /dashboard instead of being shown the form.
import { useEffect, useState, type FormEvent } from 'react';
import { errorMessage, postJson } from '../lib/api.ts';
import { fetchMe } from '../lib/account.ts';

export default function LoginForm() {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [pending, setPending] = useState(false);

  useEffect(() => {
    void fetchMe()
      .then((user) => {
        if (user) location.replace('/dashboard');
      })
      .catch(() => undefined);
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    setPending(true);
    try {
      await postJson('/api/auth/login', { username: username.trim(), password });
      await fetchMe();
      location.href = '/dashboard';
    } catch (err) {
      setError(errorMessage(err, 'Failed to log in'));
      setPending(false);
    }
  };

  return (
    <form onSubmit={submit} className="space-y-4" aria-label="Log in">
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
        <label htmlFor="login-username" className="label">
          Username
        </label>
        <input
          id="login-username"
          className="input"
          value={username}
          onChange={(e) => setUsername(e.target.value)}
          autoComplete="username"
          required
        />
      </div>
      <div>
        <div className="flex items-baseline justify-between">
          <label htmlFor="login-password" className="label">
            Password
          </label>
          <a href="/forgot-password" className="link text-sm">
            Forgot password?
          </a>
        </div>
        <input
          id="login-password"
          type="password"
          className="input"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="current-password"
          required
        />
      </div>
      <button type="submit" className="btn-primary w-full" disabled={pending}>
        {pending ? 'Logging in...' : 'Log in'}
      </button>
      <p className="muted text-center text-sm">
        Don't have an account?{' '}
        <a href="/signup" className="link">
          Sign up
        </a>
      </p>
    </form>
  );
}
