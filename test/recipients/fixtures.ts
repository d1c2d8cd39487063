import { authHeader, authTestApp } from '../helpers/auth.ts';
import { type PostgresServer, sharedPostgres } from '../helpers/postgres.ts';

export const PUBLIC_URL = 'https://herald.example.com';

/** The databases every recipients route test runs on. */
export const KINDS = ['sqlite', 'postgres'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * An inject-ready app on a fresh SQLite file or a fresh PostgreSQL database, with tokens: an
 * admin, a viewer, an admin of another tenant, and service clients holding only one recipients scope.
 */
export async function recipientsApp(kind: Kind) {
  let server: PostgresServer | undefined;
  const env: Record<string, string> = { HERALD_PUBLIC_URL: PUBLIC_URL };
  if (kind === 'postgres') {
    server = await sharedPostgres();
    env.DATABASE_URL = await server.createDatabase('herald_recipients');
  }
  const t = await authTestApp(env);
  return {
    ...t,
    admin: await authHeader(t.deps, { role: 'admin' }),
    viewer: await authHeader(t.deps, { role: 'viewer' }),
    other: await authHeader(t.deps, { role: 'admin', tenant: 'other' }),
    reader: await authHeader(t.deps, { scopes: ['recipients:read'] }),
    writer: await authHeader(t.deps, { scopes: ['recipients:write'] }),
  };
}

export type RecipientsApp = Awaited<ReturnType<typeof recipientsApp>>;

/** A Web Push subscription as section 3 takes it. */
export const subscription = (endpoint = 'https://push.example.com/send/abcdef123456') => ({
  subscription: {
    endpoint,
    keys: {
      p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
      auth: 'tBHItJI5svbpez7KI4CCXg',
    },
  },
});

export const device = (n = 0) => ({ deviceToken: `a1b2c3d4e5f6a7b8c9d0${n}`, platform: 'apns' as const });
