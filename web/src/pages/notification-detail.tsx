import { useEffect, useRef, useState } from 'react';
import { call, mutate } from '../api.ts';
import { ProblemView } from '../components/problem.tsx';
import type { NotificationDetail as Detail } from '../contract.ts';
import { Link } from '../router.tsx';
import { recipientText } from './notifications.tsx';

const TERMINAL = new Set(['DELIVERED', 'FAILED', 'CANCELLED', 'EXPIRED']);
const POLL_MS = 1000;

/**
 * Polls GET /notifications/{id} with If-None-Match (a 304 costs the server almost nothing) and
 * stops once the status is terminal.
 */
function useNotification(id: string) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [polls, setPolls] = useState(0);
  const etag = useRef<string | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    etag.current = undefined;
    const poll = async () => {
      try {
        const result = await call<Detail>(`/notifications/${encodeURIComponent(id)}`, { etag: etag.current });
        if (stopped) return;
        setPolls((n) => n + 1);
        if (!result.notModified) {
          etag.current = result.etag ?? undefined;
          setDetail(result.data);
          setError(null);
          if (TERMINAL.has(result.data.status)) return;
        }
      } catch (e) {
        if (stopped) return;
        setError(e);
      }
      timer = setTimeout(poll, POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id]);
  return { detail, error, polls };
}

export function NotificationDetailPage(props: { id: string }) {
  const { detail, error, polls } = useNotification(props.id);
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
                <span className="muted">{terminal ? '(final)' : `(watching, ${polls} polls)`}</span>
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
