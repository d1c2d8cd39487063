import { isIP } from 'node:net';
import { resolve } from 'node:path';
import {
  ConfigError,
  type Env,
  readBool,
  readInt,
  readList,
  readOneOf,
  readString,
  readUrl,
} from './read.ts';

export { ConfigError } from './read.ts';

/** The roles one Herald process can run (API.md section 1). */
export const ROLES = ['auth', 'api', 'worker', 'gateway'] as const;
export type Role = (typeof ROLES)[number];

export const JWT_ALGS = ['ES256', 'EdDSA', 'RS256'] as const;
export type JwtAlg = (typeof JWT_ALGS)[number];

/** The one validated view of the environment. Built by `loadConfig`; nothing else reads `process.env`. */
export interface Config {
  dataDir: string;
  databaseUrl: string | undefined;
  /** Connections one process keeps to PostgreSQL (HERALD_DB_POOL_SIZE); workers add one for LISTEN. */
  databasePoolSize: number;
  keyEncryptionSecret: string | undefined;
  roles: Role[];
  host: string;
  apiPort: number;
  gatewayPort: number;
  publicUrl: string;
  authUrl: string;
  apiUrl: string;
  trustedProxies: string[];
  logLevel: string;
  /** Largest accepted request body in bytes (API.md section 3: 64 KiB by default). */
  bodyLimit: number;
  /** Largest accepted batch body in bytes (1000 notifications). */
  batchBodyLimit: number;
  /** Notifications waiting for the next group commit beyond which ingest answers 503 (load shedding). */
  ingestMaxPending: number;
  auth: {
    issuer: string;
    audience: string;
    alg: JwtAlg;
    accessTtl: number;
    refreshTtl: number;
    refreshMaxAge: number;
    loginMaxFailures: number;
    loginMaxFailuresPerAddress: number;
    loginWindowSeconds: number;
    jwksUrl: string | undefined;
    /** How often a process re-reads the signing keys, so a rotation elsewhere is seen (ms). */
    keyReloadMs: number;
    /** Least time between two fetches of HERALD_JWKS_URL for an unknown kid (ms). */
    jwksCooldownMs: number;
    verifyCacheSize: number;
    adminEmail: string | undefined;
    adminPassword: string | undefined;
    oidc: { issuer: string; clientId: string; clientSecret: string | undefined } | undefined;
  };
  dispatch: {
    leaseMs: number;
    retryMaxAttempts: number;
    retryBaseMs: number;
    retryMaxMs: number;
    retryMaxMsCritical: number;
    concurrency: number;
    claimBatch: number;
    pollMs: number;
  };
  providers: {
    smtp: { url: string; from: string } | undefined;
    twilio: { accountSid: string; authToken: string; from: string; apiBase: string } | undefined;
    smpp: { url: string; sourceAddr: string } | undefined;
    vapid: { publicKey: string; privateKey: string; subject: string } | undefined;
    apns: { keyFile: string; keyId: string; teamId: string; topic: string; host: string } | undefined;
    fcm: { serviceAccountFile: string; apiBase: string } | undefined;
    sendgridWebhookPublicKey: string | undefined;
    mailgunWebhookSigningKey: string | undefined;
    /** Sandbox failure injection, e.g. `fail-transient-2@` fails twice then succeeds (see docs/sandbox.md). */
    sandboxFailures: boolean;
  };
}

