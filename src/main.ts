import { bootstrapAdmin } from './auth/accounts.ts';
import { protect } from './auth/bearer.ts';
import { oidcRoutes } from './auth/oidc/routes.ts';
import { argon2Stats } from './auth/passwords.ts';
import type { AccessTokenVerifier } from './auth/principal.ts';
import { adminAccountRoutes, authPublicRoutes, meRoute, sessionRoutes } from './auth/routes.ts';
import { type AuthService, createAuthService, startVerifier } from './auth/service.ts';
import { callbackRoutes } from './callbacks/routes.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config/config.ts';
import type { CoreDeps } from './deps.ts';
import { queueAdminRoutes } from './dispatch/admin-routes.ts';
import { buildWorkerRole, type WorkerHandle } from './dispatch/role.ts';
import {
  type DispatchThread,
  startDispatchThread,
  stopOnThreadExit,
  wantsDispatchThread,
} from './dispatch/thread.ts';
import { buildApp } from './http/app.ts';
import { healthRoutes } from './http/health.ts';
import { listenOn } from './http/listen.ts';
import { createLogger } from './http/logger.ts';
import { metricsRoutes } from './http/metrics-routes.ts';
import type { App, Routes } from './http/types.ts';
import { inboxCorsRoutes } from './inbox/cors.ts';
import { createInboxHub, type InboxHub } from './inbox/hub.ts';
import { inboxRoutes } from './inbox/routes.ts';
import { inboxStreamRoute } from './inbox/stream-route.ts';
import { recipientTokenRoute } from './inbox/token-route.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { clusterExposition, startMetricsPublisher } from './metrics-publisher.ts';
import { notificationActionRoutes } from './notifications/action-routes.ts';
import { type BatchDecoder, createBatchDecoder } from './notifications/batch-decoder.ts';
import { historyRoutes } from './notifications/history-route.ts';
import { createIngest, type Ingest } from './notifications/ingest.ts';
import { notificationMessageRoute } from './notifications/message-route.ts';
import { notificationReadRoutes } from './notifications/read-routes.ts';
import { createRecipientDigests, type RecipientDigests } from './notifications/recipient-digest.ts';
import { createReportService, type ReportService } from './notifications/reports.ts';
import { notificationIngestRoutes } from './notifications/routes.ts';
import { createStatusHub, type StatusHub } from './notifications/stream-hub.ts';
import { TOKEN_ENDED_COMMENT } from './notifications/stream-protocol.ts';
import { notificationStreamRoute } from './notifications/stream-route.ts';
import { sandboxRoutes } from './providers/sandbox/routes.ts';
import { createQuotaGate, type QuotaGate } from './quotas/gate.ts';
import { quotaRoutes } from './quotas/routes.ts';
import { tokenSource } from './quotas/sources.ts';
import { broadcastRoutes } from './recipients/broadcast-routes.ts';
import { categoryRoutes } from './recipients/category-routes.ts';
import { preferenceRoutes } from './recipients/preference-routes.ts';
import { preferencesPageRoutes } from './recipients/preferences-page-routes.ts';
import { createPreferenceTokens, type PreferenceTokens } from './recipients/preferences-token.ts';
import { recipientRoutes } from './recipients/routes.ts';
import { topicRoutes } from './recipients/topic-routes.ts';
import { createStore } from './store/create.ts';
import type { Store } from './store/port/index.ts';
import { suppressionRoutes } from './suppressions/routes.ts';
import { unsubscribeRoutes } from './suppressions/unsubscribe-routes.ts';
import { createUnsubscribeTokens, type UnsubscribeTokens } from './suppressions/unsubscribe-token.ts';
import { templateRoutes } from './templates/routes.ts';
import { createSyntaxCheck, type SyntaxCheck } from './templates/syntax-check.ts';
import { startTracing } from './tracing/sdk.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { workflowRoutes } from './workflows/routes.ts';
import { workflowRunRoutes } from './workflows/run-routes.ts';
import { createTriggerCommit, type TriggerCommit } from './workflows/trigger-commit.ts';

/**
 * Everything one process builds once and hands to its roles: the composition root's product.
 * Each part is constructed here, in one place, and passed explicitly; route modules and roles
 * name the parts they use in their own deps types.
 */
