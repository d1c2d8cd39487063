import { maskKey } from '../notifications/mask.ts';
import { priorityRank, type Recipient } from '../notifications/model.ts';
import type { Completion, TargetNote } from '../notifications/status.ts';
import type { Provider, SendResult } from '../providers/types.ts';
import { suppressionKey } from '../suppressions/model.ts';
import { RenderError } from '../templates/render-error.ts';
import { type DeliverDeps, type Flight, outgoing, personInput, retryOrFail } from './deliver.ts';
import { callProvider } from './traced.ts';

/** One target's part of the attempt: what its provider answered, or that it was not tried. */
interface TargetOutcome {
  target: Recipient;
  /** The target's suppression key (its endpoint or token), and as events show it. */
  key: string;
  provider?: Provider;
  result?: SendResult;
  /** Not tried now: its provider had no slot, no rate token or an open circuit. */
  held?: string;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * A push to a person (docs/sending-to-people.md): one attempt to every push target of the profile, rendered
 * once. Each target takes its provider's slot, rate token and circuit as one send would. The
 * attempt succeeds when at least one target accepts; a gone target (the provider's answer asks
 * for a suppression: 404/410, Unregistered, UNREGISTERED) is removed from the profile and
 * suppressed with the completion; it is retried only when every target failed transiently (or
 * was held back, which gives the notification back like a hold). Every target that failed is
 * named, masked, in an ATTEMPT_FAILED event of its own.
 */
export async function deliverToTargets(
  deps: DeliverDeps,
  flight: Flight,
  targets: readonly Recipient[],
): Promise<Completion> {
  const { record } = flight;
  const lease = { seq: record.seq, attempt: record.attempts };
  const rank = priorityRank(record.priority);
  let rendered: Awaited<ReturnType<DeliverDeps['renderer']['render']>>;
  try {
    rendered = await deps.renderer.render(personInput(deps, record));
  } catch (error) {
    if (error instanceof RenderError) return { ...lease, kind: 'failed', detail: error.message };
    return retryOrFail(deps, record, undefined, `rendering failed: ${message(error)}`);
  }
  const outcomes = await Promise.all(
    targets.map(async (target): Promise<TargetOutcome> => {
      const key = suppressionKey(target) ?? '';
      const provider = deps.providers.alternatives(record.channel, target)[0];
      if (!provider) {
        const result: SendResult = {
          ok: false,
          kind: 'permanent',
          detail: 'no configured push provider accepts this target',
        };
        return { target, key, result };
      }
      const state = deps.states.of(provider);
      if (!state.acquire(rank))
        return { target, key, provider, held: `concurrency limit of provider ${provider.name}` };
      try {
        if (!state.rate.tryTake(rank))
          return { target, key, provider, held: `rate limit of provider ${provider.name}` };
        const circuit = state.circuitFor(target);
        if (!circuit.allow())
          return { target, key, provider, held: `circuit open: provider ${provider.name} is failing` };
        let result: SendResult;
        try {
          result = await callProvider(
            provider,
            outgoing(record, target, rendered.content),
            flight.controller.signal,
          );
        } catch (error) {
          result = { ok: false, kind: 'transient', detail: `provider error: ${message(error)}` };
        }
        if (result.ok || result.kind === 'permanent') circuit.success();
        else if (result.kind === 'config') circuit.pause();
        else circuit.failure();
        return { target, key, provider, result };
      } finally {
        state.release(rank);
      }
    }),
  );
  return completionOf(deps, flight, outcomes, rendered.locale);
}

/** The attempt's completion from its targets' outcomes (see deliverToTargets). */
function completionOf(
  deps: DeliverDeps,
  flight: Flight,
  outcomes: TargetOutcome[],
  locale: string | undefined,
): Completion {
  const { record } = flight;
  const lease = { seq: record.seq, attempt: record.attempts };
  const named = (o: TargetOutcome) => `push target ${maskKey('push', o.key)}`;
  const sent = outcomes.filter((o) => o.result?.ok);
  const notes: TargetNote[] = [];
  const gone: string[] = [];
  let reason: Extract<SendResult, { ok: false }>['suppress'];
  for (const o of outcomes) {
    const r = o.result;
    if (r?.ok) continue;
    const detail = r ? r.detail : `not attempted: ${o.held}`;
    const suppressed = r?.suppress ? '; removed from the profile and suppressed' : '';
    notes.push({ provider: o.provider?.name, detail: `${named(o)}: ${detail}${suppressed}` });
    if (r?.suppress) {
      gone.push(o.key);
      reason ??= r.suppress;
    }
  }
  const person = record.person as NonNullable<typeof record.person>;
  const goneTargets =
    gone.length > 0 && reason !== undefined
      ? { gone: { tenant: record.tenant, id: person.id, keys: gone, reason } }
      : {};
  const first = sent[0];
  if (first?.result?.ok && first.provider) {
    const delivered = sent.every((o) => o.result?.ok && o.result.delivered);
    return {
      ...lease,
      kind: delivered ? 'delivered' : 'sent',
      provider: first.provider.name,
      providerMessageId: first.result.providerMessageId,
      detail: `sent to ${sent.map(named).join(', ')}`,
      copy: first.result.copy,
      locale,
      ...(notes.length > 0 ? { notes } : {}),
      ...goneTargets,
    };
  }
  const summary = notes.map((n) => n.detail).join('; ');
  // Nothing tried (every target held back): give it back without using the attempt.
  if (outcomes.every((o) => o.held !== undefined)) {
    if (record.holds >= deps.policy.maxHolds)
      return retryOrFail(deps, record, undefined, `held ${record.holds} times in a row: ${summary}`);
    return {
      ...lease,
      kind: 'hold',
      until: deps.clock.now() + 10,
      detail: summary,
      repeat: record.holds > 0,
    };
  }
  if (flight.released)
    return {
      ...lease,
      kind: 'hold',
      until: deps.clock.now(),
      detail: 'released at shutdown',
      repeat: record.holds > 0,
    };
  const transient = outcomes.every(
    (o) => o.held !== undefined || (o.result && !o.result.ok && o.result.kind !== 'permanent'),
  );
  if (transient) return retryOrFail(deps, record, undefined, summary);
  return { ...lease, kind: 'failed', detail: summary, ...goneTargets };
}
