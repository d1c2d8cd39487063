import type { Recipient } from '../../notifications/model.ts';
import type { SendResult } from '../types.ts';

/** What the sandbox does for one attempt, decided from the recipient (docs/sandbox.md). */
export type Injection = { result: SendResult } | { delayMs: number } | undefined;

// E.164 numbers cannot carry words, so SMS uses the unassigned country code +999 with digit codes.
const PHONE = /^\+9990([1-5])(\d*)$/;

/** The text the word patterns are looked for in: email, device token or push endpoint. */
function recipientText(recipient: Recipient): string {
  return (recipient.email ?? recipient.deviceToken ?? recipient.subscription?.endpoint ?? '').toLowerCase();
}

function transient(detail: string, retryAfterMs?: number): Injection {
  return { result: { ok: false, kind: 'transient', detail, retryAfterMs } };
}

function fromCode(code: string, digits: string, attempt: number): Injection {
  const n = Number(digits.slice(0, code === '3' ? 2 : code === '5' ? 4 : 1) || '1');
  return decide(
    { '1': 'transient', '2': 'permanent', '3': 'retry-after', '4': 'config', '5': 'delay' }[code],
    n,
    attempt,
  );
}

function decide(kind: string | undefined, n: number, attempt: number): Injection {
  switch (kind) {
    case 'transient':
      return attempt <= n ? transient(`sandbox: injected transient failure ${attempt} of ${n}`) : undefined;
    case 'permanent':
      return { result: { ok: false, kind: 'permanent', detail: 'sandbox: injected permanent failure' } };
    case 'retry-after':
      return attempt === 1 ? transient(`sandbox: injected 429, Retry-After ${n} s`, n * 1000) : undefined;
    case 'config':
      return { result: { ok: false, kind: 'config', detail: 'sandbox: injected configuration failure' } };
    case 'delay':
      return { delayMs: n };
    default:
      return undefined;
  }
}

/**
 * The failure (or delay) injected for this recipient at this attempt, or undefined to deliver.
 * Word patterns (email local part, device token, push endpoint): `fail-transient-N`,
 * `fail-permanent`, `fail-retry-after-S`, `fail-config`, `delay-MS`.
 */
export function injectedFailure(recipient: Recipient, attempt: number): Injection {
  if (recipient.phone) {
    const match = PHONE.exec(recipient.phone);
    return match ? fromCode(match[1] as string, match[2] as string, attempt) : undefined;
  }
  const text = recipientText(recipient);
  if (!text.includes('fail-') && !text.includes('delay-')) return undefined;
  const match = /(?:fail-(transient|retry-after)-(\d+)|fail-(permanent|config)|(delay)-(\d+))/.exec(text);
  if (!match) return undefined;
  const kind = match[1] ?? match[3] ?? match[4];
  return decide(kind, Number(match[2] ?? match[5] ?? 1), attempt);
}
