import { type TSchema, Type } from '@sinclair/typebox';
import { HeraldError } from '../errors.ts';
import { nullable } from './schema.ts';

/**
 * Cursor pagination, the one way every list route pages: the route asks the store for
 * `limit + 1` rows, the extra one says whether a next page exists, and the cursor is the last
 * shown row's key wrapped in base64url. A cursor is opaque to clients; one that does not decode
 * to this list's kind of key is a 400, never a 500 nor a silently wrong page.
 */
export interface Cursor<K> {
  encode(key: K): string;
  /** The key of a cursor; undefined for no cursor; VALIDATION_FAILED for a foreign or forged one. */
  decode(cursor: string | undefined): K | undefined;
}

const invalidCursor = () =>
  new HeraldError('VALIDATION_FAILED', 'The cursor is invalid.', {
    errors: [
      { path: 'querystring/cursor', message: 'must be the nextCursor of a previous page of this list' },
    ],
  });

/** A cursor over a numeric key (a sequence or row id), tagged so one list's cursor fails on another. */
export function numericCursor(tag: string): Cursor<number> {
  const pattern = new RegExp(`^${tag}:(\\d{1,15})$`);
  return {
    encode: (key) => Buffer.from(`${tag}:${key}`).toString('base64url'),
    decode(cursor) {
      if (cursor === undefined) return undefined;
      const match = pattern.exec(Buffer.from(cursor, 'base64url').toString());
      if (!match) throw invalidCursor();
      return Number(match[1]);
    },
  };
}

/** A cursor over a text key (a template key), tagged likewise. */
export function textCursor(tag: string, keyPattern: RegExp): Cursor<string> {
  return {
    encode: (key) => Buffer.from(`${tag}:${key}`).toString('base64url'),
    decode(cursor) {
      if (cursor === undefined) return undefined;
      const text = Buffer.from(cursor, 'base64url').toString();
      const key = text.startsWith(`${tag}:`) ? text.slice(tag.length + 1) : '';
      if (!keyPattern.test(key)) throw invalidCursor();
      return key;
    },
  };
}

/**
 * One page of `rows` (fetched with limit + 1) and the cursor of the next, or null on the last. A
 * read that stopped short after looking at its share of rows (`scannedTo`, ScannedPage) goes on
 * below the last row it looked at: a short page, even an empty one, then has a next cursor (the
 * last page is the one whose nextCursor is null).
 */
export function pageOf<T, K>(
  rows: readonly T[],
  limit: number,
  cursor: Cursor<K>,
  keyOf: (row: T) => K,
  scannedTo?: K,
): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  if (rows.length > limit && last !== undefined) return { page, nextCursor: cursor.encode(keyOf(last)) };
  return { page, nextCursor: scannedTo === undefined ? null : cursor.encode(scannedTo) };
}

/** The answer of a list route (`pageOf`): a page of `item`s and the next cursor, null on the last page. */
export const PageSchema = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), nextCursor: nullable(Type.String()) });
