import type { Content } from '../channels.ts';
import type { NotificationRecord } from '../notifications/model.ts';
import type { InboxEntry } from '../notifications/status.ts';

/** Most characters of an `inapp` message's fields, at acceptance and once rendered. */
export const INBOX_LIMITS = { title: 1000, body: 4000, url: 2048 } as const;

/**
 * Why a link cannot be an inbox message's `url`, or undefined when it can: an http(s) URL or a
 * path of the caller's app (`/orders/42`). Anything else (`javascript:`, `data:`, a
 * protocol-relative `//host`) would run or leave the app from the recipient's own page.
 */
export function inboxUrlProblem(url: string): string | undefined {
  if (url.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\')) return undefined;
  if (/^https?:\/\/[^/\s]/i.test(url) && !/\s/.test(url)) return undefined;
  return 'must be an http(s) URL or a path starting with /';
}

/**
 * The inbox message a rendered `inapp` notification stores, or why it cannot be stored (a
 * rendered field empty, too long, or a link that is not one): the notification then fails,
 * as a template that fails to render does.
 */
export function inboxEntryOf(record: NotificationRecord, content: Content): InboxEntry | { problem: string } {
  const title = content.title ?? '';
  const body = content.body ?? '';
  const url = content.url === undefined || content.url === '' ? null : content.url.trim();
  for (const [field, value] of [
    ['title', title],
    ['body', body],
  ] as const) {
    if (value.length === 0) return { problem: `the rendered ${field} is empty` };
    if (value.length > INBOX_LIMITS[field])
      return { problem: `the rendered ${field} is longer than ${INBOX_LIMITS[field]} characters` };
  }
  if (url !== null) {
    if (url.length > INBOX_LIMITS.url)
      return { problem: `the rendered url is longer than ${INBOX_LIMITS.url} characters` };
    const problem = inboxUrlProblem(url);
    if (problem) return { problem: `the rendered url ${problem}` };
  }
  return {
    recipientId: record.person?.id ?? (record.recipient.id as string),
    title,
    body,
    url,
    data: content.data ?? null,
    category: record.category,
  };
}