export interface HeraldDeps extends CoreDeps {
  /** The access-token verifier of this process: local keys, or a remote JWKS (api without auth). */
  verifier: AccessTokenVerifier;
  /** Keys and token issuing over the store (the auth role's routes). */
  auth: AuthService;
  /** Durable acceptance with group commit (the api role's ingest routes). */
  ingest: Ingest;
  /** Workflow triggers' group commit (POST /workflows/{key}/trigger). */
  triggers: TriggerCommit;
  /** Batch bodies read and checked in threads of their own (POST /notifications/batch). */
  batchDecoder: BatchDecoder;
  /** The one path of delivery reports: webhooks and SMPP receipts. */
  reports: ReportService;
  /**
   * The worker role of this process, built here or in the dispatch thread (dispatch/role.ts,
   * dispatch/thread.ts); without the worker role, its parts the API uses. The one home of the
   * worker's wake-up (ingest and the admin routes signal it) and of its renderer (the process's
   * render pool: the worker's sends, the API's previews and syntax checks).
   */
  worker: WorkerHandle;
  metrics: Metrics;
  /** The Liquid syntax check of inline content and templates, in the renderer's threads. */
  syntax: SyntaxCheck;
  /** The one reader of the status log behind this process's live streams (GET /notifications/stream). */
  statusHub: StatusHub;
  /** The inbox streams of this process (GET /inbox/stream), fed by the status hub's reader. */
  inboxHub: InboxHub;
  /** One-click unsubscribe links: made by the worker, opened by /unsubscribe/{token}. */
  unsubscribe: UnsubscribeTokens;
  /** The tenants' recipient digest keys: written at acceptance, searched by GET /notifications?recipient=. */
  recipientDigests: RecipientDigests;
  /** Recipients' preferences links (`preferencesUrl`): made for the API and templates, opened by /preferences/{token}. */
  preferenceTokens: PreferenceTokens;
  /** Per-tenant quotas checked at acceptance (notifications, batches, broadcasts; docs/quotas.md). */
  quotas: QuotaGate;
}

/** A running Herald: the roles its config asked for, and how to stop them. */
export interface Herald {
  store: Store;
  deps: HeraldDeps;
  api?: App;
  /** Base URL of the API port, when the api or auth role runs. */
  apiUrl?: string;
  gatewayUrl?: string;
  close(): Promise<void>;
}

/** The route modules the API port serves for the roles asked for, bound to `deps`. Add a module here, once. */
function apiRoutes(deps: HeraldDeps): { public: Routes[]; protected: Routes[] } {
  const roles = new Set(deps.config.roles);
  const bind =
    <D>(module: (app: App, deps: D) => void | Promise<void>, d: D): Routes =>
    (app) =>
      module(app, d);
  const routes: { public: Routes[]; protected: Routes[] } = {
    public: [bind(healthRoutes, deps)],
    protected: [],
  };
  // The route modules name the worker's parts they use; each is read from `deps.worker`.
  const { wakeup, renderer } = deps.worker;
  const withWorker = { ...deps, wakeup, renderer };
  if (roles.has('auth')) {
    // Login, refresh, client credentials, JWKS; OpenID Connect sign-in (404 unless configured).
    routes.public.push(bind(authPublicRoutes, deps), bind(oidcRoutes, deps));
    routes.protected.push(bind(meRoute, deps), bind(sessionRoutes, deps));
  }
  if (roles.has('api')) {
    routes.protected.push(
      bind(adminAccountRoutes, deps),
      bind(notificationIngestRoutes, deps),
      bind(notificationReadRoutes, deps),
      bind(notificationMessageRoute, withWorker),
      bind(notificationStreamRoute, deps),
      bind(callbackRoutes, deps),
      bind(suppressionRoutes, deps),
      bind(recipientRoutes, deps),
      bind(notificationActionRoutes, withWorker),
      bind(templateRoutes, withWorker),
      bind(queueAdminRoutes, withWorker),
      bind(historyRoutes, deps),
      bind(sandboxRoutes, deps),
      bind(categoryRoutes, deps),
      bind(preferenceRoutes, deps),
      bind(topicRoutes, deps),
      bind(broadcastRoutes, withWorker),
      bind(workflowRunRoutes, deps),
      bind(quotaRoutes, deps),
      bind(recipientTokenRoute, deps),
      bind(inboxRoutes, deps),
      bind(inboxStreamRoute, deps),
      bind(workflowRoutes, deps),
      metricsRoutes(deps.metrics, () => clusterExposition(deps)),
    );
    routes.public.push(
      bind(inboxCorsRoutes, deps),
      bind(webhookRoutes, deps),
      bind(unsubscribeRoutes, deps),
      bind(preferencesPageRoutes, deps),
    );
  }
  return routes;
}

