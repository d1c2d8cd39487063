import { useEffect, useRef, useState } from 'react';
import { ProblemView } from '../components/problem.tsx';
import { completeSignIn } from '../oidc.ts';
import { Link, navigate } from '../router.tsx';

/** /oidc/callback: checks state, exchanges the code through the auth service, then leaves the URL. */
export function OidcCallbackPage() {
  const [error, setError] = useState<unknown>(null);
  const started = useRef(false);
  useEffect(() => {
    // StrictMode runs effects twice in development; the callback must run once (state is single-use).
    if (started.current) return;
    started.current = true;
    const params = new URLSearchParams(window.location.search);
    // The code and state leave the address bar (and history) at once, whatever happens next.
    window.history.replaceState(null, '', '/oidc/callback');
    completeSignIn(params)
      .then(() => navigate('/', { replace: true }))
      .catch(setError);
  }, []);
  return (
    <div className="login">
      <h1>Signing in…</h1>
      <ProblemView error={error} />
      {error ? <Link to="/login">Back to sign-in</Link> : null}
    </div>
  );
}
