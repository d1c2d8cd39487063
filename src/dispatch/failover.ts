import type { NotificationRecord } from '../notifications/model.ts';
import type { Provider } from '../providers/types.ts';
import type { createProviderStates } from './provider-state.ts';

type States = ReturnType<typeof createProviderStates>;

/** Whether a provider's circuit lets the next send to this recipient through now. */
const healthy = (states: States, provider: Provider, record: NotificationRecord) =>
  states.of(provider).circuitFor(record.recipient).capacity() > 0;

/**
 * Which of a notification's providers (primary first) its attempt goes to. A first attempt goes
 * to the primary; a retry goes to the provider after the one whose transient failure it follows
 * (the row keeps that provider's name), so a failing primary is not asked twice in a row. Either
 * way a provider whose circuit is open is passed over for the next healthy one; with none
 * healthy, the attempt stays with the first choice and its circuit holds it back. So traffic
 * returns to a recovered primary by itself: its half-open circuit takes the next first attempt.
 */
export function chooseProvider(
  alternatives: readonly Provider[],
  states: States,
  record: NotificationRecord,
): Provider {
  const n = alternatives.length;
  const first = alternatives[0] as Provider;
  if (n === 1) return first;
  const failed =
    record.attempts > 1 && record.provider !== null
      ? alternatives.findIndex((p) => p.name === record.provider)
      : -1;
  for (let i = 1; i <= n; i++) {
    const candidate = alternatives[(failed + i) % n] as Provider;
    if (healthy(states, candidate, record)) return candidate;
  }
  return alternatives[(failed + 1) % n] as Provider;
}

/** Whether another provider than `failed` could take the next attempt now (retry at once, no backoff). */
export function fallbackReady(
  alternatives: readonly Provider[],
  states: States,
  record: NotificationRecord,
  failed: Provider,
): boolean {
  return alternatives.some((p) => p !== failed && healthy(states, p, record));
}
