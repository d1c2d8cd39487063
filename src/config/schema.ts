import { type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { DEFAULT_TENANT, TENANT_NAME } from '../auth/principal.ts';

/**
 * Every configuration variable, once: its name, type, bounds, default and meaning, one TypeBox
 * schema per section. The types of `Config` come from these schemas, `read.ts` reads and checks
 * the environment by them, and a test holds docs/configuration.md to them.
 */

/** What a leaf schema carries beyond TypeBox's own keywords. */
export interface EnvOptions {
  /** The environment variable. */
  env: string;
  description: string;
  /** How the docs state a default computed from other variables (its value is set by loadConfig). */
  derived?: string;
}

const int = (env: string, value: number, minimum: number, maximum: number, description: string) =>
  Type.Integer({ env, default: value, minimum, maximum, description });
const text = (env: string, value: string, description: string) =>
  Type.String({ env, default: value, description });
/** Unset unless given. */
const maybe = (env: string, description: string) => Type.Optional(Type.String({ env, description }));
/** Required when its group is configured. */
const needed = (env: string, description: string) => Type.String({ env, description });
const url = (env: string, description: string, value?: string) =>
  Type.String({ env, format: 'url', description, ...(value === undefined ? {} : { default: value }) });
const maybeUrl = (env: string, description: string) => Type.Optional(url(env, description));
/** A default computed by loadConfig from other variables. */
const derivedUrl = (env: string, derived: string, description: string) =>
  Type.String({ env, format: 'url', derived, description });
const oneOf = <T extends string>(env: string, values: readonly T[], value: T, description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { env, default: value, description },
  );
/** A set of settings present only when its trigger variable is set; its other required ones must be set with it. */
const group = <P extends TProperties>(trigger: string, properties: P) =>
  Type.Optional(Type.Object(properties, { trigger }));

/** The roles one Herald process can run. */
export const ROLES = ['auth', 'api', 'worker', 'gateway'] as const;
export type Role = (typeof ROLES)[number];

export const JWT_ALGS = ['ES256', 'EdDSA', 'RS256'] as const;
export type JwtAlg = (typeof JWT_ALGS)[number];

/** The SMS providers HERALD_SMS_PROVIDERS can order. */
const SMS_PROVIDERS = ['twilio', 'smpp'] as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const MiB = 1024 * 1024;

export const ServerSchema = Type.Object({
  dataDir: text('HERALD_DATA_DIR', './data', 'directory of the SQLite database'),
  databaseUrl: maybeUrl('DATABASE_URL', 'postgres://…: PostgreSQL instead of SQLite'),
  databasePoolSize: int('HERALD_DB_POOL_SIZE', 10, 1, 1000, 'PostgreSQL connections per process'),
  keyEncryptionSecret: maybe(
    'HERALD_KEY_ENCRYPTION_SECRET',
    'encrypts the signing keys and the other server keys at rest',
  ),
  roles: Type.Array(Type.Union(ROLES.map((r) => Type.Literal(r))), {
    env: 'HERALD_ROLES',
    default: [...ROLES],
    description: 'the roles this process runs',
  }),
  host: text('HERALD_HOST', '127.0.0.1', 'listen address'),
  apiPort: int('HERALD_API_PORT', 8080, 0, 65535, 'API port (0 picks a free one)'),
  gatewayPort: int('HERALD_GATEWAY_PORT', 3000, 0, 65535, 'gateway port (0 picks a free one)'),
  publicUrl: derivedUrl('HERALD_PUBLIC_URL', 'http://127.0.0.1:<API port>', "the API's outside address"),
  authUrl: derivedUrl(
    'HERALD_AUTH_URL',
    'the API port',
    'where the gateway forwards /api/session* and /api/auth/*',
  ),
  apiUrl: derivedUrl('HERALD_API_URL', 'the API port', 'where the gateway forwards the rest of /api/*'),
  trustedProxies: Type.Array(Type.String(), {
    env: 'HERALD_TRUSTED_PROXIES',
    default: ['127.0.0.1', '::1'],
    cidr: true,
    description: 'addresses or CIDR ranges whose X-Forwarded-For is believed',
  }),
  logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info', 'pino level'),
  logFormat: oneOf(
    'HERALD_LOG_FORMAT',
    ['auto', 'pretty', 'json'] as const,
    'auto',
    'pretty: one readable line per entry; json: one JSON object per line; auto: pretty when stdout is a terminal',
  ),
  bodyLimit: int('HERALD_BODY_LIMIT', 64 * 1024, 1024, 16 * MiB, 'largest request body, bytes'),
  batchBodyLimit: int('HERALD_BATCH_BODY_LIMIT', 8 * MiB, 1024, 256 * MiB, 'largest batch body, bytes'),
  requestTimeoutMs: int(
    'HERALD_REQUEST_TIMEOUT_MS',
    30_000,
    1000,
    3_600_000,
    "a request's headers and body must arrive within this, on every port",
  ),
  renderTimeoutMs: int(
    'HERALD_RENDER_TIMEOUT_MS',
    100,
    10,
    60_000,
    'rendering time of all the fields of one notification or preview, enforced by ending the thread',
  ),
  dispatchThread: Type.Boolean({
    env: 'HERALD_DISPATCH_THREAD',
    default: true,
    description:
      'a process that serves HTTP runs its worker role in a thread of its own, on another core ([dispatch.md](dispatch.md))',
  }),
  inboxOrigins: Type.Optional(
    Type.Array(Type.String({ pattern: '^https?://[^/?#\\s]+$' }), {
      env: 'HERALD_INBOX_ORIGINS',
      description: 'origins (scheme://host[:port]) whose browsers may call the inbox endpoints (CORS)',
    }),
  ),
  callbackAllowedHosts: Type.Optional(
    Type.Array(Type.String(), {
      env: 'HERALD_CALLBACK_ALLOWED_HOSTS',
      description: 'private hosts (name or host:port) that status callback URLs may name',
    }),
  ),
  callbackConcurrency: int(
    'HERALD_CALLBACK_CONCURRENCY',
    32,
    1,
    1000,
    'requests in flight to one status callback, per worker process',
  ),
  callbackRate: int(
    'HERALD_CALLBACK_RATE',
    2000,
    1,
    1_000_000,
    'requests a second to one status callback, per worker process',
  ),
  callbackTenantConcurrency: int(
    'HERALD_CALLBACK_TENANT_CONCURRENCY',
    64,
    1,
    100_000,
    "requests in flight to all of one tenant's status callbacks together, per worker process",
  ),
  callbacksPerTenant: int(
    'HERALD_CALLBACKS_PER_TENANT',
    20,
    1,
    1000,
    'status callbacks one tenant may register (each status change is posted to each of them)',
  ),
  streamsPerTenant: int(
    'HERALD_STREAMS_PER_TENANT',
    200,
    1,
    100_000,
    'live status streams one tenant may hold open at once, per API process',
  ),
  streamHeartbeatMs: int(
    'HERALD_STREAM_HEARTBEAT_MS',
    15_000,
    100,
    15_000,
    'how often a live status stream sends a comment line and checks its access token again',
  ),
  renderThreads: int('HERALD_RENDER_THREADS', 2, 1, 64, 'worker threads that render Liquid templates'),
  ingestMaxPending: int(
    'HERALD_INGEST_MAX_PENDING',
    100_000,
    1,
    10_000_000,
    'notifications waiting for their group commit before new ones get 503 (one tenant at most half of them); workflow triggers apart, by their runs',
  ),
  preferencesMaxPosts: int(
    'HERALD_PREFERENCES_MAX_POSTS',
    60,
    1,
    1_000_000,
    'posts to the hosted preferences page, and links to it that do not open, per client address per window',
  ),
});

export const AuthSchema = Type.Object({
  issuer: Type.String({
    env: 'HERALD_JWT_ISSUER',
    derived: 'HERALD_PUBLIC_URL',
    description: 'iss of tokens',
  }),
  audience: text('HERALD_JWT_AUDIENCE', 'herald-api', 'aud of access tokens'),
  alg: oneOf('HERALD_JWT_ALG', JWT_ALGS, 'ES256', 'algorithm of new signing keys'),
  accessTtl: int('HERALD_ACCESS_TTL', 600, 1, 86400 * 30, 'access token lifetime, seconds'),
  inboxTokenTtl: int('HERALD_INBOX_TOKEN_TTL', 3600, 1, 86400, 'recipient (inbox) token lifetime, seconds'),
  refreshTtl: int('HERALD_REFRESH_TTL', 43200, 1, 86400 * 365, 'refresh token sliding lifetime, seconds'),
  refreshMaxAge: int('HERALD_REFRESH_MAX_AGE', 7 * 86400, 1, 86400 * 365, 'absolute cap of a refresh chain'),
  loginMaxFailures: int('HERALD_LOGIN_MAX_FAILURES', 10, 1, 1_000_000, 'failed logins per email per window'),
  loginMaxFailuresPerAddress: int(
    'HERALD_LOGIN_MAX_FAILURES_PER_ADDRESS',
    100,
    1,
    1_000_000,
    'failed logins per client address per window',
  ),
  jwksUrl: maybeUrl('HERALD_JWKS_URL', 'an api process without the auth role verifies with this key set'),
  keyReloadMs: int('HERALD_KEY_RELOAD_MS', 5_000, 100, 3_600_000, 'how often the key table is re-read'),
  jwksCooldownMs: int('HERALD_JWKS_COOLDOWN_MS', 30_000, 100, 3_600_000, 'least time between JWKS refetches'),
  jwksMaxAgeMs: int(
    'HERALD_JWKS_MAX_AGE_MS',
    30_000,
    1_000,
    60_000,
    'how old a fetched key set may get before it is fetched again (a removed key is refused by then)',
  ),
  verifyCacheSize: int('HERALD_VERIFY_CACHE_SIZE', 10_000, 0, 10_000_000, 'verified-token cache entries'),
  adminEmail: maybe('HERALD_ADMIN_EMAIL', 'bootstrap admin'),
  adminPassword: maybe('HERALD_ADMIN_PASSWORD', 'bootstrap admin'),
  oidc: group('HERALD_OIDC_ISSUER', {
    issuer: url('HERALD_OIDC_ISSUER', 'an external OpenID Connect provider for sign-in'),
    clientId: needed('HERALD_OIDC_CLIENT_ID', 'its client id'),
    clientSecret: maybe('HERALD_OIDC_CLIENT_SECRET', 'its client secret (confidential clients)'),
    tenant: Type.String({
      env: 'HERALD_OIDC_TENANT',
      default: DEFAULT_TENANT,
      pattern: TENANT_NAME.source,
      description: 'the tenant whose users an identity may be linked to at its first sign-in',
    }),
  }),
});

export const DispatchSchema = Type.Object({
  leaseMs: int(
    'HERALD_LEASE_MS',
    30_000,
    100,
    3_600_000,
    'how long a worker holds a claim without renewing it',
  ),
  retryMaxAttempts: int('HERALD_RETRY_MAX_ATTEMPTS', 8, 1, 100, 'attempts before FAILED'),
  retryBaseMs: int('HERALD_RETRY_BASE_MS', 2000, 1, 3_600_000, 'first retry delay'),
  retryMaxMs: int('HERALD_RETRY_MAX_MS', 30 * 60_000, 1, 86_400_000, 'backoff cap'),
  retryMaxMsCritical: int(
    'HERALD_RETRY_MAX_MS_CRITICAL',
    5 * 60_000,
    1,
    86_400_000,
    'backoff cap of CRITICAL',
  ),
  concurrency: int('HERALD_WORKER_CONCURRENCY', 256, 1, 100_000, 'sends one worker keeps in flight'),
  claimBatch: int('HERALD_CLAIM_BATCH', 128, 1, 10_000, 'most notifications one claim takes'),
  pollMs: int('HERALD_POLL_MS', 500, 10, 60_000, "idle worker's poll backstop"),
  traceFile: maybe(
    'HERALD_DISPATCH_TRACE',
    "a file the worker appends each CRITICAL's stage times to (a diagnosis aid, read by bench/urgent-trace.ts)",
  ),
});

export const ProvidersSchema = Type.Object({
  smtp: group('SMTP_URL', {
    url: url('SMTP_URL', 'smtp:// or smtps:// with credentials and pool options'),
    from: needed('EMAIL_FROM', 'the From address'),
  }),
  smtpFallbackUrl: maybeUrl(
    'SMTP_FALLBACK_URL',
    'a second SMTP provider (same form as SMTP_URL): attempts go there while the first fails',
  ),
  twilio: group('TWILIO_ACCOUNT_SID', {
    accountSid: needed('TWILIO_ACCOUNT_SID', 'Twilio account'),
    authToken: needed('TWILIO_AUTH_TOKEN', 'Twilio auth token (also checks its webhooks)'),
    from: needed('TWILIO_FROM', 'sender number'),
    apiBase: url('TWILIO_API_BASE', 'Twilio API base URL', 'https://api.twilio.com'),
  }),
  smpp: group('SMPP_URL', {
    url: url('SMPP_URL', 'smpp://system_id:password@host:port'),
    sourceAddr: needed('SMPP_SOURCE_ADDR', 'source address'),
  }),
  smsProviders: Type.Array(Type.Union(SMS_PROVIDERS.map((p) => Type.Literal(p))), {
    env: 'HERALD_SMS_PROVIDERS',
    default: [...SMS_PROVIDERS],
    description: 'the order of the configured SMS providers: the first is the primary, the next its fallback',
  }),
  vapid: group('VAPID_PUBLIC_KEY', {
    publicKey: needed('VAPID_PUBLIC_KEY', 'Web Push VAPID public key'),
    privateKey: needed('VAPID_PRIVATE_KEY', 'VAPID private key'),
    subject: needed('VAPID_SUBJECT', 'VAPID subject (mailto: or https:)'),
  }),
  apns: group('APNS_KEY_FILE', {
    keyFile: needed('APNS_KEY_FILE', 'APNs token key (.p8)'),
    keyId: needed('APNS_KEY_ID', 'its key id'),
    teamId: needed('APNS_TEAM_ID', 'team id'),
    topic: needed('APNS_TOPIC', 'app bundle id'),
    host: url('APNS_HOST', 'APNs endpoint', 'https://api.push.apple.com'),
  }),
  fcm: group('FCM_SERVICE_ACCOUNT_FILE', {
    serviceAccountFile: needed('FCM_SERVICE_ACCOUNT_FILE', 'Firebase service account JSON'),
    apiBase: url('FCM_API_BASE', 'FCM API base URL', 'https://fcm.googleapis.com'),
  }),
  pushAllowedHosts: Type.Optional(
    Type.Array(Type.String(), {
      env: 'HERALD_PUSH_ALLOWED_HOSTS',
      description: 'private hosts (name or host:port) that Web Push endpoints may name',
    }),
  ),
  sendgridWebhookPublicKey: maybe('SENDGRID_WEBHOOK_PUBLIC_KEY', 'verifies SendGrid event webhooks'),
  mailgunWebhookSigningKey: maybe('MAILGUN_WEBHOOK_SIGNING_KEY', 'verifies Mailgun webhooks'),
  sandboxFailures: Type.Boolean({
    env: 'HERALD_SANDBOX_FAILURES',
    // Off by default: a recipient that asks the sandbox to fail its provider (fail-config) would
    // otherwise let any tenant pause a channel for every other.
    default: false,
    description: "the sandbox's failure-injection recipients",
  }),
});

/**
 * Behaviour constants: fixed numbers rather than variables, kept here so that every number that
 * shapes Herald's behaviour has one home. loadConfig places each in its section of Config.
 */
export const FIXED = {
  /** The sliding window of login throttling, seconds (the contract's 15 minutes). */
  loginWindowSeconds: 15 * 60,
  /**
   * The sliding window of the hosted preferences page's throttle (HERALD_PREFERENCES_MAX_POSTS),
   * seconds. Not shorter than the login window: each throttle prunes every attempt older than
   * its own window, whatever its scope (auth/throttle.ts).
   */
  preferencesWindowSeconds: 15 * 60,
  /** Most rows one group commit writes; more wait for the next flush. */
  ingestMaxBatch: 10_000,
  /**
   * Threads that read and check batch bodies off the event loop (notifications/batch-decoder.ts):
   * two batches read at once; more wait their tenant's turn. Started on first use.
   */
  batchThreads: 2,
  /** Provider webhook batches (SendGrid posts thousands of events at once) are larger than API bodies. */
  webhookBodyLimit: 2 * MiB,
  /**
   * Consecutive holds (claimed, given back without a provider call) after which the next one
   * counts as a failed attempt instead: no notification is held back for ever, and none is the
   * probe after every pause of a provider.
   */
  maxHolds: 5,
  /**
   * Notifications a broadcast's fan-out makes in one transaction (recipients/fan-out.ts). With one
   * writer (SQLite) the writer is held that long, so a CRITICAL committed meanwhile waits for one
   * chunk at most (`npm run bench -- --scenario fan-out`). On PostgreSQL a step's transaction holds
   * only its range's row and the rows it makes, but a core of the database while it makes them:
   * the first CRITICALs after a quiet spell meet the ranges under way (two workers', in parallel),
   * and with 5,000 a range 18 of a run's first 39 waited over 100 ms (decision record 0062). The
   * workflow engine's turns take the same chunk.
   */
  fanOutChunk: { oneWriter: 500, sharedStore: 1000 },
  /**
   * The workflow engine enters runs into SQLite's recipients' index (`indexRecipients`) this many
   * at a time, once that many wait or none was made for `quietMs`. A trigger group's commit then
   * writes no page a recipient (175 of a commit's 284 WAL pages before, decision 0064): an entry
   * costs a fraction of a page, each recipient's place written once a transaction. The writer is
   * held for one such transaction (shortened as the engine's steps are while urgent work arrives),
   * and a recipient's list reads at most about that many runs not entered yet.
   */
  recipientsIndex: { chunk: 5000, quietMs: 1000 },
  /** Circuit-breaker tuning of every provider; tests shorten it through the scheduler's deps. */
  circuit: {
    /** Consecutive transient failures that open the circuit. */
    failureThreshold: 5,
    /** First open period; doubles on each failed probe up to maxOpenMs. */
    openMs: 5_000,
    maxOpenMs: 5 * 60_000,
    /** How long a `config` failure (bad credentials) pauses the provider. */
    configPauseMs: 60_000,
  },
} as const;

/** The OTLP protocols Herald exports traces over (the exporter's http/json and http/protobuf). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * OpenTelemetry's standard variables Herald honours (docs/tracing.md). Traces are exported only
 * when an endpoint is set (tracing/sdk.ts `wantsTracing`); the SDK and its exporter read these
 * same variables themselves, so they are checked here, once, at start-up: a protocol or sampler
 * Herald does not have is refused with its name rather than ignored.
 */
export const TracingSchema = Type.Object({
  endpoint: maybeUrl('OTEL_EXPORTER_OTLP_ENDPOINT', 'OTLP/HTTP base URL; traces go to its `/v1/traces`'),
  tracesEndpoint: maybeUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTLP/HTTP URL for traces, as is'),
  protocol: oneOf('OTEL_EXPORTER_OTLP_PROTOCOL', OTLP_PROTOCOLS, 'http/protobuf', 'OTLP encoding'),
  tracesProtocol: Type.Optional(
    Type.Union(
      OTLP_PROTOCOLS.map((v) => Type.Literal(v)),
      {
        env: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
        derived: 'OTEL_EXPORTER_OTLP_PROTOCOL',
        description: 'OTLP encoding of traces',
      },
    ),
  ),
  headers: maybe('OTEL_EXPORTER_OTLP_HEADERS', 'headers of each export request (`key=value,…`)'),
  exporter: oneOf('OTEL_TRACES_EXPORTER', ['otlp', 'none'] as const, 'otlp', '`none`: no traces'),
  sdkDisabled: Type.Boolean({ env: 'OTEL_SDK_DISABLED', default: false, description: '`true`: no traces' }),
  sampler: oneOf('OTEL_TRACES_SAMPLER', SAMPLERS, 'parentbased_always_on', 'which traces are sampled'),
  samplerArg: maybe('OTEL_TRACES_SAMPLER_ARG', 'the ratio of the `traceidratio` samplers'),
  serviceName: text('OTEL_SERVICE_NAME', 'herald', "the spans' `service.name`"),
  resourceAttributes: maybe('OTEL_RESOURCE_ATTRIBUTES', 'more resource attributes (`key=value,…`)'),
});

/** Every leaf of a section schema that names a variable, with its path (for the docs test). */
export function variablesOf(schema: TObject): Array<TSchema & EnvOptions> {
  return Object.values(schema.properties).flatMap((s: TSchema) =>
    s.type === 'object' && s.properties
      ? variablesOf(s as TObject)
      : typeof s.env === 'string'
        ? [s as TSchema & EnvOptions]
        : [],
  );
}

/** Every section, for loadConfig and the docs test. */
export const SECTIONS = [ServerSchema, AuthSchema, DispatchSchema, ProvidersSchema, TracingSchema] as const;
