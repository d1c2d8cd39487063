import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { get } from '../api.ts';
import { ProblemView } from '../components/problem.tsx';
import { CHANNELS, type NotificationSummary, PRIORITIES, STATUSES } from '../contract.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { useStatusStream } from '../stream.ts';

/** The masked recipient as one line of text. */
export function recipientText(recipient: Record<string, unknown> | undefined): string {
  if (!recipient) return '';
  const value = recipient.email ?? recipient.phone ?? recipient.deviceToken ?? recipient.subscription;
  return typeof value === 'string' ? value : JSON.stringify(value ?? recipient);
}

const PAGE = 20;

/** The list's filters that the address bar carries (`/notifications?status=FAILED`). */
const URL_FILTERS = ['status', 'priority', 'channel', 'createdAfter', 'createdBefore'] as const;

function filtersOf(search: URLSearchParams): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const name of URL_FILTERS) {
    const value = search.get(name);
    if (value) filters[name] = value;
  }
  return filters;
}

export function NotificationsPage() {
  // The address bar is the filters' one home: a link or a reload shows the same list.
  const { path, search } = useLocation();
  const filters = filtersOf(search);
  const setFilters = (next: Record<string, string>) => {
    const query = new URLSearchParams();
    for (const name of URL_FILTERS) if (next[name]) query.set(name, next[name]);
    const text = query.toString();
    navigate(text ? `${path}?${text}` : path, { replace: true });
  };
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = new URLSearchParams({ limit: String(PAGE) });
  for (const [k, v] of Object.entries(filters)) {
    if (!v) continue;
    query.set(k, k.startsWith('created') ? new Date(v).toISOString() : v);
  }
  if (cursor) query.set('cursor', cursor);
  // With the live stream, the list is read again when something changes (at most once a
  // second); without it, every 5 s.
  const client = useQueryClient();
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const live = useStatusStream(() => {
    pending.current ??= setTimeout(() => {
      pending.current = undefined;
      void client.invalidateQueries({ queryKey: ['notifications'] });
    }, 1000);
  });
  const list = useQuery({
    queryKey: ['notifications', query.toString()],
    queryFn: () =>
      get<{ items: NotificationSummary[]; nextCursor: string | null }>(`/notifications?${query}`),
    placeholderData: keepPreviousData,
    refetchInterval: live ? false : 5000,
  });
  const setFilter = (name: string) => (e: { target: { value: string } }) => {
    setFilters({ ...filters, [name]: e.target.value });
    setCursors([]);
  };
  const select = (name: string, values: readonly string[]) => (
    <label>
      {name[0]?.toUpperCase() + name.slice(1)}
      <select name={name} value={filters[name] ?? ''} onChange={setFilter(name)}>
        <option value="">any</option>
        {values.map((v) => (
          <option key={v}>{v}</option>
        ))}
      </select>
    </label>
  );

  return (
    <section>
      <h1>Notifications</h1>
      <div className="card row filters">
        {select('status', STATUSES)}
        {select('priority', PRIORITIES)}
        {select('channel', CHANNELS)}
        <label>
          Created after
          <input
            type="datetime-local"
            value={filters.createdAfter ?? ''}
            onChange={setFilter('createdAfter')}
          />
        </label>
        <label>
          Created before
          <input
            type="datetime-local"
            value={filters.createdBefore ?? ''}
            onChange={setFilter('createdBefore')}
          />
        </label>
      </div>
      <ProblemView error={list.error} />
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Created</th>
              <th>Status</th>
              <th>Priority</th>
              <th>Channel</th>
              <th>Recipient</th>
              <th>ID</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((n) => (
              <tr key={n.notificationId}>
                <td>{new Date(n.createdAt).toLocaleString()}</td>
                <td>
                  <span className={`status status-${n.status.toLowerCase()}`}>{n.status}</span>
                </td>
                <td>{n.priority}</td>
                <td>{n.channel}</td>
                <td>{recipientText(n.recipient)}</td>
                <td>
                  <Link to={`/notifications/${encodeURIComponent(n.notificationId)}`}>
                    {n.notificationId}
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data && list.data.items.length === 0 ? (
        <p className="muted">
          {list.data.nextCursor
            ? 'None of the notifications looked at so far match; Next looks at older ones.'
            : 'No notifications match.'}
        </p>
      ) : null}
      <div className="row pager">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Previous
        </button>
        <span className="muted">Page {cursors.length + 1}</span>
        <button
          type="button"
          disabled={!list.data?.nextCursor}
          onClick={() => list.data?.nextCursor && setCursors([...cursors, list.data.nextCursor])}
        >
          Next
        </button>
      </div>
    </section>
  );
}
