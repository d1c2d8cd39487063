import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { Metrics } from '../metrics.ts';
import { type NotificationRecord, priorityRank } from '../notifications/model.ts';
import type { Completion } from '../notifications/status.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { OutgoingMessage, SendResult } from '../providers/types.ts';
import { suppressionKey } from '../suppressions/model.ts';
import type { Rendered, Renderer, RenderInput } from '../templates/render.ts';
import { RenderError } from '../templates/render-error.ts';
import { type RetryPolicy, retryDelay } from './backoff.ts';
import { chooseProvider, fallbackReady } from './failover.ts';
import type { ProviderHealthLog } from './provider-health.ts';
import type { createProviderStates } from './provider-state.ts';
import { callProvider } from './traced.ts';
import type { UrgentTrace } from './urgent-trace.ts';

/** What delivering one claimed notification needs. */
export interface DeliverDeps {
  providers: ProviderRegistry;
  states: ReturnType<typeof createProviderStates>;
  renderer: Renderer;
  clock: Clock;
  policy: RetryPolicy & Pick<Config['dispatch'], 'maxHolds'>;
  random: () => number;
  metrics?: Metrics;
  /** The one-click unsubscribe link of a LOW email's recipient (made in dispatch/start.ts). */
  unsubscribeUrl?: (record: NotificationRecord) => Promise<string>;
  /** A person's preferences page, for its templates (made in dispatch/start.ts). */
  preferencesUrl?: (tenant: string, id: string) => Promise<string>;
  /** Logs each provider's changes between working and failing (provider-health.ts). */
  health?: ProviderHealthLog;
  /** Marks the render and the provider call of a traced CRITICAL (urgent-trace.ts). */
  trace?: UrgentTrace;
}

