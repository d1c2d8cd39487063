import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import {
  type IExportTraceServiceResponse,
  type ISerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { encodeTraceRequest } from './otlp-protobuf.ts';

/**
 * The SDK's OTLP/HTTP protobuf exporter with Herald's encoder (otlp-protobuf.ts) in place of its
 * serializer: the rest is the SDK's own plumbing, so the endpoint, headers, timeout, compression
 * and retries come from the OTEL_EXPORTER_OTLP_* variables as they do for its OTLPTraceExporter.
 * A batch the encoder does not write (spans of more than one resource or scope) goes to the SDK's
 * serializer.
 */
export const serializer: ISerializer<ReadableSpan[], IExportTraceServiceResponse> = {
  serializeRequest: (spans) => encodeTraceRequest(spans) ?? ProtobufTraceSerializer.serializeRequest(spans),
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

export class ProtobufTraceExporter extends OTLPExporterBase<ReadableSpan[]> implements SpanExporter {
  constructor() {
    super(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
        serializer,
        // The component type the SDK's exporter reports in its own metrics (none registered here).
        'otlp_http_span_exporter',
        TraceExporterMetricsHelper,
        undefined,
      ),
    );
  }
}
