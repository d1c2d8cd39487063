import { type TSchema, Type } from '@sinclair/typebox';

/** One of a fixed set of strings (channels, priorities, statuses): a union of their literals. */
export const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((value) => Type.Literal(value)));

/** A value or null. */
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
