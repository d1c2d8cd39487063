import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useState, useSyncExternalStore } from 'react';
import { SESSION_ENDED, scheduleRefresh } from './api.ts';
import { SignOutPanel } from './components/sign-out.tsx';
import { AccountPage } from './pages/account.tsx';
import { AdminPage } from './pages/admin.tsx';
import { BroadcastsPage } from './pages/broadcasts.tsx';
import { CategoriesPage } from './pages/categories.tsx';
import { DashboardPage } from './pages/dashboard.tsx';
import { InboxPage } from './pages/inbox.tsx';
import { LoginPage } from './pages/login.tsx';
import { NotificationDetailPage } from './pages/notification-detail.tsx';
import { NotificationsPage } from './pages/notifications.tsx';
import { OidcCallbackPage } from './pages/oidc-callback.tsx';
import { RecipientsPage } from './pages/recipients.tsx';
import { SandboxPage } from './pages/sandbox.tsx';
import { SendPage } from './pages/send.tsx';
import { SuppressionsPage } from './pages/suppressions.tsx';
import { TemplatesPage } from './pages/templates.tsx';
import { TopicsPage } from './pages/topics.tsx';
import { WorkflowRunPage, WorkflowRunsPage } from './pages/workflow-runs.tsx';
import { WorkflowsPage } from './pages/workflows.tsx';
import { Link, match, navigate, useLocation } from './router.tsx';
import { clearSession, hasScope, loadSession, tokenClaims } from './session.ts';

const PUBLIC = new Set(['/login', '/oidc/callback']);

function subscribeSession(callback: () => void) {
  window.addEventListener('herald:session', callback);
  window.addEventListener('storage', callback);
  return () => {
    window.removeEventListener('herald:session', callback);
    window.removeEventListener('storage', callback);
  };
}

/** Whether a usable session exists, re-read whenever storage changes (this tab or another). */
function useSignedIn(): boolean {
  return useSyncExternalStore(subscribeSession, () => loadSession() !== null);
}

export function App() {
  const { path } = useLocation();
  const signedIn = useSignedIn();
  const queryClient = useQueryClient();
  const isPublic = PUBLIC.has(path);

  // The guard: every page but login needs a session; without one, go to login.
  useEffect(() => {
    if (!signedIn && !isPublic) {
      if (localStorage.getItem('herald.session')) clearSession();
      queryClient.clear();
      navigate('/login', { replace: true });
    }
  }, [signedIn, isPublic, queryClient]);

  useEffect(() => {
    const toLogin = () => navigate('/login', { replace: true });
    window.addEventListener(SESSION_ENDED, toLogin);
    const stop = scheduleRefresh();
    return () => {
      window.removeEventListener(SESSION_ENDED, toLogin);
      stop();
    };
  }, []);

  if (path === '/login') return <LoginPage />;
  if (path === '/oidc/callback') return <OidcCallbackPage />;
  if (!signedIn) return null;
  return <Layout>{page(path)}</Layout>;
}

function page(path: string): ReactNode {
  if (path === '/') return <HomePage />;
  if (path === '/send') return <SendPage />;
  if (path === '/notifications') return <NotificationsPage />;
  const detail = match('/notifications/:id', path);
  if (detail) return <NotificationDetailPage id={detail.id as string} />;
  if (path === '/templates') return <TemplatesPage />;
  if (path === '/workflows') return <WorkflowsPage />;
  if (path === '/workflow-runs') return <WorkflowRunsPage />;
  const run = match('/workflow-runs/:id', path);
  if (run) return <WorkflowRunPage id={run.id as string} />;
  if (path === '/suppressions') return <SuppressionsPage admin={can('admin')} />;
  if (path === '/recipients') return <RecipientsPage canWrite={can('recipients:write')} />;
  if (path === '/categories') return <CategoriesPage admin={can('admin')} />;
  if (path === '/topics') return <TopicsPage />;
  if (path === '/broadcasts') return <BroadcastsPage />;
  if (path === '/inbox') return <InboxPage />;
  if (path === '/sandbox') return <SandboxPage />;
  if (path === '/admin') return <AdminPage />;
  if (path === '/account') return <AccountPage />;
  return <p>Nothing here.</p>;
}

const can = hasScope;

/** The dashboard for admins (its data needs the admin scope); the notification list for others. */
function HomePage() {
  return can('admin') ? <DashboardPage /> : <NotificationsPage />;
}

function Layout(props: { children: ReactNode }) {
  const session = loadSession();
  const claims = session ? tokenClaims(session) : {};
  const [signingOut, setSigningOut] = useState(false);
  return (
    <div className="shell">
      <header className="top">
        <span className="brand">Herald</span>
        <nav>
          {/* Links by scope, for convenience only: the API enforces scopes on every call. */}
          {can('admin') ? <Link to="/">Dashboard</Link> : null}
          {can('notifications:send') ? <Link to="/send">Send</Link> : null}
          <Link to="/notifications">Notifications</Link>
          {can('templates:read') ? <Link to="/templates">Templates</Link> : null}
          {can('templates:read') ? <Link to="/workflows">Workflows</Link> : null}
          {can('notifications:read') ? <Link to="/suppressions">Suppressions</Link> : null}
          {can('recipients:read') ? <Link to="/recipients">Recipients</Link> : null}
          {can('recipients:read') ? <Link to="/categories">Categories</Link> : null}
          {can('recipients:read') ? <Link to="/topics">Topics</Link> : null}
          {can('notifications:send') ? <Link to="/broadcasts">Broadcasts</Link> : null}
          {/* The demo makes a recipient, a token for it, and sends to it. */}
          {can('recipients:write') && can('notifications:send') ? <Link to="/inbox">Inbox</Link> : null}
          {can('admin') ? <Link to="/sandbox">Sandbox</Link> : null}
          {can('admin') ? <Link to="/admin">Admin</Link> : null}
        </nav>
        <span className="who">{claims.tid ? `tenant ${claims.tid}` : ''}</span>
        {/* Users only: a service client has no password or sessions. */}
        {claims.role ? <Link to="/account">Account</Link> : null}
        <button type="button" className="link" onClick={() => setSigningOut(!signingOut)}>
          Log out
        </button>
      </header>
      <main>
        {signingOut ? <SignOutPanel onCancel={() => setSigningOut(false)} /> : null}
        {props.children}
      </main>
    </div>
  );
}
