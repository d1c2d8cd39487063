import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { OptionalKind } from '@sinclair/typebox';
import { parseCidr } from './cidr.ts';

/** The environment as handed to `loadConfig`: `process.env` at start, a plain object in tests. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A bad configuration value; the message names the variable so start-up fails readably. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

const raw = (env: Env, name: string) => {
  const value = env[name]?.trim();
  return value ? value : undefined;
};

/** A URL's credentials are never echoed in an error. */
const masked = (value: string) => value.replace(/\/\/[^@/]*@/, '//***@');

const literals = (schema: TSchema): string[] | undefined =>
  Array.isArray(schema.anyOf) ? schema.anyOf.map((s: TSchema) => String(s.const)) : undefined;

function oneOf(name: string, value: string, allowed: string[]): string {
  if (!allowed.includes(value))
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
  return value;
}

/** One variable's value by its schema: whole numbers in range, booleans, one of a set, URLs, lists. */
function parse(name: string, value: string, schema: TSchema): unknown {
  if (schema.type === 'integer') {
    if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be a whole number, got "${value}"`);
    const n = Number(value);
    if (n < schema.minimum || n > schema.maximum) {
      throw new ConfigError(name, `must be between ${schema.minimum} and ${schema.maximum}, got ${n}`);
    }
    return n;
  }
  if (schema.type === 'boolean') {
    const v = value.toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    throw new ConfigError(name, `must be true or false, got "${value}"`);
  }
  if (schema.type === 'array') {
    const items = value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
    const allowed = literals(schema.items);
    for (const item of items) {
      if (allowed && !allowed.includes(item)) {
        throw new ConfigError(name, `unknown value "${item}"; expected some of ${allowed.join(',')}`);
      }
      const pattern = schema.items?.pattern;
      if (typeof pattern === 'string' && !new RegExp(pattern).test(item)) {
        throw new ConfigError(name, `"${masked(item)}" must match ${pattern}`);
      }
      if (schema.cidr && !parseCidr(item)) {
        throw new ConfigError(name, `"${item}" is not an IP address or CIDR range`);
      }
    }
    return items;
  }
  const allowed = literals(schema);
  if (allowed) return oneOf(name, value, allowed);
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value)) {
    throw new ConfigError(name, `must match ${schema.pattern}, got "${masked(value)}"`);
  }
  if (schema.format === 'url') {
    try {
      new URL(value);
    } catch {
      throw new ConfigError(name, `must be a URL, got "${masked(value)}"`);
    }
  }
  return value;
}

const isOptional = (schema: TSchema) => schema[OptionalKind] === 'Optional';

/**
 * Reads one section of the configuration by its schema. Unset variables take their schema's
 * default; derived ones (a default computed from others) stay undefined for loadConfig to fill.
 * A group (an object with a `trigger`) is read only when its trigger is set, and then its
 * required variables must be set too.
 */
export function readSection<T extends TObject>(env: Env, schema: T, trigger?: string): Static<T> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(schema.properties) as Array<[string, TSchema]>) {
    if (s.type === 'object') {
      if (raw(env, s.trigger) !== undefined) out[key] = readSection(env, s as TObject, s.trigger);
      continue;
    }
    const name = s.env as string;
    const value = raw(env, name);
    if (value !== undefined) out[key] = parse(name, value, s);
    else if (s.default !== undefined) out[key] = structuredClone(s.default);
    else if (trigger && !isOptional(s) && s.derived === undefined) {
      throw new ConfigError(name, `is required with ${trigger}`);
    }
  }
  return out as Static<T>;
}
