import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Agent, fetch } from 'undici';
import { openPrivateKey } from '../auth/key-crypto.ts';
import type { Clock } from '../clock.ts';
import { isAllowedHost, publicOnlyLookup, refusedAtConnect, refusedUrl } from '../providers/outbound.ts';
import type { CallbackRecord, LeasedMessage, MessageOutcome } from '../store/port/callbacks.ts';
import type { Store } from '../store/port/index.ts';
import { FANOUT_PAGE, fanOutStep } from './fanout.ts';
import { signatureHeader } from './signing.ts';

/** No answer within this is a failed attempt (API.md §10). */
export const CALLBACK_TIMEOUT_MS = 10_000;
/** Messages are retried for this long after the status change, then given up. */
export const CALLBACK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** After a rotation the old secret still signs (a second signature) for this long. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;
/**
 * The partition of the sender between receivers: at most this many requests in flight and this
 * many a second per callback, so one slow or failing receiver holds up no other (each has its
 * own slots; a receiver that hangs uses its own 16 for 10 s, never another's).
 */
export const PER_CALLBACK_IN_FLIGHT = 16;
export const PER_CALLBACK_PER_SECOND = 500;
/** A leased message whose worker died is attempted again after this. */
const LEASE_MS = CALLBACK_TIMEOUT_MS * 3;
/** Delays after each failed attempt: soon once, then backing off to every two hours. */
const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000];

export function retryDelayOf(attempt: number): number {
  const base = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] ?? 7_200_000;
  // Up to 20% jitter spreads a burst of failures.
  return Math.round(base * (1 + Math.random() * 0.2));
}

export interface CallbackSenderDeps {
  store: Store;
  clock: Clock;
  log: Logger;
  /** Hosts a callback URL may name even when private (HERALD_CALLBACK_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** Opens the sealed secrets (HERALD_KEY_ENCRYPTION_SECRET). */
  keyEncryptionSecret?: string;
  pollMs?: number;
}

export interface CallbackSender {
  /** Runs one fan-out and send pass now (tests; the loop also runs on its own). */
  kick(): void;
  close(): Promise<void>;
}

/** What one attempt got, and what it means for the message. */
interface Attempt {
  statusCode: number | null;
  error: string | null;
  outcome: MessageOutcome;
  gone: boolean;
}

/**
 * The worker role's sender of status callbacks: fans the status log out to messages, then sends
 * due messages, each callback within its own slots and rate, signed as Standard Webhooks says.
 */
