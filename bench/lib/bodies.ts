/** Request bodies the scenarios send: a realistic ~200-byte email notification with inline content. */

export type BenchPriority = 'CRITICAL' | 'HIGH' | 'NORMAL' | 'LOW';

/** One notification of about `bytes` bytes of JSON (200 by default, the figure). */
export function notification(priority: BenchPriority = 'NORMAL', bytes = 200): Record<string, unknown> {
  const base = {
    channel: 'email',
    priority,
    recipient: { email: 'ada@example.com' },
    content: { subject: 'Your sign-in code', text: '' },
    metadata: { bench: true },
  };
  const padding = Math.max(0, bytes - JSON.stringify(base).length);
  base.content.text = 'Your code is 482913. '.repeat(Math.ceil(padding / 21)).slice(0, padding);
  return base;
}

/** A POST /notifications/batch body of `size` notifications. */
export function batch(size: number, priority: BenchPriority = 'NORMAL'): string {
  const one = notification(priority);
  return JSON.stringify({ notifications: Array.from({ length: size }, () => one) });
}
