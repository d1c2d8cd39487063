import type { Attributes, AttributeValue, HrTime, Link, SpanContext } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/**
 * OTLP/protobuf `ExportTraceServiceRequest`s written straight from the SDK's finished spans, for
 * the span processor (processor.ts): the same message, field for field, as the SDK's own
 * serializer writes (test/tracing/otlp-protobuf.test.ts compares them), at less cost a span. The
 * resource and the scope are encoded once and reused, an attribute key once per thread, ids are
 * written from their hex straight into the buffer, and each span in one pass (the SDK's writes a
 * batch twice: once to size it, once to fill it), its length prepended when it is done.
 */

/**
 * What the encoder reads of a finished span: the SDK's spans (`ReadableSpan`) and Herald's own
 * (span.ts) both are one.
 */
export type EncodableSpan = Pick<
  ReadableSpan,
  | 'name'
  | 'kind'
  | 'spanContext'
  | 'parentSpanContext'
  | 'startTime'
  | 'endTime'
  | 'status'
  | 'attributes'
  | 'links'
  | 'events'
  | 'resource'
  | 'instrumentationScope'
  | 'droppedAttributesCount'
  | 'droppedEventsCount'
  | 'droppedLinksCount'
>;

/** What a batch's spans share: one resource and one scope (every span a Herald thread makes). */
export type Scoped = Pick<EncodableSpan, 'resource' | 'instrumentationScope'>;

/**
 * One span as the `spans` field of a ScopeSpans (tag, length, Span), in a buffer of this module
 * that the next call overwrites: the caller copies it.
 */
export function encodeSpan(span: EncodableSpan): Uint8Array {
  pos = 0;
  writeSpan(span);
  return bytes.subarray(0, pos);
}

/** The request of `spans`, the `encodeSpan` bytes of spans that all share `scoped`'s resource and scope. */
export function traceRequest(scoped: Scoped, spans: Uint8Array): Uint8Array {
  const { head, tail } = heading(scoped);
  const scopeSpans = head.scope.length + spans.length + tail.scope.length;
  const resourceSpans = head.resource.length + 1 + varintSize(scopeSpans) + scopeSpans + tail.resource.length;
  const message = new Uint8Array(1 + varintSize(resourceSpans) + resourceSpans);
  let at = 0;
  const put = (part: Uint8Array) => {
    message.set(part, at);
    at += part.length;
  };
  // ExportTraceServiceRequest.resource_spans (1) { resource (1), scope_spans (2) { scope (1), spans… } }
  message[at++] = 0x0a;
  at = putVarint(at, resourceSpans, message);
  put(head.resource);
  message[at++] = 0x12;
  at = putVarint(at, scopeSpans, message);
  put(head.scope);
  put(spans);
  put(tail.scope);
  put(tail.resource);
  return message;
}

/** The writer's buffer, kept between exports (each export copies its message out of it). */
let bytes = Buffer.allocUnsafeSlow(1 << 16);
let pos = 0;
const view = () => new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
let data = view();

const MAX_VARINT32 = 5;

function ensure(n: number): void {
  if (pos + n <= bytes.length) return;
  let size = bytes.length * 2;
  while (size < pos + n) size *= 2;
  const grown = Buffer.allocUnsafeSlow(size);
  bytes.copy(grown, 0, 0, pos);
  bytes = grown;
  data = view();
}

