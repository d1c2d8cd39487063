import type { Provider, ProviderDeps, ProviderLimits, SendResult } from '../types.ts';
import { SmppLink, type SmppLinkOptions } from './smpp-link.ts';
import { type DeliverSm, parseReceipt } from './smpp-receipt.ts';
import { classifySubmitStatus, isCredentialError, SMPP_STATUS } from './smpp-status.ts';
import { smsProvider } from './sms-provider.ts';

/** The SMPP provider's configuration (SMPP_URL, SMPP_SOURCE_ADDR). */
export interface SmppConfig {
  url: string;
  sourceAddr: string;
}

/** Limits and timers; the defaults suit a typical SMSC account (window 10, 50 msg/s). */
export type SmppOptions = Partial<ProviderLimits> &
  Partial<Omit<SmppLinkOptions, 'host' | 'port' | 'tls' | 'systemId' | 'password'>> & {
    /** How long a send waits for the session to (re)bind before it counts as a transient failure. */
    bindWaitMs?: number;
  };

/** short_message holds at most 254 octets; longer texts go in the message_payload TLV. */
const SHORT_MESSAGE_CHARS = 160;

function parseSmppUrl(raw: string) {
  const url = new URL(raw);
  if (url.protocol !== 'smpp:' && url.protocol !== 'ssmpp:') {
    throw new TypeError('SMPP_URL must start with smpp:// (or ssmpp:// for TLS)');
  }
  const tls = url.protocol === 'ssmpp:';
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : tls ? 3550 : 2775,
    tls,
    systemId: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    systemType: url.searchParams.get('system_type') ?? '',
  };
}

/** TON/NPI for an address: alphanumeric sender, international number, or a short code. */
function addressing(address: string): { addr: string; ton: number; npi: number } {
  if (/[^+\d]/.test(address)) return { addr: address, ton: 5, npi: 0 };
  if (address.startsWith('+') || address.length > 8)
    return { addr: address.replace(/^\+/, ''), ton: 1, npi: 1 };
  return { addr: address, ton: 3, npi: 1 };
}

/**
 * SMS over SMPP 3.4: one transceiver session (binds, keeps alive, reconnects), submit_sm with
 * registered_delivery so the SMSC sends receipts, and the receipts (deliver_sm) turned into
 * delivery reports on the same session. The SMSC's message_id is the provider message id;
 * receipts are matched by it as the SMSC writes it.
 */
export function createSmppProvider(
  config: SmppConfig,
  deps: ProviderDeps,
  options: SmppOptions = {},
): Provider {
  const target = parseSmppUrl(config.url);
  const limits: ProviderLimits = {
    concurrency: options.concurrency ?? 10,
    ratePerSecond: options.ratePerSecond ?? 50,
    burst: options.burst ?? options.ratePerSecond ?? 50,
  };
  const bindWaitMs = options.bindWaitMs ?? 5000;
  const source = addressing(config.sourceAddr);

  const link = new SmppLink(
    {
      ...target,
      systemType: options.systemType ?? target.systemType,
      enquireLinkMs: options.enquireLinkMs ?? 30_000,
      responseTimeoutMs: options.responseTimeoutMs ?? 10_000,
      reconnectBaseMs: options.reconnectBaseMs ?? 500,
      reconnectMaxMs: options.reconnectMaxMs ?? 30_000,
    },
    async (pdu) => {
      const receipt = parseReceipt(pdu as DeliverSm);
      // Mobile-originated messages and unreadable receipts are acknowledged and dropped.
      if (!receipt) return SMPP_STATUS.ESME_ROK;
      try {
        await deps.reports.report({
          provider: 'smpp',
          providerMessageId: receipt.messageId,
          outcome: receipt.outcome,
          detail: `stat:${receipt.stat}${receipt.error ? ` err:${receipt.error}` : ''}`,
          at: deps.clock.now(),
          source: 'receipt',
        });
        return SMPP_STATUS.ESME_ROK;
      } catch (error) {
        // Not stored: a temporary error makes the SMSC deliver the receipt again.
        deps.log.error({ provider: 'smpp', err: error }, 'storing an SMPP receipt failed');
        return SMPP_STATUS.ESME_RX_T_APPN;
      }
    },
    deps.log,
  );
  link.start();

  async function submit(to: string, text: string, signal: AbortSignal): Promise<SendResult> {
    if (!(await link.waitBound(bindWaitMs, signal))) {
      const refused = link.lastBindError;
      if (refused !== undefined && isCredentialError(refused)) {
        return {
          ok: false,
          kind: 'config',
          detail: `SMPP bind refused (0x${refused.toString(16)}): check SMPP_URL`,
        };
      }
      return { ok: false, kind: 'transient', detail: 'SMPP session not bound' };
    }
    const destination = addressing(to);
    const body =
      text.length > SHORT_MESSAGE_CHARS
        ? { message_payload: { message: text } }
        : { short_message: { message: text } };
    const response = await link.submit(
      {
        source_addr: source.addr,
        source_addr_ton: source.ton,
        source_addr_npi: source.npi,
        destination_addr: destination.addr,
        dest_addr_ton: destination.ton,
        dest_addr_npi: destination.npi,
        registered_delivery: 1,
        ...body,
      },
      signal,
    );
    if ('lost' in response) return { ok: false, kind: 'transient', detail: response.lost };
    const { pdu } = response;
    if (pdu.command_status !== SMPP_STATUS.ESME_ROK) return classifySubmitStatus(pdu.command_status);
    const messageId = typeof pdu.message_id === 'string' ? pdu.message_id : '';
    if (!messageId) return { ok: true, detail: 'smpp submit_sm_resp without message_id' };
    return { ok: true, providerMessageId: messageId, detail: 'smpp submit_sm_resp 0x00000000' };
  }

  return smsProvider({
    name: 'smpp',
    limits,
    submit: (to, text, _message, signal) => submit(to, text, signal),
    close: () => link.close(),
  });
}
