import type { AccessTokenVerifier } from './auth/principal.ts';
import { type Clock, systemClock } from './clock.ts';
import type { Config } from './config/config.ts';
import { type ApiModules, buildApp } from './http/app.ts';
import { HeraldError } from './http/errors.ts';
import { healthRoutes } from './http/health.ts';
import type { App, AppDeps } from './http/types.ts';
import { createStore } from './store/create.ts';
import type { Store } from './store/port/index.ts';

/** A running Herald: the roles its config asked for, and how to stop them. */
export interface Herald {
  store: Store;
  api?: App;
  /** Base URL of the API port, when the api or auth role runs. */
  apiUrl?: string;
  gatewayUrl?: string;
  close(): Promise<void>;
}

/** Starts every role named in `config.roles` in this process. Used by `herald start` and by tests. */
export async function startHerald(config: Config, clock: Clock = systemClock): Promise<Herald> {
  const store = await createStore(config);
  const closers: Array<() => Promise<void>> = [];
  const herald: Herald = {
    store,
    async close() {
      for (const close of closers.reverse()) await close();
      await store.close();
    },
  };
  try {
    const roles = new Set(config.roles);
    if (roles.has('api') || roles.has('auth')) {
      const verifier: AccessTokenVerifier = {
        async verify() {
          throw new HeraldError('AUTH_INVALID_TOKEN', 'Token verification is not configured');
        },
      };
      const deps: AppDeps = { config, store, clock, verifier, onClose: [] };
      const modules: ApiModules = { public: [healthRoutes], protected: [] };
      const api = await buildApp(deps, modules);
      await api.listen({ host: config.host, port: config.apiPort });
      herald.api = api;
      herald.apiUrl = listenUrl(api);
      closers.push(() => api.close());
    }
  } catch (error) {
    await herald.close();
    throw error;
  }
  return herald;
}

function listenUrl(app: App): string {
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new TypeError('server is not listening on TCP');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
