// From the compiler's entry, which the build bundles (scripts/build.mjs), not a second copy.
import { type ValueError, ValueErrorType } from '@sinclair/typebox/compiler';

/**
 * The wording of every field error (`errors[].message` of a `400 VALIDATION_FAILED`), whichever
 * check found it: Fastify's ajv (route schemas, error-handler.ts), TypeBox's compiled checks (one
 * notification, notifications/validate.ts) and the hand-written checks. One style, ajv's: it
 * starts with "must", is lower-case but for ajv's "NOT", names the property it is about, and
 * states the limit it broke ("must be at least 8 characters", not "is invalid").
 * test/http/validation-messages.test.ts sweeps bad bodies across the routes to hold this.
 */

/**
 * The most field errors one answer lists. A body could hold thousands (an unknown key every few
 * bytes): the answer stops at this many.
 */
export const MAX_FIELD_ERRORS = 100;

/**
 * A value a route's schema refuses gets every error when it holds at most this many JSON values
 * (nearly every request written by hand), else its first error (lazy-compilers.ts says why).
 */
export const LIST_ALL_WITHIN = 256;

/** What one schema keyword reported: ajv's error names (keyword, params), which TypeBox's map to. */
export interface BrokenRule {
  keyword: string;
  params: Record<string, unknown>;
}

/** What each described pattern means, by its source (describedPattern). */
const PATTERNS = new Map<string, string>();

/**
 * A schema's `pattern`, with what it means in words: a failed match reads "must be an E.164
 * phone number…", not the regular expression. The words say any length the pattern holds.
 * Returns the pattern, so a schema can name it inline.
 */
export function describedPattern(pattern: string, meaning: string): string {
  PATTERNS.set(pattern, meaning);
  return pattern;
}

const count = (n: unknown, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A value none of a fixed set (channels, priorities, statuses), or not the one value allowed. */
export function oneOf(choices: readonly unknown[]): string {
  // String(): join() would write null as nothing.
  const words = choices.map(String);
  return words.length === 1 ? `must be ${words[0]}` : `must be one of ${words.join(', ')}`;
}

/** A string or key holding U+0000, which PostgreSQL text cannot store (no field needs it). */
export const NUL_MESSAGE = 'must NOT contain the character U+0000';

/** A variables, metadata or push data value nested deeper than the contract's limit. */
export const tooDeep = (levels: number) => `must NOT nest more than ${levels} levels deep`;

/** A time that matches the ISO 8601 form but names no real moment (2026-02-30). */
export const NOT_A_TIME = 'must be a time that exists, such as 2026-01-01T09:00:00Z';

/** The message of one broken rule; `fallback` (ajv's own words) for a keyword not worded here. */
export function fieldMessage({ keyword, params }: BrokenRule, fallback = 'must be valid'): string {
  switch (keyword) {
    case 'required':
      return `must have required property '${params.missingProperty}'`;
    case 'additionalProperties':
      return `must NOT have additional property '${params.additionalProperty}'`;
    case 'minLength':
      return `must be at least ${count(params.limit, 'character')}`;
    case 'maxLength':
      return `must NOT have more than ${count(params.limit, 'character')}`;
    case 'minItems':
      return `must have at least ${count(params.limit, 'item')}`;
    case 'maxItems':
      return `must NOT have more than ${count(params.limit, 'item')}`;
    case 'minProperties':
      return `must have at least ${count(params.limit, 'property', 'properties')}`;
    case 'maxProperties':
      return `must NOT have more than ${count(params.limit, 'property', 'properties')}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${params.comparison} ${params.limit}`;
    case 'type':
      return `must be ${String(params.type).split(',').join(' or ')}`;
    case 'const':
      return oneOf([params.allowedValue]);
    case 'enum':
      return oneOf(params.allowedValues as unknown[]);
    case 'pattern':
      return PATTERNS.get(String(params.pattern)) ?? `must match pattern "${params.pattern}"`;
    case 'format':
      return `must match format "${params.format}"`;
    default:
      return fallback;
  }
}

const lastSegment = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * TypeBox's errors of a limit, as the ajv keyword that holds the limit (and, for a number, the
 * comparison ajv names in its params).
 */
