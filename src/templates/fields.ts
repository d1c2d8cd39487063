import { createHash } from 'node:crypto';
import type { Content } from '../channels.ts';

/**
 * The Liquid source fields a template or inline content may carry, apart from Liquid itself
 * (liquid.ts): the dispatch thread reads these but renders nothing, so it never loads liquidjs.
 */
export const TEXT_FIELDS = ['subject', 'text', 'html', 'title', 'body', 'url'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

/**
 * One field's Liquid source, as the syntax check sends it to a render thread: its text, or its
 * UTF-8 in shared memory (a batch's, read off the event loop: batch-body.ts), which crosses
 * threads without a copy; and the digest its verdict is remembered by (liquidDigest), so that
 * the event loop never holds nor compares a batch's sources as text.
 */
export interface LiquidSource {
  field: TextField;
  source: string | Uint8Array;
  digest: string;
}

/** Whether a source has Liquid markup at all (most inline content has none). */
export function hasLiquid(source: string): boolean {
  return /{[{%]/.test(source);
}

/** The digest of a field's source: the same for its text and for its UTF-8 bytes. */
export function liquidDigest(field: TextField, source: string | Uint8Array): string {
  return createHash('sha256').update(field).update('\u0000').update(source).digest('base64url');
}

/** The fields of `content` that hold Liquid markup (none: nothing to check). */
export function liquidSources(content: Content): LiquidSource[] {
  return TEXT_FIELDS.flatMap((field) => {
    const source = content[field];
    return typeof source === 'string' && hasLiquid(source)
      ? [{ field, source, digest: liquidDigest(field, source) }]
      : [];
  });
}

/** A source's text, decoded where it is parsed (a render thread) when it came as bytes. */
export function sourceText(source: string | Uint8Array): string {
  return typeof source === 'string'
    ? source
    : Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString('utf8');
}

/**
 * The sources' text packed as UTF-8 into one SharedArrayBuffer, each source then a view of it:
 * what a batch thread hands on, so that megabytes of Liquid reach the render threads without
 * being copied onto, or collected by, the event loop in between.
 */
export function packSources(sources: LiquidSource[]): void {
  const total = sources.reduce((sum, s) => sum + Buffer.byteLength(s.source as string), 0);
  const shared = Buffer.from(new SharedArrayBuffer(total));
  let at = 0;
  for (const s of sources) {
    const start = at;
    at += shared.write(s.source as string, at);
    s.source = new Uint8Array(shared.buffer, start, at - start);
  }
}
