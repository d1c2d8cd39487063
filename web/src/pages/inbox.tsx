import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { call, mutate } from '../api.ts';
import { ProblemView } from '../components/problem.tsx';
import { type HeraldInbox, useInboxElement } from '../inbox-element.ts';
import { Link } from '../router.tsx';
import { loadSession, tokenClaims } from '../session.ts';

/**
 * The signed-in caller's own test recipient (docs/inbox-element.md, "The web UI's Inbox page"): `herald-ui.`
 * followed by its token's `sub` (a user's or a client's ID), so each person signed in to the UI
 * has one inbox of their own, the same on every visit, beside the tenant's real recipients.
 */
export function demoRecipientId(sub: string): string {
  return `herald-ui.${sub.replace(/[^A-Za-z0-9._:@+-]/g, '-')}`.slice(0, 128);
}

/** Creates the recipient when it does not exist yet; an existing one is left as it is. */
async function ensureRecipient(id: string): Promise<void> {
  const path = `/recipients/${encodeURIComponent(id)}`;
  try {
    await call(path);
  } catch (error) {
    if ((error as { problem?: { status?: number } }).problem?.status !== 404) throw error;
    await mutate('PUT', path, { name: 'Web UI inbox demo' });
  }
}

/** A recipient token for `id` (POST /recipients/{id}/token), as a caller's backend would get one. */
async function recipientToken(id: string): Promise<string> {
  const answer = await mutate<{ access_token: string }>(
    'POST',
    `/recipients/${encodeURIComponent(id)}/token`,
  );
  return answer.access_token;
}

/**
 * The inbox demo: `<herald-inbox>` served by the gateway (/inbox.js), against the signed-in
 * caller's test recipient, with a button that sends it an `inapp` message.
 */
export function InboxPage() {
  const session = loadSession();
  const id = demoRecipientId((session && tokenClaims(session).sub) || 'anonymous');
  const ready = useInboxElement();
  const element = useRef<HeraldInbox>(null);
  const setup = useQuery({
    queryKey: ['inbox-demo', id],
    queryFn: async () => {
      await ensureRecipient(id);
      return recipientToken(id);
    },
    staleTime: Number.POSITIVE_INFINITY,
  });
  const token = setup.data;
  useEffect(() => {
    const inbox = element.current;
    if (!ready || !inbox || !token) return;
    inbox.tokenProvider = () => recipientToken(id);
    inbox.token = token;
  }, [ready, token, id]);

  const [title, setTitle] = useState('Hello from Herald');
  const [body, setBody] = useState('A test message sent from the web UI.');
  const send = useMutation({
    mutationFn: () =>
      mutate<{ notificationId: string }>('POST', '/notifications', {
        channel: 'inapp',
        recipient: { id },
        content: { title, body, url: `${window.location.origin}/inbox` },
      }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate();
  };

  return (
    <section>
      <h1>Inbox</h1>
      <p className="muted">
        The <code>&lt;herald-inbox&gt;</code> element as your own app would embed it, showing the inbox of
        your test recipient <code>{id}</code>.
      </p>
      <ProblemView error={setup.error} />
      <div className="card inbox-demo">
        <herald-inbox ref={element} api-url="/api" align="start" />
      </div>
      <form className="card form" onSubmit={submit}>
        <h2>Send a test message</h2>
        <label>
          Title
          <input name="title" value={title} required onChange={(e) => setTitle(e.target.value)} />
        </label>
        <label>
          Body
          <textarea name="body" rows={2} value={body} onChange={(e) => setBody(e.target.value)} />
        </label>
        <div className="row">
          <button type="submit" disabled={send.isPending}>
            Send a test message
          </button>
          {send.data ? (
            <Link to={`/notifications/${encodeURIComponent(send.data.notificationId)}`}>
              The notification
            </Link>
          ) : null}
        </div>
        <ProblemView error={send.error} />
      </form>
      <div className="card">
        <h2>Embedding it</h2>
        <pre className="snippet">{`<script src="${window.location.origin}/inbox.js" defer></script>
<herald-inbox api-url="${window.location.origin}/api"></herald-inbox>
<script type="module">
  const inbox = document.querySelector('herald-inbox');
  // Your backend gets the token from POST /recipients/{id}/token for the signed-in user.
  inbox.tokenProvider = () => fetch('/my-app/herald-token').then((r) => r.text());
</script>`}</pre>
        <p className="muted">See docs/inbox-element.md for the attributes, events, theming and CSP.</p>
      </div>
    </section>
  );
}
