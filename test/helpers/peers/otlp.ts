import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
// The OTLP protobuf messages as generated from opentelemetry-proto by protobufjs (the exporter
// packages Herald runs ship an encoder only): a decoder written apart from the one that encodes.
import otlpProto from '@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js';

/** OTLP's SpanKind values, as a received span's `kind` holds them. */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

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
  events: Array<{ name: string; attributes: Record<string, string | number | boolean> }>;
}

/** A collector's OTLP/HTTP traces endpoint, as Herald's exporter posts to it. */
export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT (spans arrive at `/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** The content types of the export requests, in order. */
  contentTypes: string[];
  /** Export requests it could not decode (an unknown content type, a malformed body). */
  undecoded: string[];
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
  events?: Array<{ name: string; attributes?: KeyValue[] }>;
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
  return spansOf(JSON.parse(body) as ExportRequest);
}

/** The generated message type (its .d.ts types the module only as a protobufjs Root). */
interface MessageType {
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: { longs: typeof Number; enums: typeof Number }): unknown;
}
const ExportTraceServiceRequest = (
  otlpProto as unknown as {
    opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } } };
  }
).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/**
 * Decodes an OTLP/protobuf ExportTraceServiceRequest (the default `http/protobuf` protocol) with
 * the generated message types: ids are bytes (read back as hex here), 64-bit integers longs.
 */
export function spansOfProtobuf(body: Uint8Array): ReceivedSpan[] {
  const message = ExportTraceServiceRequest.decode(body);
  const hex = (value: unknown) => Buffer.from(value as Uint8Array).toString('hex');
  const plain = ExportTraceServiceRequest.toObject(message, {
    longs: Number,
    enums: Number,
  }) as ExportRequest;
  for (const rs of plain.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        s.traceId = hex(s.traceId);
        s.spanId = hex(s.spanId);
        // proto3: an empty parent (a root span) decodes as no field or as empty bytes.
        s.parentSpanId = s.parentSpanId === undefined ? '' : hex(s.parentSpanId);
        for (const l of s.links ?? []) Object.assign(l, { traceId: hex(l.traceId), spanId: hex(l.spanId) });
      }
    }
  }
  return spansOf(plain);
}

function spansOf(request: ExportRequest): ReceivedSpan[] {
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
        events: (s.events ?? []).map((e) => ({ name: e.name, attributes: flat(e.attributes) })),
      })),
    );
  });
}

/**
 * A real OTLP/HTTP endpoint: a node:http server that decodes each export, OTLP/JSON or
 * OTLP/protobuf by its content type, and answers 200 in the same encoding.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const undecoded: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const type = request.headers['content-type'] ?? '';
      contentTypes.push(type);
      const body = Buffer.concat(chunks);
      const json = type.startsWith('application/json');
      try {
        if (request.url !== '/v1/traces') throw new Error(`posted to ${request.url}`);
        if (json) spans.push(...spansOfJson(body.toString('utf8')));
        else if (type.startsWith('application/x-protobuf')) spans.push(...spansOfProtobuf(body));
        else throw new Error(`content type ${type}`);
      } catch (error) {
        undecoded.push(`${type}: ${(error as Error).message}`);
      }
      // An empty ExportTraceServiceResponse: `{}` in JSON, no bytes in protobuf.
      response
        .writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
        .end(json ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    undecoded,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
