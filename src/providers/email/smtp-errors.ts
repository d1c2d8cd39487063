import type { SendResult } from '../types.ts';

type Failure = Extract<SendResult, { ok: false }>;

/** The fields nodemailer puts on its errors and rejected-recipient entries. */
export interface SmtpErrorLike {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  message?: string;
}

/** Codes that say the credentials or the server's auth policy are wrong, not the recipient. */
const AUTH_CODES = new Set(['EAUTH', 'ENOAUTH']);
const AUTH_REPLIES = new Set([530, 534, 535, 538]);

/**
 * Classifies an SMTP failure (RFC 5321 reply classes): an authentication failure or a refused
 * STARTTLS that SMTP_URL requires is a configuration error that pauses the provider; 4xx is transient; 5xx is permanent; no reply at
 * all (connection refused, timeout, TLS drop) is transient.
 */
export function classifySmtpError(error: SmtpErrorLike): Failure {
  const reply = error.responseCode;
  const text = (error.response ?? error.message ?? 'SMTP error').slice(0, 300);
  if ((error.code && AUTH_CODES.has(error.code)) || (reply && AUTH_REPLIES.has(reply))) {
    return { ok: false, kind: 'config', detail: `SMTP authentication failed: ${text}` };
  }
  // STARTTLS refused or failed where TLS is required (credentials on smtp://): the server's set-up.
  if (error.code === 'ETLS') {
    return {
      ok: false,
      kind: 'config',
      detail: 'SMTP server did not accept STARTTLS, which SMTP_URL requires',
    };
  }
  if (reply && reply >= 500 && reply < 600) {
    // A 5xx to RCPT TO is about the recipient (no such mailbox, refused): a hard bounce.
    return error.command === 'RCPT TO'
      ? { ok: false, kind: 'permanent', detail: text, suppress: 'bounce' }
      : { ok: false, kind: 'permanent', detail: text };
  }
  if (reply && reply >= 400 && reply < 500) return { ok: false, kind: 'transient', detail: text };
  return { ok: false, kind: 'transient', detail: `${error.code ?? 'ERROR'}: ${text}` };
}
