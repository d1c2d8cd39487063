import { bootstrapAdmin } from './auth/accounts.ts';
import { oidcRoutes } from './auth/oidc/routes.ts';
import { adminAccountRoutes, authPublicRoutes, meRoute } from './auth/routes.ts';
import { createVerifier } from './auth/service.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config/config.ts';
import { dispatchAdminRoutes } from './dispatch/admin-routes.ts';
import { startDispatch } from './dispatch/start.ts';
import { createWakeup } from './dispatch/wakeup.ts';
import { type ApiModules, buildApp } from './http/app.ts';
import { healthRoutes } from './http/health.ts';
import { metricsRoutes } from './http/metrics-routes.ts';
import type { App, AppDeps } from './http/types.ts';
import { createMetrics } from './metrics.ts';
import { notificationReadRoutes } from './notifications/read-routes.ts';
import { notificationIngestRoutes } from './notifications/routes.ts';
import { createStore } from './store/create.ts';
import type { Store } from './store/port/index.ts';
import { templateRoutes } from './templates/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';

/** A running Herald: the roles its config asked for, and how to stop them. */
export interface Herald {
  store: Store;
  deps: AppDeps;
  api?: App;
  /** Base URL of the API port, when the api or auth role runs. */
  apiUrl?: string;
  gatewayUrl?: string;
  close(): Promise<void>;
}

/** The route modules the API port serves for the roles asked for. Add a module here, once. */
export function apiModules(config: Config): ApiModules {
  const roles = new Set(config.roles);
  const modules: ApiModules = { public: [healthRoutes], protected: [] };
  if (roles.has('auth')) {
    // auth: public login/refresh/token/jwks routes are added here.
    modules.public.push(authPublicRoutes);
    // OpenID Connect sign-in (answers {enabled:false} / 404 unless HERALD_OIDC_ISSUER is set).
    modules.public.push(oidcRoutes);
    modules.protected.push(meRoute);
  }
  if (roles.has('api')) {
    // api: notifications, templates, admin and webhook routes are added here.
    modules.protected.push(adminAccountRoutes);
    modules.protected.push(notificationIngestRoutes, notificationReadRoutes, templateRoutes);
    modules.protected.push(dispatchAdminRoutes);
    modules.public.push(webhookRoutes);
  }
  return modules;
}

/** Opens the store and builds the dependencies every role shares. */
export async function createDeps(config: Config, clock: Clock = systemClock): Promise<AppDeps> {
  const store = await createStore(config);
  try {
    const verifier = await createVerifier(config, store, clock);
    // HERALD_ADMIN_EMAIL/PASSWORD: the first admin, created once, in tenant `default`.
    await bootstrapAdmin(store.auth, clock, config.auth.adminEmail, config.auth.adminPassword);
    const wakeup = createWakeup();
    // Ingest in other processes wakes this worker through the database (PostgreSQL NOTIFY);
    // the subscription ends with the store's connections.
    if (config.roles.includes('worker')) await store.wakeups.subscribe(() => wakeup.notify());
    return { config, store, clock, verifier, wakeup, metrics: createMetrics(), onClose: [] };
  } catch (error) {
    // A failed start (bad key secret, unreachable JWKS) must not leave the database open.
    await store.close();
    throw error;
  }
}

/** Builds the API/auth app (not listening) for the config's roles; tests use it with inject. */
export function buildApi(deps: AppDeps): Promise<App> {
  const modules = apiModules(deps.config);
  if (deps.metrics && deps.config.roles.includes('api')) modules.protected.push(metricsRoutes(deps.metrics));
  return buildApp(deps, modules);
}

/** Starts every role named in `config.roles` in this process. Used by `herald start` and by tests. */
export async function startHerald(config: Config, clock: Clock = systemClock): Promise<Herald> {
  const deps = await createDeps(config, clock);
  const closers: Array<() => Promise<void>> = [];
  const herald: Herald = {
    store: deps.store,
    deps,
    async close() {
      for (const close of closers.reverse()) await close();
      await deps.store.close();
    },
  };
  try {
    const roles = new Set(config.roles);
    if (roles.has('api') || roles.has('auth')) {
      const api = await buildApi(deps);
      await api.listen({ host: config.host, port: config.apiPort });
      herald.api = api;
      herald.apiUrl = listenUrl(api);
      closers.push(() => api.close());
    }
    // worker role: the scheduler starts here and is stopped (gracefully) by a closer. Closers run
    // in reverse, so the worker stops before the API; in-flight sends finish or are released.
    if (roles.has('worker')) {
      const dispatch = await startDispatch(deps);
      closers.push(() => dispatch.close());
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
      await gateway.listen({ host: config.host, port: config.gatewayPort });
      herald.gatewayUrl = listenUrl(gateway);
      closers.push(() => gateway.close());
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
