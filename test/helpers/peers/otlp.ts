import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP receiver decoded it (ids in hex, attributes flattened). */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
}

/** A collector's OTLP/HTTP traces endpoint, as Herald's exporter posts to it. */
export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT (spans arrive at `/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** The content types of the export requests, in order. */
  contentTypes: string[];
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };
type JsonSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  links?: Array<{ traceId: string; spanId: string }>;
};
type ExportRequest = {
  resourceSpans: Array<{
    resource: { attributes: KeyValue[] };
    scopeSpans: Array<{ spans: JsonSpan[] }>;
  }>;
};

const plainValue = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? v.boolValue ?? (v.intValue === undefined ? (v.doubleValue as number) : Number(v.intValue));

const flat = (attributes: KeyValue[] = []) =>
  Object.fromEntries(attributes.map((a) => [a.key, plainValue(a.value)]));

/**
 * Decodes an OTLP/JSON ExportTraceServiceRequest (the `http/json` protocol: ids as hex strings,
 * 64-bit integers as strings or numbers).
 */
export function spansOfJson(body: string): ReceivedSpan[] {
  const request = JSON.parse(body) as ExportRequest;
  return request.resourceSpans.flatMap((rs) => {
    const service = String(flat(rs.resource.attributes)['service.name']);
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        service,
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind,
        attributes: flat(s.attributes),
        links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
      })),
    );
  });
}

/** A real OTLP/HTTP endpoint: a node:http server that decodes each JSON export and answers 200. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const type = request.headers['content-type'] ?? '';
      contentTypes.push(type);
      if (request.url === '/v1/traces' && type.startsWith('application/json')) {
        spans.push(...spansOfJson(Buffer.concat(chunks).toString('utf8')));
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