const LIMITS: Partial<Record<ValueErrorType, [keyword: string, comparison?: string]>> = {
  [ValueErrorType.StringMinLength]: ['minLength'],
  [ValueErrorType.StringMaxLength]: ['maxLength'],
  [ValueErrorType.ArrayMinItems]: ['minItems'],
  [ValueErrorType.ArrayMaxItems]: ['maxItems'],
  [ValueErrorType.ObjectMinProperties]: ['minProperties'],
  [ValueErrorType.ObjectMaxProperties]: ['maxProperties'],
  [ValueErrorType.NumberMinimum]: ['minimum', '>='],
  [ValueErrorType.IntegerMinimum]: ['minimum', '>='],
  [ValueErrorType.NumberMaximum]: ['maximum', '<='],
  [ValueErrorType.IntegerMaximum]: ['maximum', '<='],
  [ValueErrorType.NumberExclusiveMinimum]: ['exclusiveMinimum', '>'],
  [ValueErrorType.IntegerExclusiveMinimum]: ['exclusiveMinimum', '>'],
  [ValueErrorType.NumberExclusiveMaximum]: ['exclusiveMaximum', '<'],
  [ValueErrorType.IntegerExclusiveMaximum]: ['exclusiveMaximum', '<'],
};

/** The value a union of literals allows (TypeBox's `Union([Literal…])`), or undefined for another union. */
function literalChoices(schema: Record<string, unknown>): unknown[] | undefined {
  const branches = schema.anyOf as Record<string, unknown>[] | undefined;
  if (!branches?.every((b) => 'const' in b)) return undefined;
  return branches.map((b) => b.const);
}

/** A TypeBox value error as the ajv rule it breaks, so both read alike. */
export function ruleOfTypeBox(error: ValueError): BrokenRule {
  const schema = error.schema as unknown as Record<string, unknown>;
  const limit = LIMITS[error.type];
  if (limit) {
    const [keyword, comparison] = limit;
    return { keyword, params: { comparison, limit: schema[keyword] } };
  }
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return { keyword: 'required', params: { missingProperty: lastSegment(error.path) } };
    case ValueErrorType.ObjectAdditionalProperties:
      return { keyword: 'additionalProperties', params: { additionalProperty: lastSegment(error.path) } };
    case ValueErrorType.StringPattern:
      return { keyword: 'pattern', params: { pattern: schema.pattern } };
    case ValueErrorType.StringFormat:
      return { keyword: 'format', params: { format: schema.format } };
    case ValueErrorType.Literal:
      return { keyword: 'const', params: { allowedValue: schema.const } };
    case ValueErrorType.Union: {
      const choices = literalChoices(schema);
      if (choices) return { keyword: 'enum', params: { allowedValues: choices } };
      // A union of types (a number or null): "must be number or null".
      const types = (schema.anyOf as Record<string, unknown>[] | undefined)?.map((b) => b.type);
      return types?.every((t) => typeof t === 'string')
        ? { keyword: 'type', params: { type: types.join(',') } }
        : { keyword: 'anyOf', params: {} };
    }
    default:
      return { keyword: 'type', params: { type: TYPES[error.type] ?? 'valid' } };
  }
}

/** The JSON type each of TypeBox's type errors expects, as ajv names it. */
const TYPES: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.String]: 'string',
  [ValueErrorType.Number]: 'number',
  [ValueErrorType.Integer]: 'integer',
  [ValueErrorType.Boolean]: 'boolean',
  [ValueErrorType.Object]: 'object',
  [ValueErrorType.Array]: 'array',
  [ValueErrorType.Null]: 'null',
};
