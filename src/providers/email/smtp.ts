import nodemailer from 'nodemailer';
import type { Provider, ProviderDeps, SendResult } from '../types.ts';
import { bareMessageId } from './message-id.ts';
import { classifySmtpError, type SmtpErrorLike } from './smtp-errors.ts';
import { fromDomain, parseSmtpUrl } from './smtp-options.ts';
import { connectWithoutDelay } from './smtp-socket.ts';

/** The SMTP provider's configuration (SMTP_URL, EMAIL_FROM). */
export interface SmtpConfig {
  url: string;
  from: string;
}

/** Header carrying the notification ID on every message Herald sends. */
export const NOTIFICATION_ID_HEADER = 'X-Herald-Notification-Id';

/**
 * Settles with `work`, or as a transient failure as soon as `signal` aborts (timeout or
 * shutdown). The SMTP transaction itself is not cut, so the message may still go out: delivery
 * is at least once. The abort listener is removed either way.
 */
function abortable(work: () => Promise<SendResult>, signal: AbortSignal): Promise<SendResult> {
  const aborted: SendResult = { ok: false, kind: 'transient', detail: 'send aborted (timeout or shutdown)' };
  // Aborted before it started: nothing goes out.
  if (signal.aborted) return Promise.resolve(aborted);
  return new Promise((resolve) => {
    const onAbort = () => resolve(aborted);
    signal.addEventListener('abort', onAbort, { once: true });
    work().then((result) => {
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    });
  });
}

/**
 * Email over SMTP through a nodemailer pool: at most `maxConnections` connections; the scheduler
 * starts at most `rateLimit` messages in any second (its one rate limiter, dispatch/rate-window.ts). The Message-ID is derived from the notification ID, so a retry
 * of the same notification carries the same Message-ID (receivers and relays can deduplicate)
 * and webhooks from SMTP relays (SendGrid, Mailgun) find the notification by it.
 */
export function createSmtpProvider(config: SmtpConfig, deps: ProviderDeps, name = 'smtp'): Provider {
  const options = parseSmtpUrl(config.url);
  const domain = fromDomain(config.from);
  const transport = nodemailer.createTransport({
    pool: true,
    host: options.host,
    port: options.port,
    secure: options.secure,
    requireTLS: options.requireTLS,
    ...(options.auth ? { auth: options.auth } : {}),
    maxConnections: options.maxConnections,
    maxMessages: options.maxMessages,
    getSocket: connectWithoutDelay(options.host, options.port),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    // Never log message bodies or credentials.
    logger: false,
    debug: false,
  });

  async function deliver(
    to: string,
    messageId: string,
    notificationId: string,
    content: SendInput,
    unsubscribeUrl: string | undefined,
  ) {
    const refs = { herald_notification_id: notificationId, herald_message_id: bareMessageId(messageId) };
    try {
      const info = await transport.sendMail({
        from: config.from,
        to,
        subject: content.subject ?? '',
        ...(content.text !== undefined ? { text: content.text } : {}),
        ...(content.html !== undefined ? { html: content.html } : {}),
        messageId,
        headers: {
          [NOTIFICATION_ID_HEADER]: notificationId,
          // SendGrid and Mailgun echo these back in their event webhooks.
          'X-SMTPAPI': JSON.stringify({ unique_args: refs }),
          'X-Mailgun-Variables': JSON.stringify(refs),
          // RFC 8058 one-click unsubscribe (bulk mail: what Gmail and Yahoo require of senders).
          ...(unsubscribeUrl === undefined
            ? {}
            : {
                'List-Unsubscribe': `<${unsubscribeUrl}>`,
                'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
              }),
        },
      });
      // A recipient refused at RCPT fails this notification even if the transaction went through.
      const rejected = (info.rejected ?? []).map(String);
      if (rejected.some((address) => address.toLowerCase() === to.toLowerCase())) {
        const error = ((info as { rejectedErrors?: SmtpErrorLike[] }).rejectedErrors ?? [])[0] ?? {
          responseCode: 550,
          response: 'recipient rejected',
        };
        return { ...classifySmtpError(error), providerMessageId: bareMessageId(messageId) };
      }
      return {
        ok: true as const,
        providerMessageId: bareMessageId(info.messageId) ?? bareMessageId(messageId),
        detail: String(info.response ?? '250 OK').slice(0, 300),
      };
    } catch (error) {
      const failure = classifySmtpError(error as SmtpErrorLike);
      if (failure.kind === 'config') {
        deps.log.error(
          { provider: name, host: options.host, code: (error as SmtpErrorLike).code },
          failure.detail,
        );
      }
      return failure;
    }
  }

  return {
    name,
    route: 'smtp',
    channel: 'email',
    limits: {
      concurrency: options.maxConnections,
      ratePerSecond: options.ratePerSecond || 1_000_000,
      burst: Math.max(1, options.ratePerSecond || options.maxConnections),
    },
    accepts: (recipient) => typeof recipient.email === 'string' && recipient.email.length > 0,
    async send(message, signal) {
      const to = message.recipient.email;
      if (!to) return { ok: false, kind: 'permanent', detail: 'no email address' };
      const messageId = `<${message.notificationId}@${domain}>`;
      return abortable(
        () => deliver(to, messageId, message.notificationId, message.content, message.unsubscribeUrl),
        signal,
      );
    },
    async close() {
      transport.close();
    },
  };
}

type SendInput = { subject?: string; text?: string; html?: string };
