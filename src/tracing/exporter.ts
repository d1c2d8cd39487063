import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import {
  type IExportTraceServiceResponse,
  type ISerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import { traceRequest } from './otlp-protobuf.ts';
import { type EncodedBatch, EncodingSpanProcessor } from './processor.ts';

/** Each batch of encoded spans as one ExportTraceServiceRequest; the answer read by the SDK. */
export const serializer: ISerializer<EncodedBatch, IExportTraceServiceResponse> = {
  serializeRequest: (batch) => traceRequest(batch.scoped, batch.bytes.subarray(0, batch.length)),
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

/**
 * The span processor of `http/protobuf` (processor.ts), exporting through the SDK's own OTLP/HTTP
 * plumbing as its OTLPTraceExporter does: the endpoint, headers, timeout, compression and retries
 * come from the OTEL_EXPORTER_OTLP_* variables; only the serializer is Herald's.
 */
export function protobufSpanProcessor(): EncodingSpanProcessor {
  return new EncodingSpanProcessor(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
      serializer,
      // The component type the SDK's exporter reports in its own metrics (none registered here).
      'otlp_http_span_exporter',
      { name: 'span', countItems: (batch) => batch.count },
      undefined,
    ),
  );
}
