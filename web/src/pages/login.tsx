import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { login } from '../api.ts';
import { fieldErrors, ProblemView } from '../components/problem.tsx';
import { beginSignIn, type OidcConfig } from '../oidc.ts';
import { navigate, useLocation } from '../router.tsx';

async function oidcConfig(): Promise<OidcConfig> {
  const response = await fetch('/api/auth/oidc/config');
  return response.ok ? ((await response.json()) as OidcConfig) : { enabled: false };
}

/** Whether no user exists yet (the API says only that, to anyone). */
async function setupNeeded(): Promise<boolean> {
  const response = await fetch('/api/auth/setup');
  return response.ok && ((await response.json()) as { setupNeeded: boolean }).setupNeeded;
}

/**
 * Before the first user exists nobody can sign in: the page says how to create the first admin,
 * with the server's own store (its start-up output prints the command with its HERALD_DATA_DIR).
 */
const FIRST_ADMIN_COMMAND =
  'HERALD_DATA_DIR=/path/to/data npm run herald -- users add --email you@example.com --password-stdin --role admin';

function FirstAdminHint() {
  return (
    <section className="notice" role="status" aria-label="Create the first admin">
      <p>
        <strong>No user exists yet.</strong> Create the first admin where the server runs, pointing at the
        server's store (the same <code>HERALD_DATA_DIR</code> or <code>DATABASE_URL</code>; the server printed
        this command with it when it started):
      </p>
      <pre>{FIRST_ADMIN_COMMAND}</pre>
      <p>
        Or restart the server once with <code>HERALD_ADMIN_EMAIL</code> and <code>HERALD_ADMIN_PASSWORD</code>{' '}
        set. Then sign in here.
      </p>
    </section>
  );
}

/**
 * Sign-in. The tenant field is optional and hidden until wanted: an email is a user of one tenant
 * for most people, and the API says when it is not (400 naming body/tenant, shown beside the
 * field). After a sign-out of this device only, the page says that other devices stay signed in.
 */
export function LoginPage() {
  const { search } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [tenant, setTenant] = useState('');
  const [askTenant, setAskTenant] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const oidc = useQuery({ queryKey: ['oidc-config'], queryFn: oidcConfig, staleTime: 60_000 });
  const setup = useQuery({ queryKey: ['setup-needed'], queryFn: setupNeeded });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(email, password, tenant.trim() || undefined);
      navigate('/', { replace: true });
    } catch (e) {
      if (fieldErrors(e, 'tenant').length > 0) setAskTenant(true);
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="login">
      <h1>Herald</h1>
      {setup.data ? <FirstAdminHint /> : null}
      {search.get('signed-out') === 'device' ? (
        <p className="notice" role="status">
          Signed out on this device. Other devices where you signed in stay signed in until their sessions
          expire; to end them too, sign in and choose “Sign out everywhere”.
        </p>
      ) : search.get('signed-out') === 'everywhere' ? (
        <p className="notice" role="status">
          Signed out everywhere: every device has to sign in again.
        </p>
      ) : null}
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
        {askTenant ? (
          <label>
            Tenant (optional)
            <input
              name="tenant"
              autoComplete="organization"
              value={tenant}
              onChange={(e) => setTenant(e.target.value)}
            />
            {fieldErrors(error, 'tenant').map((m) => (
              <span key={m} className="field-error">
                This email signs in to several tenants: {m}.
              </span>
            ))}
          </label>
        ) : (
          <button type="button" className="link" onClick={() => setAskTenant(true)}>
            Sign in to a specific tenant
          </button>
        )}
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
