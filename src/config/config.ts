import { resolve } from 'node:path';
import type { Static } from '@sinclair/typebox';
import { ConfigError, type Env, readSection } from './read.ts';
import { AuthSchema, DispatchSchema, FIXED, ProvidersSchema, ServerSchema, TracingSchema } from './schema.ts';

export { ConfigError } from './read.ts';
export { JWT_ALGS, type JwtAlg, ROLES, type Role } from './schema.ts';

/**
 * The one validated view of the environment, typed by the schemas in schema.ts. Built by
 * `loadConfig`; nothing else reads `process.env`.
 */
export type Config = Omit<Static<typeof ServerSchema>, 'logFormat'> &
  Pick<typeof FIXED, 'ingestMaxBatch' | 'batchThreads' | 'webhookBodyLimit' | 'preferencesWindowSeconds'> & {
    /** HERALD_LOG_FORMAT with `auto` resolved for this process's stdout. */
    logFormat: 'pretty' | 'json';
    auth: Static<typeof AuthSchema> & Pick<typeof FIXED, 'loginWindowSeconds'>;
    dispatch: Static<typeof DispatchSchema> & { circuit: CircuitOptions; maxHolds: number };
    providers: Static<typeof ProvidersSchema>;
    /** The OTEL_* variables (docs/tracing.md); absent in a Config made by hand: no tracing. */
    tracing?: Static<typeof TracingSchema>;
  };

/** Circuit-breaker tuning (dispatch/circuit.ts). */
export type CircuitOptions = { -readonly [K in keyof (typeof FIXED)['circuit']]: number };

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** Reads and validates the environment once; throws ConfigError naming the variable on bad input. */
export function loadConfig(env: Env): Config {
  const server = readSection(env, ServerSchema);
  const auth = readSection(env, AuthSchema);
  const providers = readSection(env, ProvidersSchema);
  if (server.databaseUrl && !/^postgres(ql)?:\/\//.test(server.databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with postgres:// or postgresql://');
  }
  if (Boolean(auth.adminEmail) !== Boolean(auth.adminPassword)) {
    throw new ConfigError(
      'HERALD_ADMIN_PASSWORD',
      'HERALD_ADMIN_EMAIL and HERALD_ADMIN_PASSWORD go together',
    );
  }
  if (providers.smtpFallbackUrl && !providers.smtp) {
    throw new ConfigError('SMTP_FALLBACK_URL', 'needs SMTP_URL (the primary) and EMAIL_FROM');
  }
  if (new Set(providers.smsProviders).size !== providers.smsProviders.length) {
    throw new ConfigError('HERALD_SMS_PROVIDERS', 'names a provider twice');
  }
  // Defaults computed from other variables (the schema marks them `derived`).
  const host = server.host.includes(':') ? `[${server.host}]` : server.host;
  const localApi = `http://${host}:${server.apiPort}`;
  const publicUrl = trimSlash(server.publicUrl ?? `http://127.0.0.1:${server.apiPort}`);
  for (const p of [providers.twilio, providers.fcm]) if (p) p.apiBase = trimSlash(p.apiBase);
  return {
    ...server,
    dataDir: resolve(server.dataDir),
    publicUrl,
    // Decided here, in the main thread: a worker thread's stdout is never a terminal.
    logFormat: server.logFormat === 'auto' ? (process.stdout.isTTY ? 'pretty' : 'json') : server.logFormat,
    authUrl: trimSlash(server.authUrl ?? localApi),
    apiUrl: trimSlash(server.apiUrl ?? localApi),
    ingestMaxBatch: FIXED.ingestMaxBatch,
    batchThreads: FIXED.batchThreads,
    webhookBodyLimit: FIXED.webhookBodyLimit,
    preferencesWindowSeconds: FIXED.preferencesWindowSeconds,
    auth: { ...auth, issuer: auth.issuer ?? publicUrl, loginWindowSeconds: FIXED.loginWindowSeconds },
    dispatch: {
      ...readSection(env, DispatchSchema),
      circuit: { ...FIXED.circuit },
      maxHolds: FIXED.maxHolds,
    },
    providers,
    tracing: readSection(env, TracingSchema),
  };
}
