import type { App } from '../../src/http/types.ts';
import type { HeraldDeps } from '../../src/main.ts';
import { authHeader, authTestApp } from '../helpers/auth.ts';

/** A notification request body. */
export type Body = Record<string, unknown>;

/** Small factories for notification bodies, one per channel. */
export const email = (overrides: Body = {}): Body => ({
  channel: 'email',
  recipient: { email: 'ada@example.com' },
  content: { subject: 'Hello {{ name }}', text: 'Hi {{ name }}' },
  variables: { name: 'Ada' },
  ...overrides,
});
export const sms = (overrides: Body = {}): Body => ({
  channel: 'sms',
  recipient: { phone: '+15550101234' },
  content: { text: 'Your code is 123456' },
  ...overrides,
});
export const webPush = (overrides: Body = {}): Body => ({
  channel: 'push',
  recipient: {
    subscription: {
      endpoint: 'https://push.example.com/send/abcdef123456',
      keys: {
        p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
        auth: 'tBHItJI5svbpez7KI4CCXg',
      },
    },
  },
  content: { title: 'Hi', body: 'There' },
  ...overrides,
});
export const devicePush = (overrides: Body = {}): Body => ({
  channel: 'push',
  recipient: { deviceToken: 'a1b2c3d4e5f6a7b8c9d0', platform: 'apns' },
  content: { title: 'Hi', body: 'There' },
  ...overrides,
});

/** An inject-ready app on a fresh SQLite file, with tokens for two tenants. */
export async function notificationsApp(env: Record<string, string> = {}) {
  const t = await authTestApp(env);
  const admin = await authHeader(t.deps, { role: 'admin' });
  const sender = await authHeader(t.deps, { role: 'sender' });
  const viewer = await authHeader(t.deps, { role: 'viewer' });
  const other = await authHeader(t.deps, { role: 'admin', tenant: 'other' });
  return { ...t, admin, sender, viewer, other };
}

/** Rows in the notifications table, to prove that nothing was stored. */
export function countRows(deps: HeraldDeps): number {
  const db = (deps.store as unknown as { db: { prepare(sql: string): { get(): unknown } } }).db;
  return (db.prepare('SELECT COUNT(*) AS n FROM notifications').get() as { n: number }).n;
}

/** POST /notifications as the given headers. */
export function send(
  app: App,
  headers: Record<string, string>,
  body: unknown,
  extra: Record<string, string> = {},
) {
  return app.inject({
    method: 'POST',
    url: '/notifications',
    headers: { ...headers, ...extra },
    payload: body as object,
  });
}
