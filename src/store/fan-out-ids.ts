import { randomUUID } from 'node:crypto';
import { idPrefix } from '../notifications/ids.ts';

/**
 * The IDs of the notifications a broadcast's fan-out makes in SQL, a chunk at a time (a SQLite
 * step, a PostgreSQL range): UUIDv7-shaped like any other, and ascending with the chunk's rows.
 * After the chunk's millisecond (`idPrefix`) come a random part drawn once a chunk (26 bits: 3
 * nibbles, the variant and 3 more), the row's place in the chunk (4 nibbles; past 65,536 rows they
 * wrap and stop ascending, the random bits still keeping them apart) and 32 random bits of the
 * row's own. So a chunk appends its ID index entries at the index's right edge, as it does its
 * other indexes' and as ingest does; with 74 random bits a row each entry went to a random place
 * within the chunk's millisecond: a fifth to a quarter of the CPU of SQLite's 500-row steps, and
 * twice the half-page splits on PostgreSQL (decision records 0058, 0059). Two chunks of one
 * millisecond draw different random parts, so their IDs do not collide; 26 bits a chunk and 32 a
 * row keep an ID unguessable enough for URLs that are tenant-checked anyway.
 */
export function fanOutIdStart(now: number): string {
  // randomUUID() is xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: its 3 nibbles after the version, the
  // variant nibble and the next 3, with their dashes.
  return `${idPrefix(now)}${randomUUID().slice(15, 24)}`;
}

/** The SQL of the rest of a made ID, after `fanOutIdStart`: the row's place `k`, 32 random bits. */
export const fanOutIdRest = {
  sqlite: (k: string) => `printf('%04x%08x', ${k} & 65535, random() & 4294967295)`,
  postgres: (k: string) => `lpad(to_hex(${k} % 65536), 4, '0') || substr(gen_random_uuid()::text, 29)`,
};
