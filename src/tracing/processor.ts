import { diag, TraceFlags } from '@opentelemetry/api';
import {
  type ExportResult,
  ExportResultCode,
  getNumberFromEnv,
  globalErrorHandler,
} from '@opentelemetry/core';
import type { IOtlpExportDelegate } from '@opentelemetry/otlp-exporter-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type EncodableSpan, encodeSpan, type Scoped } from './otlp-protobuf.ts';

/** Spans of one export request, encoded as they ended. */
export interface EncodedBatch {
  scoped: Scoped;
  bytes: Uint8Array;
  length: number;
  count: number;
}

/** The batch processor's limits, from the OTEL_BSP_* variables as the SDK's reads them. */
interface Limits {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
}

const limitsFromEnv = (): Limits => {
  const maxQueueSize = getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048;
  return {
    maxQueueSize,
    maxExportBatchSize: Math.min(getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512, maxQueueSize),
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY') ?? 5000,
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT') ?? 30000,
  };
};

/**
 * The SDK's batch span processor, but each span encoded to OTLP/protobuf when it ends
 * (otlp-protobuf.ts) rather than kept as the SDK's objects until its batch is exported: a span
 * object then dies young, where a batch of them waiting for the export in flight before it lived
 * long enough to be moved to the old generation, and collected there at a cost (decision 0052).
 * The same limits and variables as the SDK's (OTEL_BSP_MAX_QUEUE_SIZE: spans past it are
 * dropped; OTEL_BSP_MAX_EXPORT_BATCH_SIZE; OTEL_BSP_SCHEDULE_DELAY; OTEL_BSP_EXPORT_TIMEOUT), one export
 * at a time, each through the SDK's OTLP/HTTP exporter plumbing (exporter.ts).
 */
export class EncodingSpanProcessor implements SpanProcessor {
  private readonly limits = limitsFromEnv();
  /** The batch spans are encoded into, and the full ones waiting for their export. */
  private open: EncodedBatch | undefined;
  private readonly full: EncodedBatch[] = [];
  /** Spans encoded and not yet exported: what OTEL_BSP_MAX_QUEUE_SIZE bounds. */
  private queued = 0;
  private dropped = 0;
  private exporting = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Who waits for every span encoded so far to be exported (forceFlush, shutdown). */
  private waiting: Array<() => void> = [];

  constructor(private readonly delegate: IOtlpExportDelegate<EncodedBatch>) {}

  onStart(): void {}

  onEnd(span: EncodableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queued >= this.limits.maxQueueSize) {
      if (this.dropped++ === 0) diag.debug('maxQueueSize reached, dropping spans');
      return;
    }
    if (this.dropped > 0) {
      diag.warn(`Dropped ${this.dropped} spans because maxQueueSize reached`);
      this.dropped = 0;
    }
    let batch = this.open;
    if (
      batch !== undefined &&
      (batch.scoped.resource !== span.resource ||
        batch.scoped.instrumentationScope !== span.instrumentationScope)
    ) {
      this.seal();
      batch = undefined;
    }
    // About 300 bytes a span of Herald's: room for a full batch, most of the time.
    const room = 320 * this.limits.maxExportBatchSize;
    batch ??= this.open = { scoped: span, bytes: new Uint8Array(room), length: 0, count: 0 };
    append(batch, encodeSpan(span));
    batch.count++;
    this.queued++;
    if (batch.count >= this.limits.maxExportBatchSize) {
      this.seal();
      this.next();
    } else if (!this.exporting) {
      this.schedule();
    }
  }

  /** Exports the open batch after OTEL_BSP_SCHEDULE_DELAY, unless it fills up before. */
  private schedule(): void {
    if (this.timer !== undefined || this.open === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.seal();
      this.next();
    }, this.limits.scheduledDelayMillis);
    this.timer.unref();
  }

  /** Exports every span encoded so far; resolves when the last of them was exported (or failed). */
  forceFlush(): Promise<void> {
    this.seal();
    if (!this.exporting && this.full.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.next();
    });
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    // As the SDK's: spans that end from now on are not exported.
    this.stopped = true;
    await this.forceFlush();
    await this.delegate.shutdown();
  }

  /** Moves the open batch to the ones waiting for their export. */
  private seal(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.open !== undefined && this.open.count > 0) this.full.push(this.open);
    this.open = undefined;
  }

  /** Starts the next export unless one is in flight. */
  private next(): void {
    if (this.exporting) return;
    const batch = this.full.shift();
    if (batch === undefined) {
      for (const resolve of this.waiting.splice(0)) resolve();
      this.schedule();
      return;
    }
    this.exporting = true;
    let settled = false;
    let timeout: NodeJS.Timeout | undefined;
    const done = (result: ExportResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      this.exporting = false;
      this.queued -= batch.count;
      if (result.code !== ExportResultCode.SUCCESS) {
        globalErrorHandler(result.error ?? new Error('span export failed'));
      }
      this.next();
    };
    // As the SDK's: an export past OTEL_BSP_EXPORT_TIMEOUT counts as failed, and the next starts.
    timeout = setTimeout(
      () => done({ code: ExportResultCode.FAILED, error: new Error('Timeout') }),
      this.limits.exportTimeoutMillis,
    );
    // Like the schedule's: a pending export's bound never keeps a closing process alive.
    timeout.unref();
    const { resource } = batch.scoped;
    if (resource.asyncAttributesPending && resource.waitForAsyncAttributes) {
      resource.waitForAsyncAttributes().then(
        () => this.delegate.export(batch, done),
        (error: unknown) => done({ code: ExportResultCode.FAILED, error: error as Error }),
      );
    } else {
      this.delegate.export(batch, done);
    }
  }
}

/** Copies a span's bytes to the end of `batch`, growing its buffer as needed. */
function append(batch: EncodedBatch, span: Uint8Array): void {
  const end = batch.length + span.length;
  if (end > batch.bytes.length) {
    let size = batch.bytes.length * 2;
    while (size < end) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(batch.bytes.subarray(0, batch.length));
    batch.bytes = grown;
  }
  batch.bytes.set(span, batch.length);
  batch.length = end;
}