/** Reads and validates the environment once; throws ConfigError naming the variable on bad input. */
export function loadConfig(env: Env): Config {
  const apiPort = readInt(env, 'HERALD_API_PORT', 8080, 0, 65535);
  const gatewayPort = readInt(env, 'HERALD_GATEWAY_PORT', 3000, 0, 65535);
  const host = readString(env, 'HERALD_HOST') ?? '127.0.0.1';
  const localApi = `http://${host.includes(':') ? `[${host}]` : host}:${apiPort}`;
  const publicUrl = readUrl(env, 'HERALD_PUBLIC_URL') ?? `http://127.0.0.1:${apiPort}`;
  const databaseUrl = readUrl(env, 'DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with postgres:// or postgresql://');
  }
  const roles = readList(env, 'HERALD_ROLES') ?? [...ROLES];
  for (const role of roles) {
    if (!(ROLES as readonly string[]).includes(role)) {
      throw new ConfigError('HERALD_ROLES', `unknown role "${role}"; expected some of ${ROLES.join(',')}`);
    }
  }
  const oidcIssuer = readUrl(env, 'HERALD_OIDC_ISSUER');
  const oidcClientId = readString(env, 'HERALD_OIDC_CLIENT_ID');
  if (oidcIssuer && !oidcClientId)
    throw new ConfigError('HERALD_OIDC_CLIENT_ID', 'is required with HERALD_OIDC_ISSUER');
  const adminEmail = readString(env, 'HERALD_ADMIN_EMAIL');
  const adminPassword = readString(env, 'HERALD_ADMIN_PASSWORD');
  if (Boolean(adminEmail) !== Boolean(adminPassword)) {
    throw new ConfigError(
      'HERALD_ADMIN_PASSWORD',
      'HERALD_ADMIN_EMAIL and HERALD_ADMIN_PASSWORD go together',
    );
  }
  return {
    dataDir: resolve(readString(env, 'HERALD_DATA_DIR') ?? './data'),
    databaseUrl,
    databasePoolSize: readInt(env, 'HERALD_DB_POOL_SIZE', 10, 1, 1000),
    keyEncryptionSecret: readString(env, 'HERALD_KEY_ENCRYPTION_SECRET'),
    roles: roles as Role[],
    host,
    apiPort,
    gatewayPort,
    publicUrl: publicUrl.replace(/\/+$/, ''),
    authUrl: (readUrl(env, 'HERALD_AUTH_URL') ?? localApi).replace(/\/+$/, ''),
    apiUrl: (readUrl(env, 'HERALD_API_URL') ?? localApi).replace(/\/+$/, ''),
    trustedProxies: readTrustedProxies(env),
    logLevel: readOneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      'info',
    ),
    bodyLimit: readInt(env, 'HERALD_BODY_LIMIT', 64 * 1024, 1024, 16 * 1024 * 1024),
    batchBodyLimit: readInt(env, 'HERALD_BATCH_BODY_LIMIT', 8 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    ingestMaxPending: readInt(env, 'HERALD_INGEST_MAX_PENDING', 100_000, 1, 10_000_000),
    auth: {
      issuer: readString(env, 'HERALD_JWT_ISSUER') ?? publicUrl.replace(/\/+$/, ''),
      audience: readString(env, 'HERALD_JWT_AUDIENCE') ?? 'herald-api',
      alg: readOneOf(env, 'HERALD_JWT_ALG', JWT_ALGS, 'ES256'),
      accessTtl: readInt(env, 'HERALD_ACCESS_TTL', 600, 1, 86400 * 30),
      refreshTtl: readInt(env, 'HERALD_REFRESH_TTL', 43200, 1, 86400 * 365),
      refreshMaxAge: readInt(env, 'HERALD_REFRESH_MAX_AGE', 7 * 86400, 1, 86400 * 365),
      loginMaxFailures: readInt(env, 'HERALD_LOGIN_MAX_FAILURES', 10, 1, 1_000_000),
      loginMaxFailuresPerAddress: readInt(env, 'HERALD_LOGIN_MAX_FAILURES_PER_ADDRESS', 100, 1, 1_000_000),
      loginWindowSeconds: 15 * 60,
      jwksUrl: readUrl(env, 'HERALD_JWKS_URL'),
      keyReloadMs: readInt(env, 'HERALD_KEY_RELOAD_MS', 60_000, 100, 3_600_000),
      jwksCooldownMs: readInt(env, 'HERALD_JWKS_COOLDOWN_MS', 30_000, 100, 3_600_000),
      verifyCacheSize: readInt(env, 'HERALD_VERIFY_CACHE_SIZE', 10_000, 0, 10_000_000),
      adminEmail,
      adminPassword,
      oidc: oidcIssuer
        ? {
            issuer: oidcIssuer,
            clientId: oidcClientId as string,
            clientSecret: readString(env, 'HERALD_OIDC_CLIENT_SECRET'),
          }
        : undefined,
    },
    dispatch: {
      leaseMs: readInt(env, 'HERALD_LEASE_MS', 30_000, 100, 3_600_000),
      retryMaxAttempts: readInt(env, 'HERALD_RETRY_MAX_ATTEMPTS', 8, 1, 100),
      retryBaseMs: readInt(env, 'HERALD_RETRY_BASE_MS', 2000, 1, 3_600_000),
      retryMaxMs: readInt(env, 'HERALD_RETRY_MAX_MS', 30 * 60_000, 1, 86_400_000),
      retryMaxMsCritical: readInt(env, 'HERALD_RETRY_MAX_MS_CRITICAL', 5 * 60_000, 1, 86_400_000),
      concurrency: readInt(env, 'HERALD_WORKER_CONCURRENCY', 256, 1, 100_000),
      claimBatch: readInt(env, 'HERALD_CLAIM_BATCH', 128, 1, 10_000),
      pollMs: readInt(env, 'HERALD_POLL_MS', 500, 10, 60_000),
    },
    providers: readProviders(env),
  };
}

