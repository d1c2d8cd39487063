import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { get } from '../api.ts';
import { ProblemView } from '../components/problem.tsx';
import { CHANNELS, type NotificationSummary, PRIORITIES, STATUSES } from '../contract.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { hasScope } from '../session.ts';
import { useStatusStream } from '../stream.ts';

/** The masked recipient as one line of text. */
export function recipientText(recipient: Record<string, unknown> | undefined): string {
  if (!recipient) return '';
  // A person (docs/sending-to-people.md): the caller's own ID, shown as given.
  if (typeof recipient.id === 'string') return `recipient ${recipient.id}`;
  const value = recipient.email ?? recipient.phone ?? recipient.deviceToken ?? recipient.subscription;
  return typeof value === 'string' ? value : JSON.stringify(value ?? recipient);
}

const PAGE = 20;

/**
 * The list's filters that the address bar carries (`/notifications?status=FAILED`, a broadcast's
 * `broadcastId` from its page); `recipient`
 * (an exact address, found by its digest) for admins only: the API refuses it to anyone else.
 */
const URL_FILTERS = [
  'status',
  'priority',
  'channel',
  'createdAfter',
  'createdBefore',
  'recipient',
  'broadcastId',
] as const;

function filtersOf(search: URLSearchParams, admin: boolean): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const name of URL_FILTERS) {
    const value = search.get(name);
    if (value && (name !== 'recipient' || admin)) filters[name] = value;
  }
  return filters;
}

/**
 * The admins' search by exact recipient: sent as a whole address (a part of one would be refused
 * as malformed), on Enter or Find; cleared by Clear.
 */
function RecipientSearch(props: { value: string; onSearch(value: string): void }) {
  const [text, setText] = useState(props.value);
  // The address bar changed (Back, a link): show what it holds.
  const [shown, setShown] = useState(props.value);
  if (shown !== props.value) {
    setShown(props.value);
    setText(props.value);
  }
  return (
    <form
      className="row recipient-search"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSearch(text.trim());
      }}
    >
      <label>
        Recipient
        <input
          type="search"
          name="recipient"
          placeholder="ada@example.com, +15550101234, a device token"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </label>
      <button type="submit">Find</button>
      {props.value ? (
        <button type="button" onClick={() => props.onSearch('')}>
          Clear
        </button>
      ) : null}
    </form>
  );
}

export function NotificationsPage() {
  // The address bar is the filters' one home: a link or a reload shows the same list.
  const { path, search } = useLocation();
  const admin = hasScope('admin');
  const filters = filtersOf(search, admin);
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
  const applyFilter = (name: string, value: string) => {
    setFilters({ ...filters, [name]: value });
    setCursors([]);
  };
  const setFilter = (name: string) => (e: { target: { value: string } }) => applyFilter(name, e.target.value);
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
      {admin ? (
        <div className="card">
          <RecipientSearch
            value={filters.recipient ?? ''}
            onSearch={(value) => applyFilter('recipient', value)}
          />
          <p className="muted">
            Finds notifications to this exact address (an email compared lower-cased, a phone in E.164), by a
            keyed digest of it; not those accepted before Herald kept digests.
          </p>
        </div>
      ) : null}
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
