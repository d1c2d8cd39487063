import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

/** A Fastify instance with the TypeBox type provider, as every route module receives it. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A route module: registers its routes on the scope it is given, from the dependencies it names. */
export type RouteModule<D> = (app: App, deps: D) => void | Promise<void>;

/** A route module with its dependencies bound, as the app builder takes it. */
export type Routes = (app: App) => void | Promise<void>;
