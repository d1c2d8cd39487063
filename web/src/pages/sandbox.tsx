import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { get } from '../api.ts';
import { ChannelSelect } from '../components/channel-select.tsx';
import { CursorPager } from '../components/pager.tsx';
import { ContentPreview } from '../components/previews.tsx';
import { ProblemView } from '../components/problem.tsx';
import type { SandboxChannels, SandboxItem } from '../contract.ts';
import { Link } from '../router.tsx';
import { recipientText } from './notifications.tsx';

/** The sandbox inbox: what Herald "delivered" with no provider configured (docs/sandbox.md). */
export function SandboxPage() {
  const [channel, setChannel] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [selected, setSelected] = useState<SandboxItem | null>(null);
  const query = new URLSearchParams({ limit: '20' });
  if (channel) query.set('channel', channel);
  const cursor = cursors.at(-1);
  if (cursor) query.set('cursor', cursor);
  const inbox = useQuery({
    queryKey: ['sandbox', query.toString()],
    queryFn: () => get<{ items: SandboxItem[]; nextCursor: string | null }>(`/admin/sandbox?${query}`),
    refetchInterval: 3000,
    placeholderData: keepPreviousData,
  });
  const routing = useQuery({
    queryKey: ['sandbox-channels'],
    queryFn: () => get<SandboxChannels>('/admin/sandbox/channels'),
  });
  const items = inbox.data?.items ?? [];
  const shown = selected ?? items[0] ?? null;

  return (
    <section>
      <h1>Sandbox inbox</h1>
      {routing.data ? <SandboxRouting channels={routing.data.channels} /> : null}
      <div className="row">
        <ChannelSelect
          all
          value={channel}
          onChange={(value) => {
            setChannel(value);
            setCursors([]);
            setSelected(null);
          }}
        />
      </div>
      <ProblemView error={inbox.error} />
      <div className="split two">
        <div className="card list">
          <ul className="inbox">
            {items.map((m) => (
              <li key={`${m.notificationId}-${m.at}`} className={shown === m ? 'active' : ''}>
                <button type="button" className="link" onClick={() => setSelected(m)}>
                  <span className={`chip tone-${m.channel}`}>{m.channel}</span>{' '}
                  {m.content.subject ?? m.content.title ?? m.content.text ?? ''}
                </button>
                <div className="muted">
                  {recipientText(m.recipient)} ·{' '}
                  {new Date(m.at).toLocaleTimeString(undefined, { hour12: false })}
                </div>
              </li>
            ))}
          </ul>
          {items.length === 0 ? <p className="muted">Nothing delivered to the sandbox yet.</p> : null}
          <CursorPager cursors={cursors} next={inbox.data?.nextCursor} onChange={setCursors} />
        </div>
        <div className="card">
          {shown ? (
            <>
              <p className="muted">
                To {recipientText(shown.recipient)} ·{' '}
                <Link to={`/notifications/${encodeURIComponent(shown.notificationId)}`}>notification</Link>
              </p>
              <ContentPreview channel={shown.channel} content={shown.content} />
            </>
          ) : null}
        </div>
      </div>
    </section>
  );
}

/** Which channels this deployment delivers to the sandbox, and which to real providers. */
export function SandboxRouting(props: { channels: SandboxChannels['channels'] }) {
  const to = (sandbox: boolean) =>
    props.channels
      .filter((c) => c.sandbox === sandbox)
      .map((c) => c.channel)
      .join(', ');
  const sandboxed = to(true);
  const real = to(false);
  return (
    <p className="notice" data-testid="sandbox-routing">
      {sandboxed
        ? `Goes to the sandbox (no provider configured): ${sandboxed}.`
        : 'No channel goes to the sandbox.'}
      {real ? ` Goes to real providers: ${real}.` : ''}
    </p>
  );
}
