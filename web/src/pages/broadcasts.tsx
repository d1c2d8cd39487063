import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, mutate } from '../api.ts';
import { ChannelSelect } from '../components/channel-select.tsx';
import { BarChart } from '../components/charts.tsx';
import { ProblemView } from '../components/problem.tsx';
import {
  type BroadcastAccepted,
  type BroadcastView,
  type Channel,
  PRIORITIES,
  STATUSES,
} from '../contract.ts';
import { Link } from '../router.tsx';

/** How often a broadcast still fanning out (or with notifications waiting) is read again. */
const POLL_MS = 2000;

/** The inline content of a broadcast on each channel, from a subject (title) and a text (body). */
function contentOf(channel: Channel, subject: string, text: string): Record<string, string> {
  if (channel === 'email') return { subject, text };
  if (channel === 'sms') return { text };
  return { title: subject, body: text };
}

/**
 * Broadcasts (docs/topics.md): send one notification to every subscriber of a topic, then
 * follow its fan-out live (GET /broadcasts/{id} polled while it runs) with its notifications
 * counted by status as a chart; cancel what has not been sent.
 */
export function BroadcastsPage() {
  const [id, setId] = useState<string | null>(null);
  const [lookup, setLookup] = useState('');
  return (
    <section>
      <h1>Broadcasts</h1>
      <CreateBroadcast onCreated={setId} />
      <div className="card">
        <form
          className="row"
          onSubmit={(event) => {
            event.preventDefault();
            if (lookup.trim()) setId(lookup.trim());
          }}
        >
          <label>
            Broadcast ID
            <input name="broadcastId" value={lookup} onChange={(e) => setLookup(e.target.value)} />
          </label>
          <button type="submit">Open</button>
        </form>
      </div>
      {id ? <Progress key={id} id={id} /> : null}
    </section>
  );
}

function CreateBroadcast(props: { onCreated(id: string): void }) {
  const [topic, setTopic] = useState('');
  const [channel, setChannel] = useState<string>('email');
  const [priority, setPriority] = useState('LOW');
  const [subject, setSubject] = useState('');
  const [text, setText] = useState('');
  const create = useMutation({
    mutationFn: () =>
      mutate<BroadcastAccepted>('POST', '/broadcasts', {
        topic: topic.trim(),
        channel,
        priority,
        content: contentOf(channel as Channel, subject, text),
      }),
    onSuccess: (answer) => props.onCreated(answer.broadcastId),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <div className="card">
      <h2>New broadcast</h2>
      <form onSubmit={submit} className="stack">
        <div className="row">
          <label>
            Topic
            <input name="topic" value={topic} onChange={(e) => setTopic(e.target.value)} required />
          </label>
          <ChannelSelect value={channel} onChange={setChannel} />
          <label>
            Priority
            <select name="priority" value={priority} onChange={(e) => setPriority(e.target.value)}>
              {PRIORITIES.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </select>
          </label>
        </div>
        {channel === 'sms' ? null : (
          <label>
            {channel === 'email' ? 'Subject' : 'Title'}
            <input name="subject" value={subject} onChange={(e) => setSubject(e.target.value)} required />
          </label>
        )}
        <label>
          {channel === 'push' ? 'Body' : 'Text'}
          <textarea name="text" value={text} rows={4} onChange={(e) => setText(e.target.value)} required />
        </label>
        <button type="submit">Broadcast</button>
      </form>
      <ProblemView error={create.error} />
    </div>
  );
}

/** A broadcast's progress: made so far out of its recipients, and its notifications by status. */
function Progress(props: { id: string }) {
  const path = `/broadcasts/${encodeURIComponent(props.id)}`;
  const broadcast = useQuery({
    queryKey: ['broadcast', props.id],
    queryFn: () => get<BroadcastView>(path),
    // Live while it moves; a finished one with nothing left waiting is read once.
    refetchInterval: (query) => {
      const b = query.state.data;
      if (!b) return POLL_MS;
      const waiting = (b.counts.QUEUED ?? 0) + (b.counts.RETRYING ?? 0) + (b.counts.PROCESSING ?? 0);
      return b.status === 'QUEUED' || b.status === 'FANNING_OUT' || waiting > 0 ? POLL_MS : false;
    },
  });
  const cancel = useMutation({
    mutationFn: () => mutate<BroadcastView>('POST', `${path}/cancel`),
    onSuccess: () => void broadcast.refetch(),
  });
  const b = broadcast.data;
  return (
    <div className="card" data-broadcast={props.id}>
      <h2>Broadcast {props.id}</h2>
      <ProblemView error={broadcast.error ?? cancel.error} />
      {b ? (
        <>
          <p>
            Topic {b.topic}: <span className="broadcast-status">{b.status}</span>,{' '}
            <span className="broadcast-created">{b.created.toLocaleString()}</span> of{' '}
            {b.recipients === null ? '…' : b.recipients.toLocaleString()} notifications made.{' '}
            <Link to={`/notifications?broadcastId=${encodeURIComponent(b.broadcastId)}`}>
              Its notifications
            </Link>
          </p>
          <progress max={b.recipients ?? 1} value={b.recipients === null ? 0 : b.created} />
          <BarChart
            title="Its notifications by status"
            bars={STATUSES.filter((s) => (b.counts[s] ?? 0) > 0).map((s) => ({
              label: s,
              value: b.counts[s] ?? 0,
              tone: `status-${s.toLowerCase()}`,
            }))}
            format={(v) => v.toLocaleString()}
          />
          {b.status !== 'CANCELLED' ? (
            <button type="button" className="small" onClick={() => cancel.mutate()}>
              Cancel what has not been sent
            </button>
          ) : null}
        </>
      ) : null}
    </div>
  );
}
