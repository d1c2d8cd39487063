import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { mutate } from '../api.ts';
import type { TemplateView } from '../contract.ts';
import type { Fields } from '../liquid.ts';
import { ProblemView } from './problem.tsx';

type Variant = TemplateView['locales'][number];

const EMPTY = { locale: '', subject: '', text: '', html: '', title: '', body: '', url: '' };

/**
 * A saved template's locale variants (docs/localization.md): the list, and a form that adds or
 * replaces one (a locale and the channel's fields) or deletes it. Each change saves a new version
 * of the template; `onChanged` reloads it.
 */
export function LocaleVariants(props: {
  templateKey: string;
  fields: (keyof Fields)[];
  locales: Variant[];
  onChanged: () => void;
}) {
  const [draft, setDraft] = useState(EMPTY);
  const path = (locale: string) =>
    `/templates/${encodeURIComponent(props.templateKey)}/locales/${encodeURIComponent(locale)}`;
  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, string> = {};
      for (const f of props.fields) if (draft[f]) body[f] = draft[f];
      return mutate<TemplateView>('PUT', path(draft.locale.trim()), body);
    },
    onSuccess: props.onChanged,
  });
  const remove = useMutation({
    mutationFn: (locale: string) => mutate('DELETE', path(locale)),
    onSuccess: () => {
      setDraft(EMPTY);
      props.onChanged();
    },
  });
  const edit = (v: Variant) => {
    setDraft({
      locale: v.locale,
      subject: v.subject ?? '',
      text: v.text ?? '',
      html: v.html ?? '',
      title: v.title ?? '',
      body: v.body ?? '',
      url: v.url ?? '',
    });
    save.reset();
  };
  const set = (name: keyof typeof EMPTY) => (e: { target: { value: string } }) =>
    setDraft({ ...draft, [name]: e.target.value });

  return (
    <section className="locale-variants" aria-label="Locale variants">
      <h2>Locale variants</h2>
      {props.locales.length === 0 ? (
        <p className="muted">None: every notification renders the template itself.</p>
      ) : (
        <ul>
          {props.locales.map((v) => (
            <li key={v.locale} data-testid={`variant-${v.locale}`}>
              <code>{v.locale}</code>{' '}
              <button type="button" className="link" onClick={() => edit(v)}>
                Edit {v.locale}
              </button>{' '}
              <button type="button" className="link" onClick={() => remove.mutate(v.locale)}>
                Delete {v.locale}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <label>
          Locale (BCP 47, such as fr-CA)
          <input name="variant-locale" value={draft.locale} onChange={set('locale')} required />
        </label>
        {props.fields.map((f) =>
          f === 'subject' || f === 'title' ? (
            <label key={f}>
              Variant {f}
              <input name={`variant-${f}`} value={draft[f]} onChange={set(f)} />
            </label>
          ) : (
            <label key={f}>
              Variant {f}
              <textarea name={`variant-${f}`} rows={3} value={draft[f]} onChange={set(f)} />
            </label>
          ),
        )}
        <div className="row">
          <button type="submit" disabled={save.isPending}>
            Save variant
          </button>
          {save.isSuccess ? <span className="ok">Variant saved.</span> : null}
        </div>
        <ProblemView error={save.error ?? remove.error} />
      </form>
    </section>
  );
}
