import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { call, get, mutate } from '../api.ts';
import { ContentPreview } from '../components/previews.tsx';
import { ProblemView } from '../components/problem.tsx';
import {
  type NotificationDetail as Detail,
  type NotificationMessage,
  TERMINAL_STATUSES,
} from '../contract.ts';
import { Link } from '../router.tsx';
import { hasScope } from '../session.ts';
import { useStatusStream } from '../stream.ts';
import { recipientText } from './notifications.tsx';

const TERMINAL: ReadonlySet<string> = TERMINAL_STATUSES;
const POLL_MS = 1000;

/**
 * Whether nothing more can happen to the notification: a terminal status, except an `inapp`
 * message DELIVERED to an inbox, which its reader may yet see, read and archive (events that
 * follow its delivery, its status staying DELIVERED).
 */
function settledDetail(detail: Detail): boolean {
  return TERMINAL.has(detail.status) && !(detail.channel === 'inapp' && detail.status === 'DELIVERED');
}

/**
 * Follows one notification: GET /notifications/{id} once, then again (with If-None-Match) on each
 * change the live stream reports for it; while the stream is down, polls instead. Stops once
 * nothing more can happen to it (settledDetail).
 */
function useNotification(id: string) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [polls, setPolls] = useState(0);
  const [changes, setChanges] = useState(0);
  const etag = useRef<string | undefined>(undefined);
  /** Set once a settled notification is shown: nothing can change after it, so nothing is fetched. */
  const final = useRef(false);
  const terminal = detail ? settledDetail(detail) : false;
  const ids = useMemo(() => [id], [id]);
  // Another notification (same page, new id): start over. Declared first, so it runs first.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `id` is the trigger
  useEffect(() => {
    final.current = false;
    etag.current = undefined;
  }, [id]);
  const live = useStatusStream(() => setChanges((n) => n + 1), ids, !terminal);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `changes` is the trigger: one fetch per reported change
  useEffect(() => {
    if (final.current) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const fetchOnce = async () => {
      try {
        const result = await call<Detail>(`/notifications/${encodeURIComponent(id)}`, { etag: etag.current });
        if (stopped) return;
        setPolls((n) => n + 1);
        if (!result.notModified) {
          etag.current = result.etag ?? undefined;
          setDetail(result.data);
          setError(null);
          if (settledDetail(result.data)) {
            final.current = true;
            return;
          }
        }
      } catch (e) {
        if (stopped) return;
        setError(e);
      }
      // Without the stream, poll; with it, the next change triggers the next fetch.
      if (!live) timer = setTimeout(fetchOnce, POLL_MS);
    };
    void fetchOnce();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id, live, changes]);
  return { detail, error, polls, live };
}

export function NotificationDetailPage(props: { id: string }) {
  const { detail, error, polls, live } = useNotification(props.id);
  const [actionError, setActionError] = useState<unknown>(null);
  const terminal = detail ? TERMINAL.has(detail.status) : false;
  const act = (what: 'cancel' | 'retry') =>
    mutate('POST', `/notifications/${encodeURIComponent(props.id)}/${what}`)
      .then(() => window.location.reload())
      .catch(setActionError);
  return (
    <section>
      <p>
        <Link to="/notifications">← Notifications</Link>
      </p>
      <h1>Notification</h1>
      <ProblemView error={error ?? actionError} />
      {detail ? (
        <>
          <div className="card">
            <dl className="facts">
              <dt>ID</dt>
              <dd>{detail.notificationId}</dd>
              <dt>Status</dt>
              <dd>
                <span className={`status status-${detail.status.toLowerCase()}`} data-testid="status">
                  {detail.status}
                </span>{' '}
                <span className="muted">
                  {terminal ? '(final)' : live ? '(live)' : `(watching, ${polls} polls)`}
                </span>
              </dd>
              <dt>Channel</dt>
              <dd>{detail.channel}</dd>
              <dt>Priority</dt>
              <dd>{detail.priority}</dd>
              <dt>Recipient</dt>
              <dd>{recipientText(detail.recipient)}</dd>
              <dt>Template</dt>
              <dd>{detail.template ?? '(inline content)'}</dd>
              <dt>Attempts</dt>
              <dd>{detail.attempts}</dd>
              <dt>Provider</dt>
              <dd>
                {detail.provider ?? '–'} {detail.providerMessageId ? `(${detail.providerMessageId})` : ''}
              </dd>
            </dl>
            <div className="row">
              {!terminal && detail.status !== 'SENT' ? (
                <button type="button" className="secondary" onClick={() => act('cancel')}>
                  Cancel
                </button>
              ) : null}
              {detail.status === 'FAILED' ? (
                <button type="button" className="secondary" onClick={() => act('retry')}>
                  Retry (redrive)
                </button>
              ) : null}
            </div>
          </div>
          {hasScope('admin') ? <RenderedMessage id={detail.notificationId} status={detail.status} /> : null}
          <h2>Timeline</h2>
          <ol className="timeline">
            {detail.events.map((e, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: events are append-only and never reordered
              <li key={`${e.type}-${e.at}-${i}`} className={`event event-${e.type.toLowerCase()}`}>
                <span className="event-type">{e.type}</span>
                <time>{new Date(e.at).toLocaleTimeString(undefined, { hour12: false })}</time>
                <span className="muted">
                  {[
                    e.attempt ? `attempt ${e.attempt}` : '',
                    e.provider ?? '',
                    e.source ? `via ${e.source}` : '',
                    e.locale ? `in ${e.locale}` : '',
                    e.detail ?? '',
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </span>
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </section>
  );
}

/**
 * The message itself, for admins (GET /notifications/{id}/message): email HTML only inside the
 * sandboxed frame of ContentPreview, as on the sandbox page. Read again when the status changes
 * (the sandbox's copy exists once it is delivered).
 */
function RenderedMessage(props: { id: string; status: string }) {
  const message = useQuery({
    queryKey: ['message', props.id, props.status],
    queryFn: () => get<NotificationMessage>(`/notifications/${encodeURIComponent(props.id)}/message`),
  });
  const data = message.data;
  return (
    <div className="card" data-testid="rendered-message">
      <h2>Message</h2>
      <ProblemView error={message.error} />
      {data ? (
        <>
          <p className="muted">
            {data.source === 'sandbox'
              ? 'As the sandbox delivered it.'
              : 'Rendered from its template version and variables, as delivery renders it.'}
          </p>
          {data.content ? (
            <ContentPreview channel={data.channel} content={data.content} />
          ) : (
            <div className="problem">It does not render: {data.detail}</div>
          )}
        </>
      ) : null}
    </div>
  );
}
