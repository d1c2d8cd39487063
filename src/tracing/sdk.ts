import { context, propagation, type Tracer, trace } from '@opentelemetry/api';
import type { Config } from '../config/config.ts';
import { VERSION } from '../version.ts';
import { setTracer } from './tracer.ts';

/** The OTEL_* variables as loadConfig read and checked them (config/schema.ts `TracingSchema`). */
export type TracingConfig = NonNullable<Config['tracing']>;

/**
 * Whether the standard variables ask for traces: an OTLP endpoint is set (for all signals or
 * for traces), OTEL_TRACES_EXPORTER is not `none` and OTEL_SDK_DISABLED is not `true`. Nothing
 * else turns the SDK on, so a Herald configured without them loads none of it.
 */
export function wantsTracing(t: TracingConfig | undefined): t is TracingConfig {
  if (t === undefined || !(t.tracesEndpoint || t.endpoint)) return false;
  return !t.sdkDisabled && t.exporter !== 'none';
}

/** The OTLP encoding of traces: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL. */
export const tracesProtocol = (t: TracingConfig) => t.tracesProtocol ?? t.protocol;

/** A thread's running SDK: `shutdown` exports what is left and unregisters it. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Starts this thread's tracer provider when the variables ask for it (each thread that makes
 * spans calls it: the main thread, the dispatch thread, the callback sender's thread), else
 * returns undefined having loaded nothing. The SDK reads the rest of the standard variables
 * itself: the endpoint, headers and timeout (the exporter), OTEL_TRACES_SAMPLER and its argument,
 * OTEL_BSP_* (the batch processor), OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the
 * resource; the service is `herald` unless they name another).
 *
 * No context manager is registered: every span's parent is passed by hand (tracer.ts), for
 * AsyncLocalStorage's promise hooks cost every promise the thread makes, traced or not (a fifth
 * of what tracing cost the API's thread, decision 0039; dropped in 0044).
 */
export async function startTracing(config: Pick<Config, 'tracing'>): Promise<Tracing | undefined> {
  const t = config.tracing;
  if (!wantsTracing(t)) return undefined;
  const [{ NodeTracerProvider }, resources, { processor, tracerOf }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    // http/json keeps the SDK's spans, exporter and batch processor; http/protobuf, the hot path,
    // makes Herald's spans (span.ts) and encodes each as it ends (processor.ts).
    tracesProtocol(t) === 'http/json'
      ? Promise.all([
          import('@opentelemetry/sdk-trace-base'),
          import('@opentelemetry/exporter-trace-otlp-http'),
        ]).then(([base, json]) => ({
          processor: new base.BatchSpanProcessor(new json.OTLPTraceExporter()),
          tracerOf: (sdkTracer: Tracer) => sdkTracer,
        }))
      : Promise.all([import('./exporter.ts'), import('./span.ts')]).then(([exporter, span]) => {
          const encoding = exporter.protobufSpanProcessor();
          return {
            processor: encoding,
            tracerOf: (sdkTracer: Tracer) => span.heraldTracerOf(sdkTracer, encoding),
          };
        }),
  ]);
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': t.serviceName }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [processor],
  });
  // The global tracer and the W3C trace-context propagator; no context manager (above).
  provider.register({ contextManager: null });
  setTracer(tracerOf(provider.getTracer('herald', VERSION)));
  return {
    async shutdown() {
      setTracer(undefined);
      try {
        await provider.shutdown();
      } finally {
        // A Herald started again in this process (tests) registers its own.
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}
