import type { SendResult } from '../types.ts';

type Failure = Extract<SendResult, { ok: false }>;

/** The recipient can never receive this message: invalid number, not SMS-capable, opted out (STOP). */
const PERMANENT = new Set([21211, 21614, 21610, 21408, 21612, 21602, 21617, 30003, 30005, 30006]);
/** Herald's own Twilio settings are wrong: credentials, account, or the From number. */
const CONFIG = new Set([20003, 20404, 21212, 21606, 21659, 21660]);
/** The recipient opted out (STOP): Twilio's error code, on a send and in status callbacks. */
export const OPTED_OUT = 21610;
/** Twilio's own "too many requests" error code. */
const TOO_MANY = 20429;

/**
 * Classifies a failed Messages API call: listed recipient errors are permanent; 20429, HTTP 429
 * and 5xx are transient (honouring Retry-After); credential and sender errors are configuration
 * errors that pause the provider; any other 4xx is permanent (retrying the same request cannot
 * succeed).
 */
export function classifyTwilioError(
  httpStatus: number,
  code: number | undefined,
  message: string,
  retryAfterMs: number | undefined,
): Failure {
  const detail = `twilio ${httpStatus}${code ? ` error ${code}` : ''}: ${message}`.slice(0, 300);
  const retry = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (code === TOO_MANY || httpStatus === 429 || httpStatus >= 500)
    return { ok: false, kind: 'transient', detail, ...retry };
  // 21610: the recipient replied STOP; Twilio refuses every message to them until START.
  if (code === OPTED_OUT) return { ok: false, kind: 'permanent', detail, suppress: 'opt_out' };
  if (code !== undefined && PERMANENT.has(code)) return { ok: false, kind: 'permanent', detail };
  if (httpStatus === 401 || httpStatus === 403 || (code !== undefined && CONFIG.has(code)))
    return { ok: false, kind: 'config', detail };
  return { ok: false, kind: 'permanent', detail };
}
