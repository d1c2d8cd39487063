import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, mutate } from '../api.ts';
import { type Choice, ChoiceSelect, choicesOf, choiceText, toChoices } from '../components/choices.tsx';
import { CursorPager } from '../components/pager.tsx';
import { ProblemView } from '../components/problem.tsx';
import { type CategoryItem, PREFERENCE_CHANNELS, type PreferenceChannel } from '../contract.ts';

type Page = { items: CategoryItem[]; nextCursor: string | null };

interface Draft {
  name: string;
  description: string;
  required: boolean;
  defaults: Record<PreferenceChannel, Choice>;
}

const EMPTY: Draft = { name: '', description: '', required: false, defaults: choicesOf({}) };

/**
 * The tenant's categories (docs/preferences.md): listed by name with their defaults; admins
 * declare, edit (a PUT replaces the category whole) and delete them.
 */
export function CategoriesPage(props: { admin: boolean }) {
  const client = useQueryClient();
  const [cursors, setCursors] = useState<string[]>([]);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const query = new URLSearchParams({ limit: '50' });
  const cursor = cursors.at(-1);
  if (cursor) query.set('cursor', cursor);
  const list = useQuery({
    queryKey: ['categories', query.toString()],
    queryFn: () => get<Page>(`/categories?${query}`),
    placeholderData: keepPreviousData,
  });
  const changed = () => client.invalidateQueries({ queryKey: ['categories'] });
  const save = useMutation({
    mutationFn: () =>
      mutate<CategoryItem>('PUT', `/categories/${encodeURIComponent(draft.name.trim())}`, {
        ...(draft.description.trim() ? { description: draft.description.trim() } : {}),
        required: draft.required,
        defaultChannels: toChoices(draft.defaults),
      }),
    onSuccess: () => {
      setDraft(EMPTY);
      void changed();
    },
  });
  const remove = useMutation({
    mutationFn: (name: string) => mutate<null>('DELETE', `/categories/${encodeURIComponent(name)}`),
    onSuccess: () => void changed(),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const items = list.data?.items ?? [];
  return (
    <section>
      <h1>Categories</h1>
      <p className="muted">
        A notification names its category; a recipient's choices for it come first, then its choices for the
        channel, then the category's defaults. Required categories are always sent.
      </p>
      {props.admin ? (
        <form className="card form" onSubmit={submit}>
          <h2>Declare or edit a category</h2>
          <div className="row">
            <label>
              Name
              <input
                name="name"
                value={draft.name}
                placeholder="marketing"
                required
                onChange={(e) => setDraft({ ...draft, name: e.target.value })}
              />
            </label>
            <label>
              Description
              <input
                name="description"
                value={draft.description}
                placeholder="shown on the preferences page"
                onChange={(e) => setDraft({ ...draft, description: e.target.value })}
              />
            </label>
            <label className="inline">
              <input
                type="checkbox"
                checked={draft.required}
                onChange={(e) => setDraft({ ...draft, required: e.target.checked })}
              />
              Required (ignores opt-outs)
            </label>
          </div>
          <div className="row">
            {PREFERENCE_CHANNELS.map((channel) => (
              <ChoiceSelect
                key={channel}
                label={`Default for ${channel}`}
                value={draft.defaults[channel]}
                none="no default"
                onChange={(value) =>
                  setDraft({ ...draft, defaults: { ...draft.defaults, [channel]: value } })
                }
              />
            ))}
          </div>
          <div className="row">
            <button type="submit">Save category</button>
            {draft !== EMPTY ? (
              <button type="button" className="secondary" onClick={() => setDraft(EMPTY)}>
                Clear
              </button>
            ) : null}
          </div>
          <ProblemView error={save.error} />
        </form>
      ) : null}
      <div className="card">
        <ProblemView error={list.error ?? remove.error} />
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Description</th>
                <th>Required</th>
                <th>Defaults</th>
                {props.admin ? <th /> : null}
              </tr>
            </thead>
            <tbody>
              {items.map((c) => (
                <tr key={c.name}>
                  <td>{c.name}</td>
                  <td>{c.description}</td>
                  <td>{c.required ? 'yes' : 'no'}</td>
                  <td>{choiceText(c.defaultChannels) || 'none'}</td>
                  {props.admin ? (
                    <td>
                      <button
                        type="button"
                        className="small"
                        aria-label={`Edit ${c.name}`}
                        onClick={() =>
                          setDraft({
                            name: c.name,
                            description: c.description ?? '',
                            required: c.required,
                            defaults: choicesOf(c.defaultChannels),
                          })
                        }
                      >
                        Edit
                      </button>{' '}
                      <button
                        type="button"
                        className="small secondary"
                        aria-label={`Delete ${c.name}`}
                        onClick={() => remove.mutate(c.name)}
                      >
                        Delete
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {items.length === 0 && !list.isLoading ? <p className="muted">No categories yet.</p> : null}
        <CursorPager cursors={cursors} next={list.data?.nextCursor} onChange={setCursors} />
      </div>
    </section>
  );
}
