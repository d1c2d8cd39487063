import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { get, mutate, ProblemError } from '../api.ts';
import { ChannelSelect } from '../components/channel-select.tsx';
import { LocaleVariants } from '../components/locale-variants.tsx';
import { ContentPreview } from '../components/previews.tsx';
import { ProblemView } from '../components/problem.tsx';
import type { TemplateView as Template } from '../contract.ts';
import { type Fields, renderDraft } from '../liquid.ts';

const FIELDS: Record<string, (keyof Fields)[]> = {
  email: ['subject', 'text', 'html'],
  sms: ['text'],
  push: ['title', 'body'],
  inapp: ['title', 'body', 'url'],
};

const EMPTY = {
  key: '',
  channel: 'email',
  subject: '',
  text: '',
  html: '',
  title: '',
  body: '',
  url: '',
  category: '',
};

/** The sample variables typed in the editor, as the API takes them (a JSON object). */
function sampleVariables(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text || '{}');
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ProblemError({
      status: 400,
      title: 'Sample variables are not a JSON object',
      errors: [{ path: 'body/sampleVariables', message: 'must be a JSON object' }],
    });
  return value as Record<string, unknown>;
}

/** The template editor: fields on the left, a live preview (rendered as you type) on the right. */
export function TemplatesPage() {
  const client = useQueryClient();
  const list = useQuery({
    queryKey: ['templates'],
    queryFn: () => get<{ items: Template[] }>('/templates?limit=500'),
  });
  const [draft, setDraft] = useState<typeof EMPTY>(EMPTY);
  const [existing, setExisting] = useState(false);
  // The template's own sample variables (saved with it), so a valid template previews clean.
  const [variables, setVariables] = useState('{}');
  const [preview, setPreview] = useState<{ content?: Fields; error?: string }>({});

  useEffect(() => {
    const handle = setTimeout(() => {
      let vars: Record<string, unknown>;
      try {
        vars = JSON.parse(variables || '{}');
      } catch {
        setPreview({ error: 'Variables are not valid JSON.' });
        return;
      }
      const fields: Fields = {};
      for (const f of FIELDS[draft.channel] ?? []) fields[f] = draft[f];
      renderDraft(fields, vars)
        .then((content) => setPreview({ content }))
        .catch((e: Error) => setPreview({ error: e.message }));
    }, 200);
    return () => clearTimeout(handle);
  }, [draft, variables]);

  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, unknown> = { sampleVariables: sampleVariables(variables) };
      for (const f of FIELDS[draft.channel] ?? []) if (draft[f]) body[f] = draft[f];
      // An empty category field is no default: a new version without one, a new template without.
      return existing
        ? mutate<Template>('PUT', `/templates/${encodeURIComponent(draft.key)}`, {
            channel: draft.channel,
            ...body,
            category: draft.category || null,
          })
        : mutate<Template>('POST', '/templates', {
            key: draft.key,
            channel: draft.channel,
            ...body,
            ...(draft.category ? { category: draft.category } : {}),
          });
    },
    onSuccess: () => {
      setExisting(true);
      void client.invalidateQueries({ queryKey: ['templates'] });
    },
  });
  const remove = useMutation({
    mutationFn: () => mutate('DELETE', `/templates/${encodeURIComponent(draft.key)}`),
    onSuccess: () => {
      setDraft(EMPTY);
      setExisting(false);
      void client.invalidateQueries({ queryKey: ['templates'] });
    },
  });
  // The authoritative check: the server renders the saved version with these variables.
  const serverPreview = useMutation({
    mutationFn: () =>
      mutate<{ version: number; content: Fields }>(
        'POST',
        `/templates/${encodeURIComponent(draft.key)}/preview`,
        { variables: sampleVariables(variables) },
      ),
  });
  const open = (t: Template) => {
    const { sampleVariables: samples, locales: _variants, category, ...fields } = t;
    setDraft({ ...EMPTY, ...fields, key: t.key, channel: t.channel, category: category ?? '' });
    setVariables(JSON.stringify(samples ?? {}, null, 2));
    setExisting(true);
    save.reset();
    serverPreview.reset();
  };
  const set = (name: keyof typeof EMPTY) => (e: { target: { value: string } }) =>
    setDraft({ ...draft, [name]: e.target.value });

  return (
    <section>
      <h1>Templates</h1>
      <ProblemView error={list.error} />
      <div className="split">
        <div className="card list">
          <button
            type="button"
            onClick={() => {
              setDraft(EMPTY);
              setVariables('{}');
              setExisting(false);
            }}
          >
            New template
          </button>
          <ul>
            {(list.data?.items ?? []).map((t) => (
              <li key={t.key}>
                <button type="button" className="link" onClick={() => open(t)}>
                  {t.key}
                </button>{' '}
                <span className="muted">
                  {t.channel} v{t.version}
                </span>
              </li>
            ))}
          </ul>
        </div>
        <div className="card">
          <form
            className="form"
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate();
            }}
          >
            <div className="row">
              <label>
                Key
                <input name="key" value={draft.key} onChange={set('key')} disabled={existing} required />
              </label>
              <ChannelSelect
                name="channel"
                value={draft.channel}
                onChange={(value) => setDraft({ ...draft, channel: value })}
              />
            </div>
            {(FIELDS[draft.channel] ?? []).map((f) =>
              f === 'html' || f === 'text' || f === 'body' ? (
                <label key={f}>
                  {f}
                  <textarea name={f} rows={f === 'html' ? 8 : 3} value={draft[f]} onChange={set(f)} />
                </label>
              ) : (
                <label key={f}>
                  {f}
                  <input name={f} value={draft[f]} onChange={set(f)} />
                </label>
              ),
            )}
            <label>
              Default category (a notification naming none takes it)
              <input name="category" value={draft.category} onChange={set('category')} placeholder="none" />
            </label>
            <label>
              Sample variables (JSON, saved with the template)
              <textarea
                name="variables"
                rows={4}
                value={variables}
                onChange={(e) => setVariables(e.target.value)}
              />
            </label>
            <div className="row">
              <button type="submit" disabled={save.isPending}>
                {existing ? 'Save new version' : 'Create'}
              </button>
              {existing ? (
                <button type="button" className="secondary" onClick={() => remove.mutate()}>
                  Delete
                </button>
              ) : null}
              {save.isSuccess ? <span className="ok">Saved.</span> : null}
            </div>
            <ProblemView error={save.error ?? remove.error} />
          </form>
          {existing ? (
            <LocaleVariants
              key={draft.key}
              templateKey={draft.key}
              fields={FIELDS[draft.channel] ?? []}
              locales={list.data?.items.find((t) => t.key === draft.key)?.locales ?? []}
              onChanged={() => void client.invalidateQueries({ queryKey: ['templates'] })}
            />
          ) : null}
        </div>
        <div className="card">
          <h2>Live preview</h2>
          {preview.error ? (
            <div className="problem">{preview.error}</div>
          ) : (
            <ContentPreview channel={draft.channel} content={preview.content ?? {}} />
          )}
          {existing ? (
            <div className="server-preview">
              <button type="button" className="secondary" onClick={() => serverPreview.mutate()}>
                Preview the saved version on the server
              </button>
              <ProblemView error={serverPreview.error} />
              {serverPreview.data ? (
                <>
                  <p className="muted">Server rendering of version {serverPreview.data.version}:</p>
                  <ContentPreview channel={draft.channel} content={serverPreview.data.content} />
                </>
              ) : null}
            </div>
          ) : null}
        </div>
      </div>
    </section>
  );
}