/**
 * Opens the store and builds, once, every part the roles share. `early` is a dispatch thread
 * `herald start` started before loading this module (cli/start.ts).
 */
export async function createDeps(
  config: Config,
  clock: Clock = systemClock,
  early?: DispatchThread,
): Promise<HeraldDeps> {
  // The worker role runs in its own thread when this process also serves HTTP; else here, if
  // asked for. The thread starts first and loads its modules while this thread opens (and
  // migrates) the store; it opens its own connection when told, after the migrations.
  const thread =
    early ?? (wantsDispatchThread(config) ? startDispatchThread(config, stopOnThreadExit) : undefined);
  let store: Store;
  try {
    store = await createStore(config, { claims: !thread });
  } catch (error) {
    await thread?.close();
    throw error;
  }
  thread?.open();
  let worker: WorkerHandle | undefined = thread;
  try {
    const auth = createAuthService(config, store, clock);
    const verifier = await startVerifier(config, auth, clock);
    // HERALD_ADMIN_EMAIL/PASSWORD: the first admin, created once, in tenant `default`.
    await bootstrapAdmin(store.auth, clock, config.auth.adminEmail, config.auth.adminPassword);
    const core = { config, store, clock };
    const metrics = createMetrics({
      peer: thread?.metrics,
      argon2Operations: () => argon2Stats().started,
      waitingRuns: async () => (await store.workflowRuns.counts()).waitingByWorkflow,
    });
    const reports = createReportService(store, clock);
    const unsubscribe = createUnsubscribeTokens(store.auth, clock, config.keyEncryptionSecret);
    const quotas = createQuotaGate({
      store: store.quotas,
      clock,
      metrics,
      source: tokenSource(store.quotas, clock),
    });
    await quotas.start();
    const recipientDigests = createRecipientDigests(store.auth, clock, config.keyEncryptionSecret);
    await recipientDigests.open();
    const preferenceTokens = createPreferenceTokens(store.auth, clock, config.keyEncryptionSecret);
    // startHerald waits for `worker.ready` before listening: the API is built meanwhile.
    worker ??= await buildWorkerRole({ ...core, metrics, reports, unsubscribe, preferenceTokens });
    // With one writer (SQLite) a dispatch thread's connection commits new notifications, and
    // says when it committed status changes.
    const oneWriter = store.capabilities.oneWriter;
    // The process's one render pool (in the dispatch thread, if any) checks Liquid syntax too.
    const syntax = createSyntaxCheck(worker.renderer);
    const apiLog = createLogger(config.logLevel, config.logFormat).child({ role: 'api' });
    const statusHub = createStatusHub({
      store,
      changes: oneWriter ? worker.statusChanges : undefined,
      clock,
      log: apiLog,
    });
    return {
      ...core,
      verifier,
      auth,
      worker,
      metrics,
      ingest: createIngest({
        ...core,
        recipientDigests,
        wakeup: worker.wakeup,
        syntax,
        metrics,
        quotas,
        writer: oneWriter ? worker.insertMany : undefined,
      }),
      triggers: createTriggerCommit({
        ...core,
        runsWakeup: worker.runsWakeup,
        writer: oneWriter ? worker.commitTriggers : undefined,
      }),
      batchDecoder: createBatchDecoder({ threads: config.batchThreads }),
      syntax,
      reports,
      unsubscribe,
      recipientDigests,
      preferenceTokens,
      quotas,
      statusHub,
      inboxHub: createInboxHub({
        store,
        clock,
        log: apiLog,
        statusHub,
        heartbeatMs: config.streamHeartbeatMs,
        tokenEndedComment: TOKEN_ENDED_COMMENT,
      }),
    };
  } catch (error) {
    // A failed start (bad key secret, unreachable JWKS) must not leave the database open.
    await worker?.close();
    await store.close();
    throw error;
  }
}

