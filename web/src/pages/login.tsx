import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { login } from '../api.ts';
import { ProblemView } from '../components/problem.tsx';
import { beginSignIn, type OidcConfig } from '../oidc.ts';
import { navigate } from '../router.tsx';

async function oidcConfig(): Promise<OidcConfig> {
  const response = await fetch('/api/auth/oidc/config');
  return response.ok ? ((await response.json()) as OidcConfig) : { enabled: false };
}

export function LoginPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const oidc = useQuery({ queryKey: ['oidc-config'], queryFn: oidcConfig, staleTime: 60_000 });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(email, password);
      navigate('/', { replace: true });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="login">
      <h1>Herald</h1>
      <form onSubmit={submit} className="card">
        <label>
          Email
          <input
            type="email"
            autoComplete="username"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
          />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
          />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ProblemView error={error} />
      </form>
      {oidc.data?.enabled ? (
        <button
          type="button"
          className="secondary"
          onClick={() => beginSignIn(oidc.data as OidcConfig).catch(setError)}
        >
          Sign in with single sign-on
        </button>
      ) : null}
    </div>
  );
}
