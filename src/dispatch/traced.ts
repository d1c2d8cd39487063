import type { Attributes } from '@opentelemetry/api';
import type { NotificationRecord } from '../notifications/model.ts';
import type { Completion } from '../notifications/status.ts';
import type { OutgoingMessage, Provider, SendResult } from '../providers/types.ts';
import {
  contextOfSpan,
  inProcessSpan,
  inSpan,
  processContext,
  SpanKind,
  spanContextOf,
  tracingOn,
} from '../tracing/tracer.ts';

/**
 * The `process <channel>` span of one claimed notification (docs/tracing.md): a CONSUMER span
 * in the trace of the request that accepted it, read from the context stored with it (so in the
 * same trace in another thread or process, after a restart too), linked to the accepting span as
 * the messaging conventions say. Its children are the render and the provider calls.
 */
export function processTraced(
  record: NotificationRecord,
  process: () => Promise<Completion>,
): Promise<Completion> {
  if (!tracingOn()) return process();
  const accepted = spanContextOf(record.traceContext);
  const attributes: Attributes = {
    'messaging.system': 'herald',
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': record.channel,
    'messaging.message.id': record.id,
    'herald.tenant': record.tenant,
    'herald.priority': record.priority,
    'herald.attempt': record.attempts,
  };
  if (record.broadcastId !== undefined) attributes['herald.broadcast.id'] = record.broadcastId;
  return inProcessSpan(
    record.id,
    `process ${record.channel}`,
    { kind: SpanKind.CONSUMER, links: accepted === undefined ? [] : [{ context: accepted }], attributes },
    async (span) => {
      const completion = await process();
      span?.setAttribute('herald.outcome', completion.kind);
      return completion;
    },
    // The stored context read once: the parent and the link are the same accepting span.
    contextOfSpan(accepted),
  );
}

/**
 * One provider call: every attempt of every channel (SMTP, HTTP/2 push, SMPP, the sandbox) goes
 * through here, each in a CLIENT span naming the provider and the outcome, never the recipient.
 */
export function callProvider(
  provider: Provider,
  message: OutgoingMessage,
  signal: AbortSignal,
): Promise<SendResult> {
  if (!tracingOn()) return provider.send(message, signal);
  return inSpan(
    `send ${provider.name}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'herald.provider': provider.name,
        'herald.channel': message.channel,
        'herald.attempt': message.attempt,
      },
    },
    async (span) => {
      const result = await provider.send(message, signal);
      span?.setAttribute(
        'herald.outcome',
        result.ok ? (result.delivered ? 'delivered' : 'sent') : result.kind,
      );
      return result;
    },
    processContext(message.notificationId),
  );
}