function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Writes unsigned 32-bit `v` at `at` of `into` (room already ensured); the position after it. */
function putVarint(at: number, v: number, into: Uint8Array = bytes): number {
  while (v > 0x7f) {
    into[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  into[at++] = v;
  return at;
}

function varint(v: number): void {
  ensure(MAX_VARINT32);
  pos = putVarint(pos, v >>> 0);
}

/** A 64-bit varint from an integral number of int64's range (a negative one in two's complement). */
function varint64(value: number): void {
  if (value >= 0 && value <= 0xffffffff) {
    varint(value);
    return;
  }
  ensure(10);
  let low: number;
  let high: number;
  const abs = Math.abs(value);
  low = abs >>> 0;
  high = (abs / 0x100000000) >>> 0;
  if (value < 0) {
    low = ~low >>> 0;
    high = ~high >>> 0;
    low = (low + 1) >>> 0;
    if (low === 0) high = (high + 1) >>> 0;
  }
  while (high > 0 || low > 0x7f) {
    bytes[pos++] = (low & 0x7f) | 0x80;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  bytes[pos++] = low;
}

/** Reserves `reserved` bytes for the length of a message that starts after them. */
function open(reserved: number): number {
  ensure(reserved);
  const at = pos;
  pos += reserved;
  return at;
}

/** Writes the length of the message opened at `at`, moving it when its length takes more or fewer bytes. */
function close(at: number, reserved: number): void {
  const length = pos - at - reserved;
  const size = varintSize(length);
  if (size !== reserved) {
    ensure(size - reserved);
    bytes.copyWithin(at + size, at + reserved, pos);
    pos += size - reserved;
  }
  putVarint(at, length);
}

/** A tag of one byte (a field number below 16). */
function tag(t: number): void {
  ensure(1);
  bytes[pos++] = t;
}

function string(s: string): void {
  const n = s.length;
  let ascii = true;
  for (let i = 0; i < n; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    ensure(MAX_VARINT32 + n);
    pos = putVarint(pos, n);
    for (let i = 0; i < n; i++) bytes[pos++] = s.charCodeAt(i);
    return;
  }
  const size = Buffer.byteLength(s, 'utf8');
  ensure(MAX_VARINT32 + size);
  pos = putVarint(pos, size);
  pos += bytes.write(s, pos, size, 'utf8');
}

/** A trace or span id (hex, as the SDK keeps it) as length-delimited bytes. */
function id(hex: string): void {
  const n = hex.length >>> 1;
  ensure(1 + n);
  bytes[pos++] = n;
  for (let i = 0; i < 2 * n; i += 2)
    bytes[pos++] = PAIRS[(hex.charCodeAt(i) << 7) | hex.charCodeAt(i + 1)] as number;
}

/**
 * Each pair of hex digits' byte, by their two character codes (7 bits each): one look-up a byte.
 * Upper case is read as the SDK's hexToBinary reads it; ids are lower case.
 */
const PAIRS = (() => {
  const table = new Uint8Array(1 << 14);
  const digits = '0123456789abcdefABCDEF';
  const value = (c: string) => Number.parseInt(c, 16);
  for (const a of digits)
    for (const b of digits) table[(a.charCodeAt(0) << 7) | b.charCodeAt(0)] = (value(a) << 4) | value(b);
  return table;
})();

function fixed32(v: number): void {
  ensure(4);
  data.setUint32(pos, v >>> 0, true);
  pos += 4;
}

/** An HrTime ([seconds, nanoseconds]) as fixed64 nanoseconds, exact past 2^53. */
function time(t: HrTime): void {
  ensure(8);
  const [seconds, nanos] = t;
  // seconds × 1e9 = high × 1e9 × 2^16 + low × 1e9, each product below 2^53.
  const low = (seconds & 0xffff) * 1e9;
  const high = ((seconds / 0x10000) >>> 0) * 1e9;
  const sum = (low % 0x100000000) + (high & 0xffff) * 0x10000 + nanos;
  const lo = sum >>> 0;
  const hi =
    (Math.floor(low / 0x100000000) + Math.floor(high / 0x10000) + Math.floor(sum / 0x100000000)) >>> 0;
  data.setUint32(pos, lo, true);
  data.setUint32(pos + 4, hi, true);
  pos += 8;
}

/** The W3C flags and whether the context is remote, as OTLP's span and link `flags` hold them. */
const flags = (traceFlags: number, isRemote: boolean | undefined): number =>
  (traceFlags & 0xff) | 0x100 | (isRemote ? 0x200 : 0);

/**
 * What the encoder keeps of an attribute key: its KeyValue.key field (tag, length, UTF-8),
 * encoded once, and the last value it was written with; once the same value comes twice in a
 * row (a tenant, a channel, a provider, an outcome: most of Herald's attributes repeat), its
 * whole KeyValue (length, key, value) is kept and copied as it is while the value stays the same.
 */
interface Key {
  field: Buffer;
  last: unknown;
  keyValue: Uint8Array | undefined;
}
const keys = new Map<string, Key>();
const MAX_KEYS = 1024;

function keyOf(k: string): Key {
  let known = keys.get(k);
  if (known === undefined) {
    const utf8 = Buffer.from(k, 'utf8');
    const field = Buffer.allocUnsafe(1 + varintSize(utf8.length) + utf8.length);
    field[0] = 0x0a;
    utf8.copy(field, putVarint(1, utf8.length, field));
    known = { field, last: undefined, keyValue: undefined };
    if (keys.size < MAX_KEYS) keys.set(k, known);
  }
  return known;
}

/** Attributes as repeated KeyValue of field `field` (its one-byte tag). */
function attributes(attrs: Attributes, fieldTag: number): void {
  for (const k in attrs) {
    if (!Object.hasOwn(attrs, k)) continue;
    const value = attrs[k];
    tag(fieldTag);
    const known = keyOf(k);
    if (known.keyValue !== undefined && known.last === value) {
      ensure(known.keyValue.length);
      bytes.set(known.keyValue, pos);
      pos += known.keyValue.length;
      continue;
    }
    const kv = open(1);
    ensure(known.field.length);
    bytes.set(known.field, pos);
    pos += known.field.length;
    tag(0x12);
    const any = open(1);
    anyValue(value);
    close(any, 1);
    close(kv, 1);
    // A scalar written twice in a row is kept whole (an array or a list is written each time).
    const repeated = known.last === value && (typeof value !== 'object' || value === null);
    known.last = value;
    known.keyValue = repeated ? Uint8Array.from(bytes.subarray(kv, pos)) : undefined;
  }
}

const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** An attribute value as AnyValue's fields (what the SDK's writeAnyValue writes for each type). */
function anyValue(value: AttributeValue | Uint8Array | object | undefined | null): void {
  if (typeof value === 'string') {
    tag(0x0a);
    string(value);
  } else if (typeof value === 'boolean') {
    tag(0x10);
    varint(value ? 1 : 0);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
      tag(0x18);
      varint64(value);
    } else {
      tag(0x21);
      ensure(8);
      data.setFloat64(pos, value, true);
      pos += 8;
    }
  } else if (value instanceof Uint8Array) {
    tag(0x3a);
    varint(value.length);
    ensure(value.length);
    bytes.set(value, pos);
    pos += value.length;
  } else if (Array.isArray(value)) {
    tag(0x2a);
    const array = open(1);
    for (const item of value) {
      tag(0x0a);
      const one = open(1);
      anyValue(item);
      close(one, 1);
    }
    close(array, 1);
  } else if (typeof value === 'object' && value !== null) {
    tag(0x32);
    const list = open(1);
    attributes(value as Attributes, 0x0a);
    close(list, 1);
  }
}

/** Span (opentelemetry/proto/trace/v1/trace.proto), its fields in number order as the SDK's. */
function writeSpan(span: EncodableSpan): void {
  tag(0x12); // ScopeSpans.spans (2)
  const at = open(2);
  const ctx = span.spanContext();
  ids(ctx);
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    tag(0x22);
    id(parent.spanId);
  }
  tag(0x2a);
  string(span.name);
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    tag(0x30);
    varint(kind);
  }
  tag(0x39);
  time(span.startTime);
  tag(0x41);
  time(span.endTime);
  if (span.attributes) attributes(span.attributes, 0x4a);
  tag(0x50);
  varint(span.droppedAttributesCount);
  for (const event of span.events) writeEvent(event);
  tag(0x60);
  varint(span.droppedEventsCount);
  for (const link of span.links) writeLink(link);
  tag(0x70);
  varint(span.droppedLinksCount);
  // status (15): message (2) when there is one, code (3) always.
  ensure(2);
  bytes[pos++] = 0x7a;
  const s = open(1);
  if (span.status.message) {
    tag(0x12);
    string(span.status.message);
  }
  tag(0x18);
  varint(span.status.code);
  close(s, 1);
  // flags (16): a two-byte tag.
  ensure(2);
  bytes[pos++] = 0x85;
  bytes[pos++] = 0x01;
  fixed32(flags(ctx.traceFlags, parent?.isRemote));
  close(at, 2);
}