/** A send in progress; `released` is set when shutdown gives the lease back instead of waiting. */
export interface Flight {
  record: NotificationRecord;
  /** Shared by the sends one step started (they time out together). */
  controller: AbortController;
  startedAt: number;
  released: boolean;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Renders, checks the provider's limits and circuit, sends, and maps the outcome to a completion.
 * Never throws: every path ends in a completion the next cycle writes.
 */
export async function deliver(deps: DeliverDeps, flight: Flight): Promise<Completion> {
  const { record } = flight;
  const lease = { seq: record.seq, attempt: record.attempts };
  const now = () => deps.clock.now();
  const alternatives = deps.providers.alternatives(record.channel, record.recipient);
  if (alternatives.length === 0) {
    return {
      ...lease,
      kind: 'failed',
      detail: `no configured ${record.channel} provider accepts this recipient`,
    };
  }
  const provider = chooseProvider(alternatives, deps.states, record);
  // A hold gives the notification back without a provider call. Past the cap of consecutive
  // holds it counts as a failed attempt instead (backoff, and FAILED once attempts run out), so
  // no notification is held for ever, nor made the probe after every pause of a provider.
  // Neither a hold past the cap nor a failure to render blames the provider (no call was made),
  // so their retries name none: the next attempt chooses afresh instead of going to a fallback.
  const hold = (until: number, detail: string): Completion =>
    record.holds >= deps.policy.maxHolds
      ? retryOrFail(deps, record, undefined, `held ${record.holds} times in a row: ${detail}`)
      : { ...lease, kind: 'hold', provider: provider.name, until, detail, repeat: record.holds > 0 };
  // The provider slot is taken before rendering and kept until the answer, so the claim (which
  // plans by free slots) never hands out more than the provider may run, at each priority.
  const state = deps.states.of(provider);
  const rank = priorityRank(record.priority);
  const circuit = state.circuitFor(record.recipient);
  if (!state.acquire(rank)) return hold(now() + 10, `concurrency limit of provider ${provider.name}`);
  let result: SendResult;
  let rendered: Rendered;
  try {
    try {
      deps.trace?.mark(record.seq, 'renderStart');
      rendered = await deps.renderer.render(record.person ? personInput(deps, record) : record);
      deps.trace?.mark(record.seq, 'renderEnd');
    } catch (error) {
      if (error instanceof RenderError) return { ...lease, kind: 'failed', detail: error.message };
      return retryOrFail(deps, record, undefined, `rendering failed: ${message(error)}`);
    }
    // Before the rate token and the circuit's probe are taken: a failure to make the link (its
    // key not readable) must leave neither used up, nor count against the provider.
    const unsubscribeUrl =
      record.priority === 'LOW' && record.channel === 'email' && deps.unsubscribeUrl
        ? await deps.unsubscribeUrl(record)
        : undefined;
    if (!state.rate.tryTake(rank)) {
      return hold(now() + Math.max(state.rate.waitMs(rank), 10), `rate limit of provider ${provider.name}`);
    }
    if (!circuit.allow()) {
      return hold(circuit.retryAt(), `circuit open: provider ${provider.name} is failing`);
    }
    if (record.attempts === 1)
      deps.metrics?.pickupLatency.observe({ priority: record.priority }, (now() - record.createdAt) / 1000);
    deps.trace?.mark(record.seq, 'sendStart');
    try {
      result = await callProvider(
        provider,
        outgoing(record, record.recipient, rendered.content, unsubscribeUrl),
        flight.controller.signal,
      );
    } catch (error) {
      result = { ok: false, kind: 'transient', detail: `provider error: ${message(error)}` };
    }
    deps.trace?.mark(record.seq, 'sendEnd');
  } finally {
    state.release(rank);
  }
  deps.metrics?.outcomes.inc({
    provider: provider.name,
    outcome: result.ok ? (result.delivered ? 'delivered' : 'sent') : result.kind,
  });
  // Released at shutdown and aborted: give the notification back. A send that succeeded anyway
  // is recorded as such, so it is not sent twice.
  if (flight.released && !result.ok) return hold(now(), 'released at shutdown');
  // A configuration refusal or a transient failure says the provider is failing; any answer
  // about the message itself (sent, or refused for good) says it works.
  const failing = !result.ok && (result.kind === 'config' || result.kind === 'transient');
  deps.health?.(provider.name, failing ? 'failing' : 'working', result.ok ? undefined : result.detail);
  if (result.ok) {
    circuit.success();
    return {
      ...lease,
      kind: result.delivered ? 'delivered' : 'sent',
      provider: provider.name,
      providerMessageId: result.providerMessageId,
      detail: result.detail,
      copy: result.copy,
      locale: rendered.locale,
      // A person's row keeps `{ id }`: a later report about this message needs the address.
      addressKey: record.person === undefined ? undefined : suppressionKey(record.recipient),
    };
  }
  if (result.kind === 'config') {
    circuit.pause();
    return hold(circuit.retryAt(), `provider ${provider.name} paused (configuration): ${result.detail}`);
  }
  if (result.kind === 'permanent') {
    // The provider answered: it works, the message is what is wrong.
    circuit.success();
    // A recipient gone for good (a hard bounce, a gone push target, an opt-out) is suppressed
    // with this FAILED, so the next notification to it makes no provider call.
    const key = result.suppress ? suppressionKey(record.recipient) : undefined;
    if (result.suppress && key !== undefined) {
      const suppress = {
        tenant: record.tenant,
        channel: record.channel,
        recipient: key,
        reason: result.suppress,
      };
      const detail = `${result.detail}; recipient suppressed (${result.suppress})`;
      return { ...lease, kind: 'failed', provider: provider.name, detail, suppress };
    }
    return { ...lease, kind: 'failed', provider: provider.name, detail: result.detail };
  }
  circuit.failure();
  // With a healthy fallback, the next attempt goes there at once instead of after a backoff.
  const at = fallbackReady(alternatives, deps.states, record, provider) ? now() : undefined;
  return retryOrFail(deps, record, provider.name, result.detail, result.retryAfterMs, at);
}

/** What a provider is asked to send: the notification, rendered, to one recipient. */
export function outgoing(
  record: NotificationRecord,
  recipient: NotificationRecord['recipient'],
  content: OutgoingMessage['content'],
  unsubscribeUrl?: string,
): OutgoingMessage {
  return {
    notificationId: record.id,
    tenant: record.tenant,
    channel: record.channel,
    priority: record.priority,
    recipient,
    content,
    attempt: record.attempts,
    unsubscribeUrl,
  };
}

/** What a notification to a person renders with: the person, its preferences page and locale. */
export function personInput(deps: DeliverDeps, record: NotificationRecord): RenderInput {
  const person = record.person as NonNullable<NotificationRecord['person']>;
  const links = deps.preferencesUrl;
  const preferencesUrl = links && (() => links(record.tenant, person.id));
  // The fields rendering reads, not a spread of the whole record (a copy of its two dozen fields
  // for each notification to a person).
  return {
    id: record.id,
    tenant: record.tenant,
    channel: record.channel,
    priority: record.priority,
    templateKey: record.templateKey,
    templateVersion: record.templateVersion,
    locale: record.locale,
    recipientLocale: person.locale,
    content: record.content,
    variables: record.variables,
    person,
    preferencesUrl,
  };
}

/**
 * A transient failure: retry after backoff (or at `at`, when a fallback can take it now), or
 * fail once attempts are used up. `provider` is the one that failed, when one did.
 */
export function retryOrFail(
  deps: DeliverDeps,
  record: NotificationRecord,
  provider: string | undefined,
  detail: string,
  retryAfterMs?: number,
  at?: number,
): Completion {
  const lease = { seq: record.seq, attempt: record.attempts };
  if (record.attempts >= deps.policy.retryMaxAttempts) {
    return {
      ...lease,
      kind: 'failed',
      provider,
      detail: `attempts exhausted (${record.attempts}): ${detail}`,
    };
  }
  let next =
    at ??
    deps.clock.now() + retryDelay(deps.policy, record.priority, record.attempts, retryAfterMs, deps.random);
  // No point waiting past expiry: come back then, and the claim marks it EXPIRED.
  if (record.expiresAt !== null && next > record.expiresAt) next = record.expiresAt;
  return { ...lease, kind: 'retry', provider, detail, nextAttemptAt: next };
}
