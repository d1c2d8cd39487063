import type { SendResult } from '../types.ts';

type Failure = Extract<SendResult, { ok: false }>;

/** SMPP 3.4 command_status values Herald tells apart (section 5.1.3). */
export const SMPP_STATUS = {
  ESME_ROK: 0x00,
  ESME_RINVBNDSTS: 0x04,
  ESME_RSYSERR: 0x08,
  ESME_RINVSRCADR: 0x0a,
  ESME_RINVDSTADR: 0x0b,
  ESME_RBINDFAIL: 0x0d,
  ESME_RINVPASWD: 0x0e,
  ESME_RINVSYSID: 0x0f,
  ESME_RMSGQFUL: 0x14,
  ESME_RSUBMITFAIL: 0x45,
  ESME_RTHROTTLED: 0x58,
  ESME_RX_T_APPN: 0x64,
} as const;

const hex = (status: number) => `0x${status.toString(16).padStart(8, '0')}`;

/** A bind refused for these reasons will not succeed on retry: the credentials are wrong. */
export function isCredentialError(status: number): boolean {
  return (
    status === SMPP_STATUS.ESME_RINVPASWD ||
    status === SMPP_STATUS.ESME_RINVSYSID ||
    status === SMPP_STATUS.ESME_RBINDFAIL
  );
}

const TRANSIENT = new Set<number>([
  SMPP_STATUS.ESME_RINVBNDSTS,
  SMPP_STATUS.ESME_RSYSERR,
  SMPP_STATUS.ESME_RMSGQFUL,
  SMPP_STATUS.ESME_RSUBMITFAIL,
  SMPP_STATUS.ESME_RTHROTTLED,
  SMPP_STATUS.ESME_RX_T_APPN,
]);

/** How long to hold back after a throttled submit when the SMSC gives no hint. */
const THROTTLE_BACKOFF_MS = 1000;

/**
 * Classifies a failed submit_sm_resp: throttling, a full queue and system errors are transient;
 * a bad source address or bind status from our side is configuration; anything else, such as
 * 0x0B (invalid destination), is permanent for this message.
 */
export function classifySubmitStatus(status: number): Failure {
  const detail = `smpp submit_sm_resp ${hex(status)}`;
  if (status === SMPP_STATUS.ESME_RTHROTTLED)
    return {
      ok: false,
      kind: 'transient',
      detail: `${detail} (throttled)`,
      retryAfterMs: THROTTLE_BACKOFF_MS,
    };
  if (TRANSIENT.has(status)) return { ok: false, kind: 'transient', detail };
  if (status === SMPP_STATUS.ESME_RINVSRCADR)
    return { ok: false, kind: 'config', detail: `${detail} (invalid source address)` };
  if (status === SMPP_STATUS.ESME_RINVDSTADR)
    return { ok: false, kind: 'permanent', detail: `${detail} (invalid destination address)` };
  return { ok: false, kind: 'permanent', detail };
}
