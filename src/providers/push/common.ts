import type { Content, Priority } from '../../notifications/model.ts';
import type { ProviderLimits, SendResult } from '../types.ts';

/** The longest one push request may take before it counts as a (transient) timeout. */
const REQUEST_TIMEOUT_MS = 30_000;

/** CRITICAL and HIGH wake the device at once; the rest may be batched by the platform to save battery. */
export function isUrgent(priority: Priority): boolean {
  return priority === 'CRITICAL' || priority === 'HIGH';
}

/** The push payload every platform carries: title, body and the client's data. */
export function pushPayload(content: Content): {
  title: string;
  body: string;
  data: Record<string, unknown>;
} {
  return { title: content.title ?? '', body: content.body ?? content.text ?? '', data: content.data ?? {} };
}

/** The scheduler's signal bounded by a per-request timeout, so a stuck peer cannot hold a lease forever. */
export function requestSignal(signal: AbortSignal, timeoutMs = REQUEST_TIMEOUT_MS): AbortSignal {
  return AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
}

/** A network error, timeout or abort: the request may not have arrived, so it is worth retrying. */
export function networkFailure(error: unknown): SendResult {
  const name = error instanceof Error ? error.name : '';
  // Never the error's code: closed and filtered ports answer differently (ECONNREFUSED against a
  // timeout), which would make push endpoints a port scanner of the network Herald runs in.
  const what =
    name === 'TimeoutError' || name === 'AbortError' ? 'timed out' : 'could not reach the push service';
  return { ok: false, kind: 'transient', detail: `push request ${what}` };
}

/** Limits with per-deployment overrides (tests use low ones to watch the scheduler hold them). */
export function limitsWith(defaults: ProviderLimits, override?: Partial<ProviderLimits>): ProviderLimits {
  return { ...defaults, ...override };
}

/** Options every push factory takes beside its config and deps. */
export interface PushProviderOptions {
  limits?: Partial<ProviderLimits>;
  /** Per-request timeout; default REQUEST_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** Keeps a peer's error text short and single-line in events (it is shown to API callers). */
export function shortText(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** A fetch answer's body: global fetch's and undici's (Web Push) alike. */
export interface AnswerBody {
  body: { getReader(): ReadableStreamDefaultReader<Uint8Array> } | null;
}

/**
 * The start of a response body, at most `max` bytes; the rest is discarded. A push endpoint
 * comes from the API caller, so its answer is not trusted to be small.
 */
export async function readCapped(response: AnswerBody, max = 8192): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut short still leaves the status to decide on.
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}
