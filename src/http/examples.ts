import type { Static, TSchema } from '@sinclair/typebox';

/**
 * The schema with an example for the OpenAPI document (`examples`, which the document shows
 * beside the body or parameter it illustrates). Typed, so an example cannot drift from its
 * schema's shape; test/http/openapi-examples.test.ts checks the rest (formats, patterns).
 */
export function withExample<T extends TSchema>(schema: T, example: Static<T>): T {
  return { ...schema, examples: [example] };
}

/** The example `withExample` gave a schema, to build a bigger one from (a list of them). */
export function exampleOf<T extends TSchema>(schema: T): Static<T> {
  const [example] = (schema as T & { examples?: unknown[] }).examples ?? [];
  if (example === undefined) throw new TypeError('this schema has no example');
  return example as Static<T>;
}
