import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, mutate } from '../api.ts';
import { CursorPager } from '../components/pager.tsx';
import { ProblemView } from '../components/problem.tsx';
import type { Subscribed, SubscriberItem, TopicView } from '../contract.ts';

type Page<T> = { items: T[]; nextCursor: string | null };

/** The IDs typed in a box: separated by commas, spaces or lines. */
const idsOf = (text: string) => text.split(/[\s,]+/).filter((id) => id.length > 0);

/**
 * Topics (docs/topics.md): each with its subscriber count; a topic's subscribers, added in
 * batches of recipient IDs (the refused ones are named) and removed one by one. Changing them
 * needs recipients:write (the API enforces it).
 */
export function TopicsPage() {
  const [cursors, setCursors] = useState<string[]>([]);
  const [open, setOpen] = useState<string | null>(null);
  const query = new URLSearchParams({ limit: '20' });
  const cursor = cursors.at(-1);
  if (cursor) query.set('cursor', cursor);
  const list = useQuery({
    queryKey: ['topics', query.toString()],
    queryFn: () => get<Page<TopicView>>(`/topics?${query}`),
    placeholderData: keepPreviousData,
  });
  const items = list.data?.items ?? [];
  return (
    <section>
      <h1>Topics</h1>
      <p className="muted">
        Lists of recipients a broadcast goes to. Each subscriber gets one notification of its own.
      </p>
      <CreateTopic onCreated={setOpen} />
      <div className="card">
        <ProblemView error={list.error} />
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th>Key</th>
                <th>Name</th>
                <th>Subscribers</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {items.map((topic) => (
                <tr key={topic.key} data-topic={topic.key}>
                  <td>{topic.key}</td>
                  <td>{topic.name ?? ''}</td>
                  <td className="subscribers">{topic.subscribers.toLocaleString()}</td>
                  <td>
                    <button type="button" className="small" onClick={() => setOpen(topic.key)}>
                      Subscribers
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {items.length === 0 ? <p className="muted">No topics yet.</p> : null}
        <CursorPager cursors={cursors} next={list.data?.nextCursor} onChange={setCursors} />
      </div>
      {open ? <Subscribers key={open} topic={open} /> : null}
    </section>
  );
}

function CreateTopic(props: { onCreated(key: string): void }) {
  const client = useQueryClient();
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () =>
      mutate<TopicView>(
        'PUT',
        `/topics/${encodeURIComponent(key.trim())}`,
        name.trim() ? { name: name.trim() } : {},
      ),
    onSuccess: (topic) => {
      setKey('');
      setName('');
      props.onCreated(topic.key);
      void client.invalidateQueries({ queryKey: ['topics'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <div className="card">
      <h2>New topic</h2>
      <form onSubmit={submit} className="row">
        <label>
          Key
          <input
            name="key"
            value={key}
            placeholder="release-notes"
            onChange={(e) => setKey(e.target.value)}
            required
          />
        </label>
        <label>
          Name
          <input
            name="name"
            value={name}
            placeholder="Release notes"
            onChange={(e) => setName(e.target.value)}
          />
        </label>
        <button type="submit">Create</button>
      </form>
      <ProblemView error={create.error} />
    </div>
  );
}

/** One topic's subscribers: the add box, the list, a remove button on each. */
function Subscribers(props: { topic: string }) {
  const client = useQueryClient();
  const [cursors, setCursors] = useState<string[]>([]);
  const [text, setText] = useState('');
  const [result, setResult] = useState<Subscribed | null>(null);
  const path = `/topics/${encodeURIComponent(props.topic)}/subscribers`;
  const query = new URLSearchParams({ limit: '20' });
  const cursor = cursors.at(-1);
  if (cursor) query.set('cursor', cursor);
  const list = useQuery({
    queryKey: ['topics', props.topic, 'subscribers', query.toString()],
    queryFn: () => get<Page<SubscriberItem>>(`${path}?${query}`),
    placeholderData: keepPreviousData,
  });
  const refresh = () => client.invalidateQueries({ queryKey: ['topics'] });
  const add = useMutation({
    mutationFn: () => mutate<Subscribed>('POST', path, { recipients: idsOf(text) }),
    onSuccess: (answer) => {
      setResult(answer);
      setText('');
      void refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => mutate<null>('DELETE', `${path}/${encodeURIComponent(id)}`),
    onSuccess: () => void refresh(),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  const items = list.data?.items ?? [];
  return (
    <div className="card">
      <h2>Subscribers of {props.topic}</h2>
      <form onSubmit={submit} className="row">
        <label>
          Recipient IDs
          <textarea
            name="recipients"
            value={text}
            rows={3}
            placeholder="user-1, user-2 (up to 1000)"
            onChange={(e) => setText(e.target.value)}
            required
          />
        </label>
        <button type="submit">Add</button>
      </form>
      <ProblemView error={add.error ?? remove.error ?? list.error} />
      {result ? (
        <p className="added">
          {result.added} added.
          {result.refused.length > 0
            ? ` Refused (no such recipient): ${result.refused.map((r) => r.recipientId).join(', ')}.`
            : ''}
        </p>
      ) : null}
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Recipient</th>
              <th>Since</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {items.map((s) => (
              <tr key={s.recipientId} data-subscriber={s.recipientId}>
                <td>{s.recipientId}</td>
                <td>{new Date(s.subscribedAt).toLocaleString(undefined, { hour12: false })}</td>
                <td>
                  <button type="button" className="small" onClick={() => remove.mutate(s.recipientId)}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {items.length === 0 ? <p className="muted">No subscribers.</p> : null}
      <CursorPager cursors={cursors} next={list.data?.nextCursor} onChange={setCursors} />
    </div>
  );
}
