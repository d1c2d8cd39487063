import type { Clock } from '../clock.ts';
import type { Channel, Recipient } from '../notifications/model.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Provider } from '../providers/types.ts';
import { type Rank, reserveCaps, roomFor } from '../reserve.ts';
import { type Circuit, type CircuitOptions, createCircuit } from './circuit.ts';
import { bothLimits, createRateWindow, type RateLimiter } from './rate-window.ts';
import type { SharedLimits } from './shared-limits.ts';

/** One provider's limits as this worker enforces them (in memory: each worker holds its share). */
export interface ProviderState {
  provider: Provider;
  /** The provider's one rate limiter (this worker's window, and the shared pool on PostgreSQL). */
  rate: RateLimiter;
  /** The provider's circuit: the one claims plan by. */
  circuit: Circuit;
  /** The circuit a send to this recipient reports to: the provider's, or a narrower one (circuitKey). */
  circuitFor(recipient: Recipient): Circuit;
  /** Sends of `rank` that may start now under the provider's concurrency and its reserve. */
  room(rank: Rank): number;
  /** Takes a slot for a send of `rank` if there is room; `release` gives it back. */
  acquire(rank: Rank): boolean;
  release(rank: Rank): void;
}

/** Per-provider rate, concurrency and circuit state, and what a claim may plan per channel. */
export function createProviderStates(
  registry: ProviderRegistry,
  clock: Clock,
  circuit: CircuitOptions,
  shared?: SharedLimits,
) {
  const states = new Map<Provider, ProviderState>();
  // With shared limits (PostgreSQL scale-out), providers draw on the database's buckets and
  // circuits, unless their limits say they are local (the sandbox).
  const isShared = (provider: Provider) => shared !== undefined && provider.limits.shared !== false;
  const rateOf = (provider: Provider) => {
    const window = createRateWindow(clock, provider.limits.ratePerSecond);
    return shared && isShared(provider) ? bothLimits(window, shared.bucket(provider)) : window;
  };
  const circuitOf = (provider: Provider, key?: string) =>
    shared && isShared(provider)
      ? shared.circuit(provider, createCircuit(clock, circuit), key)
      : createCircuit(clock, circuit);
  const stateOf = (provider: Provider): ProviderState => {
    const main = circuitOf(provider);
    // Narrower circuits (per push-service origin), made on first use. Bounded: a sender cannot
    // make more of them than there are push services it addresses, and each is a few numbers.
    const narrow = new Map<string, Circuit>();
    const caps = reserveCaps(provider.limits.concurrency);
    // Sends in progress per priority rank, from the slot's taking (before rendering) to the answer.
    const inFlight: [number, number, number, number] = [0, 0, 0, 0];
    return {
      provider,
      rate: rateOf(provider),
      circuit: main,
      circuitFor(recipient) {
        const key = provider.circuitKey?.(recipient);
        if (key === undefined) return main;
        let found = narrow.get(key);
        if (!found) {
          found = circuitOf(provider, key);
          narrow.set(key, found);
        }
        return found;
      },
      room: (rank) => roomFor(rank, inFlight, caps),
      acquire(rank) {
        if (roomFor(rank, inFlight, caps) <= 0) return false;
        inFlight[rank] = (inFlight[rank] ?? 0) + 1;
        return true;
      },
      release(rank) {
        inFlight[rank] = (inFlight[rank] ?? 1) - 1;
      },
    };
  };
  for (const provider of registry.all()) states.set(provider, stateOf(provider));
  return {
    of(provider: Provider): ProviderState {
      let state = states.get(provider);
      if (!state) {
        state = stateOf(provider);
        states.set(provider, state);
      }
      return state;
    },
    /**
     * Most rows of `rank` for a channel the next claim should take: what its providers can start
     * now for that priority (free concurrency and tokens past the reserve, circuit). A channel
     * whose providers are all open claims nothing, so its notifications stay queued with their
     * attempts untouched.
     */
    channelCapacity(channel: Channel, rank: Rank, cap: number): number {
      // `inapp` calls no provider (deliver-inbox.ts): only the worker's slots bound it.
      if (channel === 'inapp') return cap;
      let room = 0;
      // Of the providers that stand in for each other (one route), only the one the next send
      // goes to counts: the primary, or its fallback while the primary's circuit is open.
      const planned = new Set<string>();
      for (const provider of registry.forChannel(channel)) {
        const route = provider.route ?? provider.name;
        if (planned.has(route)) continue;
        const s = this.of(provider);
        const circuit = s.circuit.capacity();
        if (circuit <= 0) continue;
        planned.add(route);
        room += Math.max(0, Math.min(circuit, s.room(rank), s.rate.available(rank)));
        if (room >= cap) return cap;
      }
      return room;
    },
  };
}
