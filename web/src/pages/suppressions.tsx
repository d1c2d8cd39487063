import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, mutate } from '../api.ts';
import { ChannelSelect } from '../components/channel-select.tsx';
import { CursorPager } from '../components/pager.tsx';
import { ProblemView } from '../components/problem.tsx';
import type { SuppressionItem } from '../contract.ts';

type Page = { items: SuppressionItem[]; nextCursor: string | null };

/**
 * Suppressed recipients (docs/deliverability.md): listed masked, as every recipient is. Looking
 * one up, adding one and removing one take the full recipient, typed in; adding and removing
 * are for admins (the API enforces it; the form is only shown to them).
 */
export function SuppressionsPage(props: { admin: boolean }) {
  const client = useQueryClient();
  const [channel, setChannel] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const query = new URLSearchParams({ limit: '20' });
  if (channel) query.set('channel', channel);
  const cursor = cursors.at(-1);
  if (cursor) query.set('cursor', cursor);
  const list = useQuery({
    queryKey: ['suppressions', query.toString()],
    queryFn: () => get<Page>(`/suppressions?${query}`),
    placeholderData: keepPreviousData,
  });
  const items = list.data?.items ?? [];
  return (
    <section>
      <h1>Suppressions</h1>
      <p className="muted">
        Recipients Herald no longer sends to: hard bounces, complaints, gone push targets, SMS opt-outs,
        unsubscribes (LOW only) and ones added by an admin. CRITICAL notifications are always attempted.
      </p>
      <Lookup admin={props.admin} onChange={() => client.invalidateQueries({ queryKey: ['suppressions'] })} />
      <div className="card">
        <div className="row">
          <ChannelSelect
            all
            value={channel}
            onChange={(value) => {
              setChannel(value);
              setCursors([]);
            }}
          />
        </div>
        <ProblemView error={list.error} />
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th>Channel</th>
                <th>Recipient</th>
                <th>Reason</th>
                <th>Since</th>
              </tr>
            </thead>
            <tbody>
              {items.map((s) => (
                <tr key={`${s.channel}-${s.recipient}-${s.createdAt}`}>
                  <td>{s.channel}</td>
                  <td>{s.recipient}</td>
                  <td>{s.reason}</td>
                  <td>{new Date(s.createdAt).toLocaleString(undefined, { hour12: false })}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {items.length === 0 ? <p className="muted">No suppressed recipients.</p> : null}
        <CursorPager cursors={cursors} next={list.data?.nextCursor} onChange={setCursors} />
      </div>
    </section>
  );
}

/** Is this recipient suppressed? And, for admins: suppress it, or remove its suppression. */
function Lookup(props: { admin: boolean; onChange(): void }) {
  const [channel, setChannel] = useState<string>('email');
  const [recipient, setRecipient] = useState('');
  const [reason, setReason] = useState('');
  const [found, setFound] = useState<SuppressionItem | null | undefined>(undefined);
  const check = useMutation({
    mutationFn: () =>
      get<Page>(`/suppressions?${new URLSearchParams({ channel, recipient: recipient.trim() })}`),
    onSuccess: (page) => setFound(page.items[0] ?? null),
  });
  const add = useMutation({
    mutationFn: () =>
      mutate<SuppressionItem>('POST', '/suppressions', {
        channel,
        recipient: recipient.trim(),
        // Left out when blank: Herald names it `manual`.
        ...(reason.trim() ? { reason: reason.trim() } : {}),
      }),
    onSuccess: (item) => {
      setFound(item);
      setReason('');
      props.onChange();
    },
  });
  const remove = useMutation({
    mutationFn: () =>
      mutate<null>('DELETE', `/suppressions/${channel}/${encodeURIComponent(recipient.trim())}`),
    onSuccess: () => {
      setFound(null);
      props.onChange();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    check.mutate();
  };
  return (
    <div className="card">
      <h2>Look up a recipient</h2>
      <form onSubmit={submit} className="row">
        <ChannelSelect
          value={channel}
          onChange={(value) => {
            setChannel(value);
            setFound(undefined);
          }}
        />
        <label>
          Recipient
          <input
            name="recipient"
            value={recipient}
            placeholder="ada@example.com, +15550101234, endpoint or device token"
            onChange={(e) => {
              setRecipient(e.target.value);
              setFound(undefined);
            }}
            required
          />
        </label>
        <button type="submit">Check</button>
      </form>
      <ProblemView error={check.error ?? add.error ?? remove.error} />
      {found === null ? (
        <div className="row">
          <p>Not suppressed.</p>
          {props.admin ? (
            <>
              <label>
                Reason
                <input
                  name="reason"
                  value={reason}
                  placeholder="in your own words (optional)"
                  onChange={(e) => setReason(e.target.value)}
                />
              </label>
              <button type="button" className="small" onClick={() => add.mutate()}>
                Suppress it
              </button>
            </>
          ) : null}
        </div>
      ) : null}
      {found ? (
        <p>
          Suppressed since {new Date(found.createdAt).toLocaleString(undefined, { hour12: false })} (
          {found.reason}).{' '}
          {props.admin ? (
            <button type="button" className="small" onClick={() => remove.mutate()}>
              Remove suppression
            </button>
          ) : null}
        </p>
      ) : null}
    </div>
  );
}
