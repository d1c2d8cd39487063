import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { Channel, Content, Priority, Recipient } from '../notifications/model.ts';
import type { ReportSink } from '../notifications/reports.ts';
import type { SandboxCopy } from '../notifications/status.ts';
import type { SuppressionReason } from '../suppressions/model.ts';

/** What a provider is asked to send: the notification, already rendered. */
export interface OutgoingMessage {
  notificationId: string;
  tenant: string;
  channel: Channel;
  priority: Priority;
  recipient: Recipient;
  content: Content;
  /** 1 for the first attempt. */
  attempt: number;
  /** Email of LOW priority: the one-click unsubscribe link (List-Unsubscribe, RFC 8058). */
  unsubscribeUrl?: string;
}

/**
 * The outcome of one send. Providers return failures rather than throw; a thrown error is
 * treated as transient. `config` failures (bad credentials) pause the provider instead of
 * counting against the notification.
 */
export type SendResult =
  | {
      ok: true;
      providerMessageId?: string;
      /** True when the provider confirms delivery synchronously (the sandbox): status DELIVERED, not SENT. */
      delivered?: boolean;
      detail?: string;
      /** A copy of the message to store with the completion, in its transaction (the sandbox's). */
      copy?: SandboxCopy;
    }
  | {
      ok: false;
      /**
       * Whose failure it is: `permanent` belongs to this message alone (a bad, unknown or gone
       * recipient, any 4xx of a push service for one subscription) and never feeds a circuit;
       * `transient` (network errors, timeouts, 5xx, 429) and `config` (the provider's own
       * credentials) are the provider's and count towards its circuit.
       */
      kind: 'transient' | 'permanent' | 'config';
      detail: string;
      /** From a Retry-After or equivalent; the backoff never retries sooner. */
      retryAfterMs?: number;
      providerMessageId?: string;
      /**
       * What the answer says about the recipient for good (a push target gone, a hard bounce, an
       * SMS opt-out): Herald suppresses it, committed with this FAILED.
       */
      suppress?: SuppressionReason;
    };

/** Limits the scheduler enforces per provider: concurrent sends and a token bucket. */
export interface ProviderLimits {
  concurrency: number;
  ratePerSecond: number;
  burst: number;
  /**
   * Whether workers on PostgreSQL share this provider's rate bucket and circuit through the
   * database (a real service's limits are global). False for a provider that is local to each
   * worker and has no limit worth sharing (the sandbox). Default true.
   */
  shared?: boolean;
}

/** One way of delivering one channel. Every provider meets this one interface. */
export interface Provider {
  /** Stable name, stored on the notification (`smtp`, `twilio`, `smpp`, `webpush`, `apns`, `fcm`, `sandbox`). */
  readonly name: string;
  readonly channel: Channel;
  readonly limits: ProviderLimits;
  /**
   * Providers of one channel with the same route reach the same recipients and stand in for
   * each other, in the registry's order (SMTP and its fallback; Twilio and SMPP). Absent: its name.
   */
  readonly route?: string;
  /** Whether this provider can reach the recipient (push: web subscription vs. APNs vs. FCM token). */
  accepts(recipient: Recipient): boolean;
  /**
   * What a failure of a send to `recipient` says is broken, when that is narrower than the whole
   * provider: Web Push answers come from the subscription's push service, so its circuits are
   * kept per push-service origin and one broken service holds back no other. Absent: one
   * circuit for the provider.
   */
  circuitKey?(recipient: Recipient): string | undefined;
  send(message: OutgoingMessage, signal: AbortSignal): Promise<SendResult>;
  close?(): Promise<void>;
}

/** What provider factories are built from. */
export interface ProviderDeps {
  config: Config;
  clock: Clock;
  reports: ReportSink;
  log: {
    info(obj: object, msg?: string): void;
    warn(obj: object, msg?: string): void;
    error(obj: object, msg?: string): void;
  };
}
