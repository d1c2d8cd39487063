import { createHash, randomUUID } from 'node:crypto';

/**
 * A UUIDv7-shaped notification ID: 48 bits of milliseconds, then random bits. Time-ordered IDs
 * land at the right edge of the unique index instead of random pages, which keeps bulk ingest
 * from thrashing the B-tree; the random part (74 bits) keeps them unguessable enough for URLs
 * that are tenant-checked anyway.
 */
export function notificationId(now: number): string {
  // randomUUID() is xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; keep its last three groups and 3 nibbles.
  return `${idPrefix(now)}${randomUUID().slice(15)}`;
}

/**
 * The part of a notification ID fixed by its time: 48 bits of milliseconds and the version
 * nibble. A broadcast's fan-out appends the rest in SQL (store/fan-out-ids.ts).
 */
export function idPrefix(now: number): string {
  const time = now.toString(16).padStart(12, '0').slice(-12);
  return `${time.slice(0, 8)}-${time.slice(8)}-7`;
}

/** JSON with object keys sorted at every level, so equal bodies hash equally whatever their key order. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** sha256 of the canonical body: what an Idempotency-Key is compared against. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64url');
}
