import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { AccessTokenVerifier } from '../auth/principal.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { Wakeup } from '../dispatch/wakeup.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/port/index.ts';

/** A Fastify instance with the TypeBox type provider, as every route module receives it. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** What route modules are built from. Passed explicitly; there is no container. */
export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  verifier: AccessTokenVerifier;
  /** Ingest notifies it after each commit; the in-process worker waits on it. */
  wakeup: Wakeup;
  /** Prometheus metrics of this process; absent in tests that do not need them. */
  metrics?: Metrics;
  /** Calls to run when the app closes (flush batches, stop timers). */
  onClose?: Array<() => Promise<void> | void>;
}

/** A route module: registers its routes on the scope it is given (public or protected). */
export type RouteModule = (app: App, deps: AppDeps) => void | Promise<void>;
