import { type EncodedColumns, type PackedColumns, packColumns } from '../store/port/notifications.ts';
import { packSources } from '../templates/fields.ts';
import { type CheckedItem, checkItem, type ItemVerdict } from './batch-items.ts';

/**
 * A batch body read off the event loop (batch-thread.ts): the verdict of each item, and an
 * outline of the body for the route's schema to check on the event loop (routes.ts).
 */
export type DecodedBatch =
  | {
      ok: true;
      /**
       * The body with every value the schema does not look at emptied: `notifications` as an
       * array of its length (or the scalar the validator coerces into a one-item array), other
       * keys with null, a body that is no object as an empty value of its type. The route's
       * validator gives it the same answer it gives the body (the same error, or none), at the
       * cost of a few properties however large the body.
       */
      outline: unknown;
      /** One per item, in order, when the body holds a list of items (else null). */
      verdicts: ItemVerdict[] | null;
    }
  /** Not JSON, or JSON Fastify's parser refuses (prototype poisoning), or empty. */
  | { ok: false; malformed: 'empty' | 'invalid' };

export type { CheckedItem, ItemVerdict };

/**
 * A key JSON.parse keeps as an own property that would poison a prototype once the value is
 * merged or copied: `__proto__`, and `constructor` holding `prototype`. Fastify's parser
 * (secure-json-parse) refuses these; so does this, walking without recursion.
 */
function poisoned(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (const child of current) if (typeof child === 'object' && child !== null) stack.push(child);
      continue;
    }
    if (Object.hasOwn(current, '__proto__')) return true;
    const ctor = (current as Record<string, unknown>).constructor;
    if (Object.hasOwn(current, 'constructor') && typeof ctor === 'object' && ctor !== null) {
      if (Object.hasOwn(ctor, 'prototype')) return true;
    }
    for (const key in current) {
      const child = (current as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return false;
}

/** A JSON body as Fastify's parser reads it, or why it refuses it (answered as Fastify answers). */
export type ParsedBody = { ok: true; body: unknown } | { ok: false; malformed: 'empty' | 'invalid' };

/**
 * Parses a request body as Fastify's JSON parser would: UTF-8, a leading BOM skipped, prototype
 * poisoning refused. The one home of that rule for every batch body read in a batch thread
 * (this file, recipients/batch-body.ts).
 */
export function parseBody(bytes: Uint8Array): ParsedBody {
  if (bytes.length === 0) return { ok: false, malformed: 'empty' };
  // Buffer's decoder, many times faster than TextDecoder's on megabytes; a BOM is skipped, as
  // secure-json-parse skips it.
  let text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, malformed: 'invalid' };
  }
  if (poisoned(body)) return { ok: false, malformed: 'invalid' };
  return { ok: true, body };
}

/**
 * The checked items with their columns packed in one shared buffer (see PackedColumns), and their
 * Liquid sources in another (packSources).
 */
function packed(verdicts: ItemVerdict[]): ItemVerdict[] {
  const items = verdicts.flatMap((v) => ('item' in v ? [v.item] : []));
  const columns = packColumns(items.map((item) => item.encoded as EncodedColumns));
  items.forEach((item, i) => {
    item.encoded = columns[i] as PackedColumns;
  });
  packSources(items.flatMap((item) => item.liquid ?? []));
  return verdicts;
}

/** An empty value of the same JSON type (the schema's type errors depend on nothing else). */
function emptied(value: unknown): unknown {
  if (Array.isArray(value)) return [];
  if (typeof value === 'string') return '';
  if (typeof value === 'object' && value !== null) return {};
  return value;
}

/**
 * The items of a `notifications` value as the route's validator reads it (Fastify's ajv with
 * `coerceTypes: 'array'`): an array as it is, a scalar as an array of itself, an object as no
 * list at all (the validator refuses it).
 */
function listOf(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (typeof value === 'object' && value !== null) return undefined;
  return [value];
}

/**
 * Reads a batch body as Fastify's JSON parser would (UTF-8, a leading BOM skipped, prototype
 * poisoning refused) and checks each item at `now` (its recipient digested with the tenant's
 * `digestKey`). Runs in the batch thread: a 7 MiB body is tens of milliseconds of parsing and
 * checking, which the event loop must not spend.
 */
export function decodeBatch(
  bytes: Uint8Array,
  now: number,
  pushAllowedHosts: readonly string[],
  digestKey: Uint8Array,
): DecodedBatch {
  const parsed = parseBody(bytes);
  if (!parsed.ok) return parsed;
  const { body } = parsed;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: true, outline: emptied(body), verdicts: null };
  }
  const record = body as Record<string, unknown>;
  const outline: Record<string, unknown> = {};
  let list: unknown[] | undefined;
  for (const key of Object.keys(record)) {
    if (key !== 'notifications') {
      outline[key] = null;
      continue;
    }
    list = listOf(record.notifications);
    outline[key] = Array.isArray(record.notifications)
      ? new Array<number>(record.notifications.length).fill(0)
      : emptied(record.notifications);
  }
  // Items are checked only when the validator could take the body: a batch of 1,000 with one
  // unknown top-level key is refused whole, at the cost of none of its items.
  const checkable = list !== undefined && list.length >= 1 && list.length <= MAX_ITEMS;
  const verdicts =
    checkable && Object.keys(outline).length === 1
      ? packed(
          (list as unknown[]).map((raw, index) => checkItem(raw, index, now, pushAllowedHosts, digestKey)),
        )
      : null;
  return { ok: true, outline, verdicts };
}

/** The most items a batch holds (the contract's limit; the route's schema says it too). */
export const MAX_ITEMS = 1000;