/** Span.events (11): an Event. */
function writeEvent(event: TimedEvent): void {
  tag(0x5a);
  const at = open(1);
  tag(0x09);
  time(event.time);
  tag(0x12);
  string(event.name);
  if (event.attributes) attributes(event.attributes, 0x1a);
  tag(0x20);
  varint(event.droppedAttributesCount || 0);
  close(at, 1);
}

/** Span.links (13): a Link, its fields as the span's own first three, then its own. */
function writeLink(link: Link): void {
  tag(0x6a);
  const at = open(1);
  ids(link.context);
  if (link.attributes) attributes(link.attributes, 0x22);
  tag(0x28);
  varint(link.droppedAttributesCount || 0);
  tag(0x35);
  fixed32(flags(link.context.traceFlags, link.context.isRemote));
  close(at, 1);
}

/** trace_id (1), span_id (2) and trace_state (3), when there is one: a Span's and a Link's first fields. */
function ids(ctx: SpanContext): void {
  tag(0x0a);
  id(ctx.traceId);
  tag(0x12);
  id(ctx.spanId);
  traceState(ctx, 0x1a);
}

function traceState(ctx: SpanContext, fieldTag: number): void {
  const state = ctx.traceState?.serialize();
  if (state) {
    tag(fieldTag);
    string(state);
  }
}

