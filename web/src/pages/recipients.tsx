import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, Fragment, useEffect, useState } from 'react';
import { get, mutate } from '../api.ts';
import { type Choice, ChoiceSelect, choicesOf, toChoices } from '../components/choices.tsx';
import { ProblemView } from '../components/problem.tsx';
import {
  type CategoryItem,
  optedOut,
  PREFERENCE_CHANNELS,
  type PreferenceChannel,
  type PreferencesView,
  type RecipientView,
} from '../contract.ts';
import { navigate, useLocation } from '../router.tsx';

type Grid = {
  channels: Record<PreferenceChannel, Choice>;
  categories: Record<string, Record<PreferenceChannel, Choice>>;
};

/**
 * Recipients (docs/recipients.md): found by their ID (kept in the address bar, `/recipients?id=…`), the
 * profile as the caller stored it, and the recipient's preferences, shown and, with
 * `recipients:write`, edited; with a link to the recipient's own preferences page.
 */
export function RecipientsPage(props: { canWrite: boolean }) {
  const { search } = useLocation();
  const id = search.get('id') ?? '';
  const [typed, setTyped] = useState(id);
  useEffect(() => setTyped(id), [id]);
  const find = (event: FormEvent) => {
    event.preventDefault();
    const wanted = typed.trim();
    if (wanted) navigate(`/recipients?${new URLSearchParams({ id: wanted })}`);
  };
  return (
    <section>
      <h1>Recipients</h1>
      <form className="card row" onSubmit={find}>
        <label>
          Recipient ID
          <input
            name="recipientId"
            value={typed}
            placeholder="user-1842"
            required
            onChange={(e) => setTyped(e.target.value)}
          />
        </label>
        <button type="submit">Find</button>
      </form>
      {id ? <Recipient key={id} id={id} canWrite={props.canWrite} /> : null}
    </section>
  );
}

function Recipient(props: { id: string; canWrite: boolean }) {
  const path = `/recipients/${encodeURIComponent(props.id)}`;
  const profile = useQuery({ queryKey: ['recipient', props.id], queryFn: () => get<RecipientView>(path) });
  if (profile.error) return <ProblemView error={profile.error} />;
  const r = profile.data;
  if (!r) return <p className="muted">Loading…</p>;
  const facts: Array<[string, string | null]> = [
    ['Email', r.email],
    ['Phone', r.phone],
    ['Push targets', r.push && r.push.length > 0 ? String(r.push.length) : null],
    ['Name', r.name],
    ['Locale', r.locale],
    ['Time zone', r.timezone],
    ['Data', r.data ? JSON.stringify(r.data) : null],
    ['Updated', new Date(r.updatedAt).toLocaleString(undefined, { hour12: false })],
  ];
  return (
    <>
      <div className="card">
        <h2>{r.recipientId}</h2>
        <dl className="facts">
          {facts.map(([label, value]) => (
            <Fragment key={label}>
              <dt>{label}</dt>
              <dd>{value ?? <span className="muted">none</span>}</dd>
            </Fragment>
          ))}
        </dl>
        <a href={r.preferencesUrl} target="_blank" rel="noreferrer">
          Open the recipient's preferences page
        </a>
      </div>
      <PreferencesEditor path={`${path}/preferences`} id={props.id} canWrite={props.canWrite} />
    </>
  );
}

/** The grid of choices: a row per category (declared, or chosen without being declared) and one for the channels as a whole. */
function PreferencesEditor(props: { path: string; id: string; canWrite: boolean }) {
  const client = useQueryClient();
  const preferences = useQuery({
    queryKey: ['preferences', props.id],
    queryFn: () => get<PreferencesView>(props.path),
  });
  const categories = useQuery({
    queryKey: ['categories', 'all'],
    queryFn: () => get<{ items: CategoryItem[] }>('/categories?limit=500'),
  });
  const [grid, setGrid] = useState<Grid | null>(null);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (!preferences.data) return;
    const p = preferences.data;
    setGrid({
      channels: choicesOf(p.channels),
      categories: Object.fromEntries(Object.entries(p.categories).map(([k, v]) => [k, choicesOf(v)])),
    });
  }, [preferences.data]);
  const save = useMutation({
    mutationFn: (g: Grid) =>
      mutate<PreferencesView>('PUT', props.path, {
        channels: toChoices(g.channels),
        categories: Object.fromEntries(Object.entries(g.categories).map(([k, v]) => [k, toChoices(v)])),
      }),
    onSuccess: (answer) => {
      client.setQueryData(['preferences', props.id], answer);
      setSaved(true);
    },
  });
  const error = preferences.error ?? categories.error;
  if (error) return <ProblemView error={error} />;
  if (!grid || !categories.data || !preferences.data) return null;
  const declared = categories.data.items;
  const names = [...new Set([...declared.map((c) => c.name), ...Object.keys(grid.categories)])].sort();
  const current = {
    channels: toChoices(grid.channels),
    categories: Object.fromEntries(Object.entries(grid.categories).map(([k, v]) => [k, toChoices(v)])),
  };
  const set = (category: string | null, channel: PreferenceChannel, value: Choice) => {
    setSaved(false);
    if (category === null) setGrid({ ...grid, channels: { ...grid.channels, [channel]: value } });
    else {
      const row = grid.categories[category] ?? choicesOf({});
      setGrid({ ...grid, categories: { ...grid.categories, [category]: { ...row, [channel]: value } } });
    }
  };
  /** What a NORMAL notification of this category (null: none) on this channel would do now. */
  const verdict = (category: string | null, channel: PreferenceChannel) => {
    const found = declared.find((c) => c.name === category);
    const declaredRecord = found && {
      ...found,
      tenant: '',
      createdAt: 0,
      updatedAt: 0,
    };
    return optedOut({
      priority: 'NORMAL',
      channel,
      category,
      declared: declaredRecord,
      preferences: current,
    }) === null
      ? 'sent'
      : 'not sent';
  };
  const row = (
    label: string,
    category: string | null,
    choices: Record<PreferenceChannel, Choice>,
    required = false,
  ) => (
    <tr key={label}>
      <th scope="row">
        {label}
        {required ? <span className="muted"> (required: always sent)</span> : null}
      </th>
      {PREFERENCE_CHANNELS.map((channel) => (
        <td key={channel}>
          {props.canWrite ? (
            <ChoiceSelect
              hideLabel
              label={`${label} ${channel}`}
              value={choices[channel]}
              none="no choice"
              onChange={(value) => set(category, channel, value)}
            />
          ) : (
            <span>{choices[channel] || 'no choice'}</span>
          )}{' '}
          <span className="muted">{verdict(category, channel)}</span>
        </td>
      ))}
    </tr>
  );
  return (
    <div className="card">
      <h2>Preferences</h2>
      <p className="muted">
        A category's own choice comes first, then the choice for the channel as a whole, then the category's
        default. "sent" and "not sent" say what a NORMAL notification would do with the choices shown.
      </p>
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Category</th>
              {PREFERENCE_CHANNELS.map((c) => (
                <th key={c}>{c}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {names.map((name) =>
              row(
                name,
                name,
                grid.categories[name] ?? choicesOf({}),
                declared.find((c) => c.name === name)?.required,
              ),
            )}
            {row('Every channel as a whole', null, grid.channels)}
          </tbody>
        </table>
      </div>
      {props.canWrite ? (
        <div className="row">
          <button type="button" onClick={() => save.mutate(grid)}>
            Save preferences
          </button>
          {saved ? <span className="ok">Saved.</span> : null}
        </div>
      ) : null}
      <ProblemView error={save.error} />
    </div>
  );
}
