import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type BuildValidator = ReturnType<typeof AjvCompiler>;
type Validate = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type BuildSerializer = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's own ajv validators, each compiled on its route's first request instead of at
 * start-up: ajv generating code for every route schema was about 90 ms of a 760 ms start (the
 * first request of a route pays a millisecond or two instead). Fastify reads `errors` after a
 * failed validation and `schemaEnv` to pass ajv its data context: both are forwarded.
 */
export function lazyValidators(): BuildValidator {
  const build = AjvCompiler();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let validate: Validate | undefined;
      const compiled = () => {
        validate ??= compile(route) as unknown as Validate;
        return validate;
      };
      const lazy = function (this: unknown, ...args: unknown[]) {
        return compiled().apply(this, args);
      };
      Object.defineProperty(lazy, 'errors', { get: () => compiled().errors });
      Object.defineProperty(lazy, 'schemaEnv', { get: () => compiled().schemaEnv });
      return lazy as unknown as ReturnType<ReturnType<BuildValidator>>;
    };
  };
}

/**
 * Fastify's own fast-json-stringify serializers, likewise compiled on the first response of
 * each route and status instead of at start-up (about 40 ms of a 650 ms start, single starts on this machine).
 */
export function lazySerializers(): BuildSerializer {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc) => {
        serialize ??= compile(route);
        return serialize(doc);
      };
    };
  };
}
