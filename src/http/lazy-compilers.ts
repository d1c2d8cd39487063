import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { LIST_ALL_WITHIN } from './field-messages.ts';

type BuildValidator = ReturnType<typeof AjvCompiler>;
type Validate = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type BuildSerializer = ReturnType<typeof SerializerSelector>;

/** Whether a value holds at most `limit` JSON values, itself included (walked without recursion). */
function holdsAtMost(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  let seen = 0;
  while (stack.length > 0) {
    if (++seen > limit) return false;
    const current = stack.pop();
    if (typeof current === 'object' && current !== null) {
      for (const child of Object.values(current)) stack.push(child);
    }
  }
  return true;
}

/**
 * Fastify's own ajv validators, each compiled on its route's first request instead of at
 * start-up: ajv generating code for every route schema was about 90 ms of a 760 ms start (the
 * first request of a route pays a millisecond or two instead). Fastify reads `errors` after a
 * failed validation and `schemaEnv` to pass ajv its data context: both are forwarded.
 *
 * Every problem at once (field-messages.ts): a value the validator refuses is checked again by a
 * second one, compiled on the first refusal, whose ajv lists every error (`allErrors`), when the
 * value holds at most LIST_ALL_WITHIN values. Only then: listing every error costs per error,
 * not per byte (an array of 16,000 values that are none of 9 literals is 160,000 errors, over a
 * second for a 64 KiB body), so a larger refused value gets the first error, as Fastify gives by
 * default. A value that passes pays nothing more.
 */
export function lazyValidators(): BuildValidator {
  const build = AjvCompiler();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    let compileAll: ReturnType<BuildValidator> | undefined;
    return (route) => {
      let validate: Validate | undefined;
      let validateAll: Validate | undefined;
      let errors: unknown = null;
      const compiled = () => {
        validate ??= compile(route) as unknown as Validate;
        return validate;
      };
      const lazy = function (this: unknown, ...args: unknown[]) {
        const valid = compiled().apply(this, args);
        errors = compiled().errors;
        if (valid || !holdsAtMost(args[0], LIST_ALL_WITHIN)) return valid;
        // Fastify hands its ajv options here (JSON Schema, not JTD: app.ts sets no `mode`).
        const listing = { ...options, customOptions: { ...options?.customOptions, allErrors: true } };
        compileAll ??= build(externalSchemas, listing as Parameters<BuildValidator>[1]);
        validateAll ??= compileAll(route) as unknown as Validate;
        validateAll.apply(this, args);
        errors = validateAll.errors;
        return valid;
      };
      Object.defineProperty(lazy, 'errors', { get: () => errors });
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
