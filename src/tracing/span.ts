import {
  type Attributes,
  type AttributeValue,
  type Context,
  context as contexts,
  diag,
  type Exception,
  type HrTime,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  type Link,
  SamplingDecision,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import {
  addHrTimes,
  hrTime,
  isAttributeValue,
  isTimeInput,
  isTimeInputHrTime,
  isTracingSuppressed,
  millisToHrTime,
  sanitizeAttributes,
} from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { IdGenerator, Sampler, SpanLimits, TimedEvent } from '@opentelemetry/sdk-trace-base';
import type { EncodableSpan } from './otlp-protobuf.ts';

/** What a Herald tracer makes spans with: the SDK tracer's own configuration (`heraldTracerOf`). */
export interface TracerConfig {
  resource: Resource;
  scope: EncodableSpan['instrumentationScope'];
  sampler: Sampler;
  limits: Required<SpanLimits>;
  ids: IdGenerator;
  /** The span processor every span is handed to when it ends. */
  processor: { onEnd(span: EncodableSpan): void };
}

/**
 * Herald's tracer, configured as the SDK tracer `sdkTracer` a provider made (sampler, span
 * limits, id generator, resource, scope): the provider reads the OTEL_* variables
 * (OTEL_TRACES_SAMPLER and its argument, OTEL_SPAN_*_LIMIT) and Herald's spans follow them as the
 * SDK's would, each ended into `processor`. The SDK's tracer itself when this SDK keeps that
 * configuration elsewhere than where it did when this was written (2.x).
 */
export function heraldTracerOf(sdkTracer: Tracer, processor: TracerConfig['processor']): Tracer {
  const t = sdkTracer as unknown as {
    _resource?: Resource;
    instrumentationScope?: TracerConfig['scope'];
    _sampler?: Sampler;
    _spanLimits?: Required<SpanLimits>;
    _idGenerator?: IdGenerator;
  };
  if (!t._resource || !t.instrumentationScope || !t._sampler || !t._spanLimits || !t._idGenerator) {
    diag.warn('Herald: the SDK tracer keeps its configuration elsewhere; its own spans are made');
    return sdkTracer;
  }
  return new HeraldTracer({
    resource: t._resource,
    scope: t.instrumentationScope,
    sampler: t._sampler,
    limits: t._spanLimits,
    ids: t._idGenerator,
    processor,
  });
}

const NO_LINKS: readonly Link[] = Object.freeze([]);
const NO_EVENTS: readonly TimedEvent[] = Object.freeze([]);
const NO_ATTRIBUTES: Attributes = Object.freeze({});

/**
 * Herald's tracer for `http/protobuf` (sdk.ts): the SDK's `Tracer.startSpan`, decision for
 * decision (suppressed tracing, the parent's trace, the sampler, the limits), making a
 * `HeraldSpan` that hands itself to the span processor when it ends. What it leaves out is what
 * Herald has no use for on every span: the span-count metrics (no meter provider is registered),
 * a list of processors (one), the copies of attributes made for a sampler that reads none, and
 * the parent's hex checked again when it is a span of this tracer (decision 0056).
 */
export class HeraldTracer implements Tracer {
  constructor(readonly config: TracerConfig) {}

  startSpan(name: string, options: SpanOptions = {}, context: Context = contexts.active()): Span {
    if (options.root) context = trace.deleteSpan(context);
    if (isTracingSuppressed(context)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const parentSpan = trace.getSpan(context);
    const parent = parentSpan?.spanContext();
    const { ids, sampler } = this.config;
    const spanId = ids.generateSpanId();
    let traceId: string;
    let traceState = undefined as SpanContext['traceState'];
    let validParent: SpanContext | undefined;
    if (parent !== undefined && (parentSpan instanceof HeraldSpan || isSpanContextValid(parent))) {
      traceId = parent.traceId;
      traceState = parent.traceState;
      validParent = parent;
    } else {
      traceId = ids.generateTraceId();
    }
    const kind = options.kind ?? SpanKind.INTERNAL;
    const links =
      options.links === undefined || options.links.length === 0
        ? NO_LINKS
        : options.links.map((link) => ({
            context: link.context,
            attributes: sanitizeAttributes(link.attributes),
          }));
    const attributes =
      options.attributes === undefined ? NO_ATTRIBUTES : sanitizeAttributes(options.attributes);
    const sampled = sampler.shouldSample(context, traceId, name, kind, attributes, links as Link[]);
    traceState = sampled.traceState ?? traceState;
    const traceFlags =
      sampled.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE;
    const spanContext: SpanContext = { traceId, spanId, traceFlags, traceState };
    if (sampled.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    const span = new HeraldSpan(this.config, spanContext, name, kind, validParent, options.startTime);
    for (const link of links) span.addLink(link);
    if (attributes !== NO_ATTRIBUTES) span.setAttributes(attributes);
    if (sampled.attributes !== undefined) span.setAttributes(sampled.attributes);
    return span;
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    // (fn), (options, fn) or (options, context, fn), as the API's Tracer takes them.
    const fn = rest[rest.length - 1] as (span: Span) => ReturnType<F>;
    const options = (rest.length >= 2 ? rest[0] : undefined) as SpanOptions | undefined;
    const parent = (rest.length >= 3 ? rest[1] : undefined) as Context | undefined;
    const context = parent ?? contexts.active();
    const span = this.startSpan(name, options, context);
    return contexts.with(trace.setSpan(context, span), fn, undefined, span);
  }
}

const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

/**
 * A span as the SDK's `SpanImpl` keeps it (the same limits, times, status rules and warnings;
 * what the OTLP encoder reads), with nothing else: no end-of-span metric, no list of events or
 * links until one is added, and no object copied to check an attribute.
 */
export class HeraldSpan implements Span, EncodableSpan {
  readonly attributes: Attributes = {};
  links: Link[] = NO_LINKS as Link[];
  events: TimedEvent[] = NO_EVENTS as TimedEvent[];
  status: SpanStatus = UNSET;
  readonly startTime: HrTime;
  endTime: HrTime = [0, 0];
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  private attributeCount = 0;
  private ended = false;
  /** `performance.now()` at the start, and its difference to the wall clock (as the SDK's span). */
  private readonly startedAt: number;
  private readonly offset: number;
  private readonly startTimeGiven: boolean;

  constructor(
    private readonly config: TracerConfig,
    private readonly context: SpanContext,
    public name: string,
    readonly kind: SpanKind,
    readonly parentSpanContext: SpanContext | undefined,
    startTime: TimeInput | undefined,
  ) {
    const now = Date.now();
    this.startedAt = performance.now();
    this.offset = now - (this.startedAt + performance.timeOrigin);
    this.startTimeGiven = startTime != null;
    this.startTime = this.time(startTime ?? now);
  }

  get resource(): Resource {
    return this.config.resource;
  }

  get instrumentationScope(): TracerConfig['scope'] {
    return this.config.scope;
  }

  spanContext(): SpanContext {
    return this.context;
  }

  isRecording(): boolean {
    return !this.ended;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (value == null || this.endedAlready()) return this;
    if (key.length === 0) {
      diag.warn(`Invalid attribute key: ${key}`);
      return this;
    }
    if (!isAttributeValue(value)) {
      diag.warn(`Invalid attribute value set for key: ${key}`);
      return this;
    }
    const isNew = !Object.hasOwn(this.attributes, key);
    if (isNew && this.attributeCount >= this.config.limits.attributeCountLimit) {
      this.droppedAttributesCount++;
      return this;
    }
    this.attributes[key] = this.truncated(value);
    if (isNew) this.attributeCount++;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.endedAlready()) return this;
    const { eventCountLimit, attributePerEventCountLimit } = this.config.limits;
    if (eventCountLimit === 0) {
      diag.warn('No events allowed.');
      this.droppedEventsCount++;
      return this;
    }
    if (this.events === NO_EVENTS) this.events = [];
    if (this.events.length >= eventCountLimit) {
      if (this.droppedEventsCount === 0) diag.debug('Dropping extra events.');
      this.events.shift();
      this.droppedEventsCount++;
    }
    if (isTimeInput(attributesOrTime)) {
      if (!isTimeInput(time)) time = attributesOrTime;
      attributesOrTime = undefined;
    }
    const { kept, dropped } = this.limited(attributesOrTime, attributePerEventCountLimit);
    this.events.push({ name, attributes: kept, time: this.time(time), droppedAttributesCount: dropped });
    return this;
  }

  addLink(link: Link): this {
    if (this.endedAlready()) return this;
    const { linkCountLimit, attributePerLinkCountLimit } = this.config.limits;
    if (linkCountLimit === 0) {
      this.droppedLinksCount++;
      return this;
    }
    if (this.links === NO_LINKS) this.links = [];
    if (this.links.length >= linkCountLimit) {
      if (this.droppedLinksCount === 0) diag.debug('Dropping extra links.');
      this.links.shift();
      this.droppedLinksCount++;
    }
    const { kept, dropped, count } = this.limited(link.attributes, attributePerLinkCountLimit);
    const added: Link = { context: link.context };
    if (count > 0) added.attributes = kept;
    if (dropped > 0) added.droppedAttributesCount = dropped;
    this.links.push(added);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.endedAlready()) return this;
    if (status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this;
    const next: SpanStatus = { code: status.code };
    if (status.code === SpanStatusCode.ERROR) {
      if (typeof status.message === 'string') next.message = status.message;
      else if (status.message != null)
        diag.warn(`Dropping invalid status.message of type '${typeof status.message}', expected 'string'`);
    }
    this.status = next;
    return this;
  }

  updateName(name: string): this {
    if (!this.endedAlready()) this.name = name;
    return this;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') {
      attributes['exception.message'] = exception;
    } else if (exception) {
      if (exception.code) attributes['exception.type'] = exception.code.toString();
      else if (exception.name) attributes['exception.type'] = exception.name;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] || attributes['exception.message'])
      this.addEvent('exception', attributes, time);
    else diag.warn(`Failed to record an exception ${exception}`);
  }

  end(endTime?: TimeInput): void {
    if (this.endedAlready()) {
      diag.error(
        `${this.name} ${this.context.traceId}-${this.context.spanId} - You can only call end() on a span once.`,
      );
      return;
    }
    this.endTime = this.time(endTime);
    const [s0, n0] = this.startTime;
    const [s1, n1] = this.endTime;
    if (s1 < s0 || (s1 === s0 && n1 < n0)) {
      diag.warn('Inconsistent start and end time, startTime > endTime. Setting span duration to 0ms.');
      this.endTime = [s0, n0];
    }
    if (this.droppedEventsCount > 0)
      diag.warn(`Dropped ${this.droppedEventsCount} events because eventCountLimit reached`);
    if (this.droppedLinksCount > 0)
      diag.warn(`Dropped ${this.droppedLinksCount} links because linkCountLimit reached`);
    this.ended = true;
    this.config.processor.onEnd(this);
  }

  /** Whether the span has ended, warning as the SDK's does of an operation on an ended span. */
  private endedAlready(): boolean {
    if (this.ended)
      diag.warn(
        `Cannot execute the operation on ended Span {traceId: ${this.context.traceId}, spanId: ${this.context.spanId}}`,
      );
    return this.ended;
  }

  /** A time as the SDK's span reads one: a performance time, epoch milliseconds, a Date, an HrTime, or now. */
  private time(input: TimeInput | undefined): HrTime {
    if (typeof input === 'number') {
      return input <= performance.now() ? hrTime(input + this.offset) : millisToHrTime(input);
    }
    if (input instanceof Date) return millisToHrTime(input.getTime());
    if (isTimeInputHrTime(input)) return input;
    if (this.startTimeGiven) return millisToHrTime(Date.now());
    return addHrTimes(this.startTime, millisToHrTime(performance.now() - this.startedAt));
  }

  /** A string (or strings) cut to OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT; anything else as it is. */
  private truncated(value: AttributeValue): AttributeValue {
    const limit = this.config.limits.attributeValueLengthLimit;
    if (limit <= 0) {
      diag.warn(`Attribute value limit must be positive, got ${limit}`);
      return value;
    }
    if (limit === Number.POSITIVE_INFINITY) return value;
    if (typeof value === 'string') return value.length <= limit ? value : value.substring(0, limit);
    if (Array.isArray(value))
      return value.map((v) =>
        typeof v === 'string' && v.length > limit ? v.substring(0, limit) : v,
      ) as AttributeValue;
    return value;
  }

  /**
   * An event's or a link's attributes: the valid ones (as `sanitizeAttributes` keeps them, an
   * array copied), at most `limit`, each truncated; in one copy where the SDK makes two.
   */
  private limited(
    attributes: Attributes | undefined,
    limit: number,
  ): { kept: Attributes; dropped: number; count: number } {
    const kept: Attributes = {};
    let dropped = 0;
    let count = 0;
    for (const key in attributes) {
      if (!Object.hasOwn(attributes, key)) continue;
      const value = attributes[key];
      if (key.length === 0) {
        diag.warn(`Invalid attribute key: ${key}`);
        continue;
      }
      if (!isAttributeValue(value)) {
        diag.warn(`Invalid attribute value set for key: ${key}`);
        continue;
      }
      if (count >= limit) {
        dropped++;
        continue;
      }
      kept[key] = this.truncated((Array.isArray(value) ? value.slice() : value) as AttributeValue);
      count++;
    }
    return { kept, dropped, count };
  }
}