/**
 * Closes what createDeps opened: the batch threads, the worker role (its render pool; a dispatch
 * thread, its store and the thread), the live streams' reader, then the store. After the API's and the worker's own
 * close (startHerald), or once a built API is done with (`herald openapi`, tests).
 */
export async function closeDeps(deps: HeraldDeps): Promise<void> {
  await deps.batchDecoder.close();
  await deps.worker.close();
  await deps.inboxHub.close();
  await deps.statusHub.close();
  await deps.quotas.close();
  await deps.store.close();
}

/** Builds the API/auth app (not listening) for the config's roles; tests use it with inject. */
export function buildApi(deps: HeraldDeps, options: Parameters<typeof buildApp>[1] = {}): Promise<App> {
  return buildApp(
    {
      logLevel: deps.config.logLevel,
      logFormat: deps.config.logFormat,
      publicUrl: deps.config.publicUrl,
      bodyLimit: deps.config.bodyLimit,
      requestTimeoutMs: deps.config.requestTimeoutMs,
      ...apiRoutes(deps),
      protect: (scope) => protect(scope, deps.verifier),
      // Accepted notifications and triggers still waiting for their group commit are committed before the store can close.
      onClose: async () => {
        await deps.ingest.drain();
        await deps.triggers.drain();
      },
    },
    options,
  );
}

/** Starts every role named in `config.roles` in this process. Used by `herald start` and by tests. */
export async function startHerald(
  config: Config,
  clock: Clock = systemClock,
  early?: DispatchThread,
): Promise<Herald> {
  // Before the API is built (its server spans) and the roles start; loads nothing unless the
  // OTEL_* variables ask for traces (tracing/sdk.ts). The dispatch and callback threads start their own.
  const tracing = await startTracing(config);
  const deps = await createDeps(config, clock, early);
  const closers: Array<() => Promise<void>> = [];
  const herald: Herald = {
    store: deps.store,
    deps,
    async close() {
      for (const close of closers.reverse()) await close();
      // After the API's last commit (its close drains ingest through a dispatch thread).
      await closeDeps(deps);
      // Last: the spans of the drain are exported too.
      await tracing?.shutdown();
    },
  };
  try {
    const roles = new Set(config.roles);
    // Closed last (closers run in reverse): its final act removes this process's row.
    const publisher = startMetricsPublisher(deps, config.roles);
    closers.push(() => publisher.close());
    if (roles.has('api') || roles.has('auth')) {
      const api = await buildApi(deps);
      closers.push(() => api.close());
      await api.ready();
      await deps.worker.ready;
      await listenOn(api, config.host, config.apiPort, 'HERALD_API_PORT');
      if (roles.has('auth') && !config.keyEncryptionSecret) {
        api.log.warn(
          'HERALD_KEY_ENCRYPTION_SECRET is not set: the signing keys are stored unencrypted; set it in production',
        );
      }
      herald.api = api;
      herald.apiUrl = listenUrl(api);
    }
    // worker role: the scheduler starts here and is stopped (gracefully) by a closer. Closers run
    // in reverse, so the worker stops before the API; in-flight sends finish or are released.
    if (roles.has('worker')) {
      await deps.worker.start();
      closers.push(() => deps.worker.stop());
    }
    // gateway role: the BFF listens on config.gatewayPort here.
    if (roles.has('gateway')) {
      // With HERALD_API_PORT=0 (tests) the default upstream URLs name port 0: use the real one.
      const local = (url: string) => (herald.apiUrl && /:0$/.test(url) ? herald.apiUrl : url);
      // Imported only for this role: the proxy and static-file stack is not loaded by API or workers.
      const { buildGateway } = await import('./gateway/app.ts');
      const gateway = await buildGateway({
        ...config,
        authUrl: local(config.authUrl),
        apiUrl: local(config.apiUrl),
      });
      // Closed with the rest when its port is taken: the API port, already open, closes too.
      closers.push(() => gateway.close());
      await listenOn(gateway, config.host, config.gatewayPort, 'HERALD_GATEWAY_PORT');
      herald.gatewayUrl = listenUrl(gateway);
    }
  } catch (error) {
    await herald.close();
    throw error;
  }
  return herald;
}

/** The http://host:port an app listens on. */
export function listenUrl(app: App): string {
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new TypeError('server is not listening on TCP');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
