import AjvCompiler from '@fastify/ajv-compiler';

type BuildValidator = ReturnType<typeof AjvCompiler>;
type Validate = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };

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
