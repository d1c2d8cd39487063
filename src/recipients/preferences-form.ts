import { HeraldError } from '../errors.ts';
import { escapeHtml } from '../http/html-page.ts';
import {
  CATEGORY_NAME,
  type CategoryRecord,
  type ChannelChoices,
  optedOut,
  PREFERENCE_CHANNELS,
  type PreferenceChannel,
  type Preferences,
} from './model.ts';

/**
 * The hosted preferences page's form (docs/preferences.md): a checkbox per category and channel named
 * `<category>.<channel>`, and `channels.<channel>` for a channel as a whole, checked when a
 * notification would be sent. The page and the sender decide by the same rule (`optedOut`).
 */

/** The prefix of the boxes for a channel as a whole; no category may take this name. */
export const WHOLE_CHANNEL = 'channels';

/**
 * A hidden field naming each category the page showed with boxes: a post sets those only, so a
 * category declared after the page was opened keeps its defaults instead of being turned off.
 * A post without it (a form written by hand) sets every declared category.
 */
const SHOWN = 'shown';

const LABELS: Record<PreferenceChannel, string> = {
  email: 'Email',
  sms: 'SMS',
  push: 'Push',
  inapp: 'In-app',
};

/** Whether a (non-CRITICAL) notification of `declared` (none: no category) on `channel` goes. */
const sent = (preferences: Preferences, channel: PreferenceChannel, declared?: CategoryRecord) =>
  optedOut({ priority: 'NORMAL', channel, category: declared?.name ?? null, declared, preferences }) === null;

/** One row of boxes; `heading` and `note` are text (a category's name and description), escaped here. */
function row(
  heading: string,
  note: string,
  boxes: Array<{ name: string; checked: boolean; disabled: boolean }>,
) {
  const cells = boxes.map(
    (box, i) =>
      `<td><input type="checkbox" name="${escapeHtml(box.name)}" aria-label="${escapeHtml(`${heading}: ${LABELS[PREFERENCE_CHANNELS[i] as PreferenceChannel]}`)}"` +
      `${box.checked ? ' checked' : ''}${box.disabled ? ' disabled' : ''}></td>`,
  );
  return `<tr><th scope="row">${escapeHtml(heading)}${note ? `<small>${escapeHtml(note)}</small>` : ''}</th>${cells.join('')}</tr>`;
}

/** The page's body: the form, with a notice when it was just saved. */
export function preferencesPageBody(
  categories: readonly CategoryRecord[],
  preferences: Preferences,
  saved: boolean,
): string {
  const categoryRows = categories.map((category) => {
    const note = [category.description ?? '', category.required ? 'Always sent.' : '']
      .filter(Boolean)
      .join(' ');
    return row(
      category.name,
      note,
      PREFERENCE_CHANNELS.map((channel) => ({
        name: `${category.name}.${channel}`,
        checked: sent(preferences, channel, category),
        disabled: category.required,
      })),
    );
  });
  const whole = row(
    'Other messages',
    'Messages of no category, or of one not listed here.',
    PREFERENCE_CHANNELS.map((channel) => ({
      name: `${WHOLE_CHANNEL}.${channel}`,
      checked: sent(preferences, channel),
      disabled: false,
    })),
  );
  const shown = categories
    .filter((c) => !c.required)
    .map((c) => `<input type="hidden" name="${SHOWN}" value="${escapeHtml(c.name)}">`)
    .join('');
  return (
    '<h1>Notification preferences</h1>' +
    (saved ? '<p class="notice" role="status">Your choices are saved.</p>' : '') +
    '<p>Tick what you want to receive, and how. Important messages about your account are always sent.</p>' +
    '<form method="post"><table><thead><tr><th scope="col">Messages</th>' +
    PREFERENCE_CHANNELS.map((c) => `<th scope="col">${LABELS[c]}</th>`).join('') +
    `</tr></thead><tbody>${categoryRows.join('')}${whole}</tbody></table>${shown}` +
    '<button type="submit">Save</button></form>'
  );
}

/** What a post of the form says: the boxes that were checked, and the categories shown. */
export interface PreferencesForm {
  checked: ReadonlySet<string>;
  shown: ReadonlySet<string> | undefined;
}

const notABox = (name: string) =>
  new HeraldError('VALIDATION_FAILED', 'The form has a field the preferences page does not have.', {
    errors: [
      {
        path: `body/${name.slice(0, 100)}`,
        message: `must be a box of the preferences page: <category>.<channel> or ${WHOLE_CHANNEL}.<channel>, the channel one of ${PREFERENCE_CHANNELS.join(', ')}`,
      },
    ],
  });

/**
 * Reads an `application/x-www-form-urlencoded` post of the form (as a browser sends it: the
 * checked boxes only, whatever their values). A field the page never has is a 400.
 */
export function readPreferencesForm(body: string): PreferencesForm {
  const checked = new Set<string>();
  let shown: Set<string> | undefined;
  for (const [name, value] of new URLSearchParams(body)) {
    if (name === SHOWN) {
      if (!CATEGORY_NAME.test(value)) throw notABox(`${SHOWN}=${value}`);
      shown ??= new Set();
      shown.add(value);
      continue;
    }
    const dot = name.lastIndexOf('.');
    const category = name.slice(0, dot);
    const channel = name.slice(dot + 1);
    if (
      dot < 0 ||
      !CATEGORY_NAME.test(category) ||
      !PREFERENCE_CHANNELS.includes(channel as PreferenceChannel)
    ) {
      throw notABox(name);
    }
    checked.add(name);
  }
  return { checked, shown };
}

/**
 * The recipient's preferences after a post: every box the page showed becomes a choice, `true`
 * when checked and `false` when not; required categories (shown disabled, never posted) and
 * categories not shown keep what they had.
 */
export function preferencesFromForm(
  current: Preferences,
  declared: readonly CategoryRecord[],
  form: PreferencesForm,
): Preferences {
  const choices = (prefix: string): ChannelChoices =>
    Object.fromEntries(PREFERENCE_CHANNELS.map((c) => [c, form.checked.has(`${prefix}.${c}`)]));
  const categories = new Map(Object.entries(current.categories));
  for (const category of declared) {
    if (category.required || (form.shown && !form.shown.has(category.name))) continue;
    categories.set(category.name, choices(category.name));
  }
  return { channels: choices(WHOLE_CHANNEL), categories: Object.fromEntries(categories) };
}
