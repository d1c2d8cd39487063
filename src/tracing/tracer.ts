import {
  type Attributes,
  type Context,
  INVALID_SPANID,
  INVALID_TRACEID,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';

/**
 * Herald's spans (docs/tracing.md), made through `@opentelemetry/api` only: the SDK is loaded by
 * sdk.ts when the OTEL_* variables ask for it. Until then `tracingOn()` is false and every helper
 * here runs its function bare, so a Herald without tracing makes no span object, reads no
 * context and stores no trace context.
 *
 * What a span may hold is what a log may hold (http/logger.ts): ids, channels, priorities,
 * providers, statuses, counts. Never a recipient's address, a token, a secret, a body or a
 * template variable.
 */
/**
 * The tracer Herald's spans are made by while this thread exports spans, kept rather than looked
 * up (the API's lookup through the global, its proxy and the provider's map ran for every span);
 * undefined while it does not.
 */
let made: Tracer | undefined;

/** Whether this thread exports spans (set by sdk.ts once its provider is registered). */
export const tracingOn = (): boolean => made !== undefined;

/** Only sdk.ts switches tracing on, with the tracer to make spans by, and off (undefined). */
export function setTracer(tracer: Tracer | undefined): void {
  made = tracer;
}

/** What `inSpan` makes: the span's kind, attributes and links. */
export interface SpanSpec {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
}

/**
 * Runs `fn` in a span child of `parent` that ends when `fn` settles; a rejection marks it failed
 * with the error's name only (an error's text may quote a recipient). Without tracing, or without
 * a parent, it runs `fn(undefined)`. The parent is always passed by hand: no thread runs a context
 * manager, whose AsyncLocalStorage promise hooks cost every promise the thread makes, traced or
 * not (decision 0044).
 */
export function inSpan<T>(
  name: string,
  spec: SpanSpec,
  fn: (span: Span | undefined) => Promise<T>,
  parent: Context | undefined,
): Promise<T> {
  // Not an async function: without tracing, the caller's promise is fn's own, no extra turn.
  if (made === undefined || parent === undefined) return fn(undefined);
  return ended(startSpan(name, spec, parent), fn, undefined);
}

/**
 * Runs `fn` in `span` and ends it when `fn` settles, marking a rejection as failed; `processed`
 * is the id of the notification whose `process` span it is, forgotten by `processContext` then.
 */
async function ended<T>(
  span: Span,
  fn: (span: Span | undefined) => Promise<T>,
  processed: string | undefined,
): Promise<T> {
  try {
    return await fn(span);
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    if (processed !== undefined) processing.delete(processed);
    span.end();
  }
}

/**
 * The context of each notification's `process` span while this thread processes it, by the
 * notification's id: the parent its render and provider calls read (`processContext`), where an
 * active context would otherwise have carried it. A notification is processed once at a time.
 */
const processing = new Map<string, Context>();

/**
 * Runs `fn` in a span (as `inSpan`, with a parent always) that is the parent of what
 * `processContext(id)` starts meanwhile. One async frame (`ended`), not a closure of its own
 * inside `inSpan`'s: it runs for every notification processed.
 */
export function inProcessSpan<T>(
  id: string,
  name: string,
  spec: SpanSpec,
  fn: (span: Span | undefined) => Promise<T>,
  parent: Context,
): Promise<T> {
  if (made === undefined) return fn(undefined);
  const span = startSpan(name, spec, parent);
  processing.set(id, trace.setSpan(parent, span));
  return ended(span, fn, id);
}

/** The context of notification `id`'s `process` span, while it runs in this thread. */
export const processContext = (id: string | undefined): Context | undefined =>
  id === undefined ? undefined : processing.get(id);

/**
 * Runs `fn` and records it as an event `name` of `span` (a request's server span, or none
 * when the request is not traced), at the time `fn` settled, with how long it took
 * (`herald.wait_ms`) beside `attributes`: a step of the request too short and too frequent to pay
 * for a span of its own (a span costs its ids, its processor's work and its share of the export;
 * decision 0039). Without a span it runs `fn` bare.
 */
export function withEvent<T>(
  span: Span | undefined,
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  if (span === undefined) return fn();
  return recorded(span, name, attributes, fn);
}

async function recorded<T>(
  span: Span,
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  try {
    return await fn();
  } finally {
    span.addEvent(name, { ...attributes, 'herald.wait_ms': performance.now() - started });
  }
}

/**
 * Starts a span (the caller ends it: a request's server span, ended by its answer; or inSpan and
 * inProcessSpan), its attributes set after the start, not passed to it: the SDK's `startSpan`
 * copies and checks the attributes it is given twice (for the sampler, then again with the
 * sampler's) before the span checks each once more as it sets it; Herald's are ids, names and
 * counts, and no sampler the OTEL_TRACES_SAMPLER variable names reads them.
 */
export function startSpan(name: string, spec: SpanSpec, parent: Context): Span {
  const span = (made as Tracer).startSpan(name, { kind: spec.kind, links: spec.links }, parent);
  if (spec.attributes !== undefined) span.setAttributes(spec.attributes);
  return span;
}

/** Marks a span failed, naming the error's class or code, never its message. */
export function failed(span: Span, error: unknown): void {
  const type = (error as { code?: unknown })?.code ?? (error instanceof Error ? error.name : typeof error);
  span.setAttribute('error.type', String(type));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * The W3C `traceparent` of `span` (a request's server span, passed down by hand: there is no
 * active context, decision 0044), only when it is sampled: the form a notification
 * stores (migration 470) and a callback's request carries. Null otherwise. A tracer's span has
 * hex ids (made, or its parent's once checked) unless it is the invalid one, whose flags are 0.
 */
export function traceparentOf(span: Span | undefined): string | null {
  if (span === undefined) return null;
  const sc = span.spanContext();
  if (
    (sc.traceFlags & TraceFlags.SAMPLED) === 0 ||
    sc.traceId === INVALID_TRACEID ||
    sc.spanId === INVALID_SPANID
  )
    return null;
  return `00-${sc.traceId}-${sc.spanId}-01`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A stored `traceparent` read back as a remote span context; undefined for null or a malformed one. */
export function spanContextOf(text: string | null | undefined): SpanContext | undefined {
  const m = text ? TRACEPARENT.exec(text) : null;
  if (m === null) return undefined;
  const traceId = m[1] as string;
  const spanId = m[2] as string;
  // The pattern checked the hex; what else makes an id invalid is being all zeros.
  if (traceId === INVALID_TRACEID || spanId === INVALID_SPANID) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(m[3] as string, 16), isRemote: true };
}

/** A context whose parent is the stored `traceparent` (a new trace when there is none). */
export const contextOf = (text: string | null | undefined): Context => contextOfSpan(spanContextOf(text));

/** A context whose parent is `sc`, read with `spanContextOf` (a new trace when undefined). */
export const contextOfSpan = (sc: SpanContext | undefined): Context =>
  sc === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, sc);

export { SpanKind };