/** What comes before a batch's spans and after them, encoded once for a resource and a scope. */
interface Heading {
  head: { resource: Buffer; scope: Buffer };
  tail: { scope: Buffer; resource: Buffer };
}
let kept: { resource: unknown; scope: unknown; heading: Heading } | undefined;

function heading(span: Scoped): Heading {
  const { resource, instrumentationScope: scope } = span;
  if (kept?.resource === resource && kept.scope === scope) return kept.heading;
  const heading = encodeHeading(span);
  // A resource still detecting attributes may have more at the next export: not kept then.
  if (!resource.asyncAttributesPending) kept = { resource, scope, heading };
  return heading;
}

/** Writes `fn`'s fields into the buffer and returns a copy of them. */
function encoded(fn: () => void): Buffer {
  pos = 0;
  fn();
  return Buffer.from(bytes.subarray(0, pos));
}

function encodeHeading(span: Scoped): Heading {
  const { resource, instrumentationScope: scope } = span;
  // ResourceSpans.resource (1): Resource { attributes (1), dropped_attributes_count (2) = 0 }
  const resourceField = encoded(() => {
    tag(0x0a);
    const r = open(1);
    if (resource.attributes) attributes(resource.attributes, 0x0a);
    tag(0x10);
    varint(0);
    close(r, 1);
  });
  // ScopeSpans.scope (1): InstrumentationScope { name, version, attributes, dropped count }
  const scopeField = encoded(() => {
    tag(0x0a);
    const s = open(1);
    tag(0x0a);
    string(scope.name);
    if (scope.version) {
      tag(0x12);
      string(scope.version);
    }
    const withAttributes = scope as { attributes?: Attributes; droppedAttributesCount?: number };
    if (withAttributes.attributes) attributes(withAttributes.attributes, 0x1a);
    if (withAttributes.droppedAttributesCount) {
      tag(0x20);
      varint(withAttributes.droppedAttributesCount);
    }
    close(s, 1);
  });
  // schema_url (3) of ScopeSpans and of ResourceSpans, after the spans.
  const schema = (url: string | undefined) =>
    encoded(() => {
      if (url) {
        tag(0x1a);
        string(url);
      }
    });
  return {
    head: { resource: resourceField, scope: scopeField },
    tail: { scope: schema(scope.schemaUrl), resource: schema(resource.schemaUrl) },
  };
}