function readProviders(env: Env): Config['providers'] {
  const smtpUrl = readUrl(env, 'SMTP_URL');
  const twilioSid = readString(env, 'TWILIO_ACCOUNT_SID');
  const smppUrl = readUrl(env, 'SMPP_URL');
  const vapidPublic = readString(env, 'VAPID_PUBLIC_KEY');
  const apnsKeyFile = readString(env, 'APNS_KEY_FILE');
  const fcmFile = readString(env, 'FCM_SERVICE_ACCOUNT_FILE');
  const required = (name: string) => {
    const value = readString(env, name);
    if (!value) throw new ConfigError(name, 'is required by the provider configured beside it');
    return value;
  };
  return {
    smtp: smtpUrl ? { url: smtpUrl, from: required('EMAIL_FROM') } : undefined,
    twilio: twilioSid
      ? {
          accountSid: twilioSid,
          authToken: required('TWILIO_AUTH_TOKEN'),
          from: required('TWILIO_FROM'),
          apiBase: (readUrl(env, 'TWILIO_API_BASE') ?? 'https://api.twilio.com').replace(/\/+$/, ''),
        }
      : undefined,
    smpp: smppUrl ? { url: smppUrl, sourceAddr: required('SMPP_SOURCE_ADDR') } : undefined,
    vapid: vapidPublic
      ? {
          publicKey: vapidPublic,
          privateKey: required('VAPID_PRIVATE_KEY'),
          subject: required('VAPID_SUBJECT'),
        }
      : undefined,
    apns: apnsKeyFile
      ? {
          keyFile: apnsKeyFile,
          keyId: required('APNS_KEY_ID'),
          teamId: required('APNS_TEAM_ID'),
          topic: required('APNS_TOPIC'),
          host: readUrl(env, 'APNS_HOST') ?? 'https://api.push.apple.com',
        }
      : undefined,
    fcm: fcmFile
      ? {
          serviceAccountFile: fcmFile,
          apiBase: (readUrl(env, 'FCM_API_BASE') ?? 'https://fcm.googleapis.com').replace(/\/+$/, ''),
        }
      : undefined,
    sendgridWebhookPublicKey: readString(env, 'SENDGRID_WEBHOOK_PUBLIC_KEY'),
    mailgunWebhookSigningKey: readString(env, 'MAILGUN_WEBHOOK_SIGNING_KEY'),
    sandboxFailures: readBool(env, 'HERALD_SANDBOX_FAILURES', true),
  };
}

/** HERALD_TRUSTED_PROXIES: addresses or CIDR ranges whose X-Forwarded-For login throttling believes. */
function readTrustedProxies(env: Env): string[] {
  const list = readList(env, 'HERALD_TRUSTED_PROXIES') ?? ['127.0.0.1', '::1'];
  for (const entry of list) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address);
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !bitsOk) {
      throw new ConfigError('HERALD_TRUSTED_PROXIES', `"${entry}" is not an IP address or CIDR range`);
    }
  }
  return list;
}
