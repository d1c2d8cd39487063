import type { Clock } from '../clock.ts';
import type { CircuitOptions } from '../config/config.ts';

export type { CircuitOptions };

/**
 * One provider's breaker. Closed: sends flow. Open: none flow until `retryAt`; the scheduler holds
 * their notifications back without using attempts. Half-open: one probe at a time; its success
 * closes the circuit, its failure reopens it for twice as long (the failures of sends that were
 * already out when it opened do not).
 */
export interface Circuit {
  /** May a send start now? In half-open, true once (the probe) until it reports. */
  allow(): boolean;
  /** When the circuit lets a send through again (now when it already does). */
  retryAt(): number;
  /** How many sends the claim may plan for: unbounded closed, 0 open, 1 for the half-open probe. */
  capacity(): number;
  success(): void;
  failure(): void;
  /** A configuration failure: open for configPauseMs at once. */
  pause(): void;
  readonly state: 'closed' | 'open' | 'half-open';
}

/** `options`: config.dispatch.circuit (the defaults in config/schema.ts), or a test's shorter one. */
export function createCircuit(clock: Clock, options: CircuitOptions): Circuit {
  let failures = 0;
  let openUntil = 0;
  let openFor = options.openMs;
  let opened = false;
  let probing = false;
  const open = (ms: number) => {
    opened = true;
    probing = false;
    openUntil = clock.now() + ms;
  };
  return {
    get state() {
      if (!opened) return 'closed';
      return clock.now() < openUntil ? 'open' : 'half-open';
    },
    allow() {
      if (!opened) return true;
      if (clock.now() < openUntil || probing) return false;
      probing = true;
      return true;
    },
    retryAt() {
      const now = clock.now();
      if (!opened) return now;
      if (now < openUntil) return openUntil;
      // Half-open with the probe out: look again shortly rather than spin.
      return probing ? now + Math.min(openFor, 1000) : now;
    },
    capacity() {
      if (!opened) return Number.POSITIVE_INFINITY;
      return clock.now() < openUntil || probing ? 0 : 1;
    },
    success() {
      failures = 0;
      opened = false;
      probing = false;
      openFor = options.openMs;
    },
    failure() {
      failures++;
      if (opened) {
        // Only the half-open probe's failure reopens it, for twice as long. Sends that started
        // before it opened and fail after it change nothing: each would have doubled the open
        // time, keeping a recovered provider out for a minute instead of seconds.
        if (!probing) return;
        openFor = Math.min(openFor * 2, options.maxOpenMs);
        open(openFor);
      } else if (failures >= options.failureThreshold) open(openFor);
    },
    pause() {
      open(options.configPauseMs);
    },
  };
}