export function startCallbackSender(deps: CallbackSenderDeps): CallbackSender {
  const { store, clock, log } = deps;
  const owner = `cb-${randomUUID()}`;
  const publicOnly = new Agent({ connect: { lookup: publicOnlyLookup } });
  const listed = new Agent();
  const inFlight = new Map<string, number>();
  const recent = new Map<string, number[]>();
  const sending = new Set<Promise<void>>();
  const opened = new Map<string, string>();
  let callbacks = new Map<string, CallbackRecord>();
  let running = false;
  let again = false;
  let closed = false;

  const open = (sealed: string, id: string) => {
    let plain = opened.get(sealed);
    if (plain === undefined) {
      plain = openPrivateKey(sealed, id, deps.keyEncryptionSecret);
      opened.set(sealed, plain);
    }
    return plain;
  };

  /** Room for more requests to this callback now: its free slots, within its rate. */
  function room(id: string, now: number): number {
    const times = (recent.get(id) ?? []).filter((t) => t > now - 1000);
    recent.set(id, times);
    return Math.max(
      0,
      Math.min(PER_CALLBACK_IN_FLIGHT - (inFlight.get(id) ?? 0), PER_CALLBACK_PER_SECOND - times.length),
    );
  }

  async function attempt(callback: CallbackRecord, message: LeasedMessage): Promise<Attempt> {
    const expired = clock.now() - message.createdAt >= CALLBACK_RETRY_WINDOW_MS;
    const retry = (): MessageOutcome =>
      expired ? { kind: 'failed' } : { kind: 'retry', retryAt: clock.now() + retryDelayOf(message.attempt) };
    const refused = refusedUrl(callback.url, deps.allowedHosts, 'HERALD_CALLBACK_ALLOWED_HOSTS');
    if (refused)
      return { statusCode: null, error: `callback URL ${refused}`, outcome: { kind: 'failed' }, gone: false };
    const timestamp = Math.floor(clock.now() / 1000);
    const secrets = [open(callback.secret, callback.id)];
    if (
      callback.previousSecret &&
      callback.rotatedAt !== null &&
      clock.now() - callback.rotatedAt < PREVIOUS_SECRET_MS
    ) {
      secrets.push(open(callback.previousSecret, callback.id));
    }
    try {
      const response = await fetch(callback.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Herald-Callbacks/1',
          'webhook-id': message.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, message.id, timestamp, message.body),
        },
        body: message.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
        dispatcher: isAllowedHost(new URL(callback.url), deps.allowedHosts) ? listed : publicOnly,
      });
      // The answer is read (so the connection is reused) and dropped: never stored or logged.
      await response.body?.cancel().catch(() => undefined);
      const statusCode = response.status;
      if (statusCode >= 200 && statusCode < 300)
        return { statusCode, error: null, outcome: { kind: 'delivered' }, gone: false };
      if (statusCode === 410) return { statusCode, error: null, outcome: { kind: 'failed' }, gone: true };
      return { statusCode, error: null, outcome: retry(), gone: false };
    } catch (error) {
      const detail = refusedAtConnect(error)
        ? 'callback host resolves to a private address'
        : (error as Error).name === 'TimeoutError'
          ? `no answer within ${CALLBACK_TIMEOUT_MS / 1000} s`
          : `request failed: ${((error as { cause?: Error }).cause ?? (error as Error)).message}`;
      return { statusCode: null, error: detail, outcome: retry(), gone: false };
    }
  }

  async function send(callback: CallbackRecord, message: LeasedMessage): Promise<void> {
    try {
      const result = await attempt(callback, message);
      await store.callbacks.complete(message, owner, result.outcome, result, clock.now());
      if (result.gone) {
        await store.callbacks.disable(callback.id, 'the receiver answered 410 Gone', clock.now());
        log.warn({ callback: callback.id }, 'callback disabled: its receiver answered 410');
      }
    } catch (error) {
      // The lease runs out and the message is attempted again.
      log.warn({ err: error, callback: callback.id }, 'callback attempt could not be recorded');
    } finally {
      inFlight.set(callback.id, (inFlight.get(callback.id) ?? 1) - 1);
      kick();
    }
  }

  async function pass(): Promise<void> {
    while ((await fanOutStep(store, clock)) === FANOUT_PAGE && !closed);
    callbacks = new Map((await store.callbacks.enabled()).map((c) => [c.id, c]));
    const now = clock.now();
    for (const id of await store.callbacks.dueCallbacks(now, 1000)) {
      const callback = callbacks.get(id);
      const free = room(id, now);
      if (!callback || free === 0 || closed) continue;
      const messages = await store.callbacks.claim(id, owner, now, now + LEASE_MS, free);
      for (const message of messages) {
        inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
        recent.get(id)?.push(now);
        const task = send(callback, message).finally(() => sending.delete(task));
        sending.add(task);
      }
    }
  }

  function kick(): void {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    void (async () => {
      do {
        again = false;
        try {
          await pass();
        } catch (error) {
          log.warn({ err: error }, 'callback pass failed; retrying');
        }
      } while (again && !closed);
      running = false;
    })();
  }

  const timer = setInterval(kick, deps.pollMs ?? 200);
  timer.unref();
  kick();
  return {
    kick,
    async close() {
      closed = true;
      clearInterval(timer);
      await Promise.allSettled([...sending]);
      await Promise.all([publicOnly.close(), listed.close()]);
    },
  };
}
