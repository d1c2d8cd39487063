import smpp from 'smpp';
import type { ProviderDeps } from '../types.ts';
import { isCredentialError } from './smpp-status.ts';

type Session = InstanceType<typeof smpp.Session>;
type PDU = smpp.PDU;

/** Where and how an SMPP link binds, and its timers. */
export interface SmppLinkOptions {
  host: string;
  port: number;
  tls: boolean;
  systemId: string;
  password: string;
  systemType: string;
  /** enquire_link period; a link whose enquire_link goes unanswered for a period is dropped. */
  enquireLinkMs: number;
  /** How long a bind or a submit may wait for its response. */
  responseTimeoutMs: number;
  reconnectBaseMs: number;
  reconnectMaxMs: number;
}

/** The answer to a request: the response PDU, or why there is none. */
export type LinkResponse = { pdu: PDU } | { lost: string };

/**
 * One bound transceiver session to the SMSC that stays up: binds on connect, keeps the link
 * alive with enquire_link, answers the SMSC's enquire_link and unbind, hands every deliver_sm
 * to `onDeliver` (acknowledged with the status it returns), and reconnects with exponential
 * backoff and jitter after any drop. In-flight requests of a dropped session fail at once.
 */
export class SmppLink {
  private session: Session | undefined;
  private bound = false;
  private closed = false;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly waiters = new Set<(bound: boolean) => void>();
  private readonly inflight = new Set<(response: LinkResponse) => void>();
  /** The command_status of the last refused bind, cleared by a successful one. */
  lastBindError: number | undefined;

  constructor(
    private readonly options: SmppLinkOptions,
    private readonly onDeliver: (pdu: PDU) => Promise<number>,
    private readonly log: ProviderDeps['log'],
  ) {}

  get isBound(): boolean {
    return this.bound;
  }

  start(): void {
    if (this.closed || this.session) return;
    const { host, port, tls } = this.options;
    const session = smpp.connect({ host, port, tls });
    this.session = session;
    const bindTimer = setTimeout(() => session.destroy(), this.options.responseTimeoutMs);
    session.on('connect', () => {
      session.bind_transceiver(
        {
          system_id: this.options.systemId,
          password: this.options.password,
          system_type: this.options.systemType,
          interface_version: 0x34,
        },
        (pdu) => {
          clearTimeout(bindTimer);
          if (session !== this.session) return;
          if (pdu.command_status === 0) return this.onBound(session);
          this.lastBindError = pdu.command_status;
          this.log.error(
            { provider: 'smpp', host, status: pdu.command_status },
            isCredentialError(pdu.command_status)
              ? 'SMPP bind refused: check SMPP_URL credentials'
              : 'SMPP bind refused',
          );
          session.destroy();
        },
      );
    });
    session.on('error', (error: NodeJS.ErrnoException) => {
      this.log.warn({ provider: 'smpp', host, code: error.code }, 'SMPP connection error');
    });
    session.on('close', () => {
      clearTimeout(bindTimer);
      if (session === this.session) this.onDropped();
    });
    session.on('deliver_sm', (pdu: PDU) => {
      this.onDeliver(pdu).then(
        (status) => session.send(pdu.response({ command_status: status })),
        () => session.send(pdu.response({ command_status: 0x08 })),
      );
    });
    session.on('enquire_link', (pdu: PDU) => session.send(pdu.response()));
    session.on('unbind', (pdu: PDU) => {
      session.send(pdu.response());
      session.close();
    });
  }

  private onBound(session: Session): void {
    this.bound = true;
    this.failures = 0;
    this.lastBindError = undefined;
    this.log.info({ provider: 'smpp', host: this.options.host }, 'SMPP bound as transceiver');
    let unanswered = false;
    this.keepAlive = setInterval(() => {
      // The previous enquire_link got no answer within a whole period: the link is dead.
      if (unanswered) return session.destroy();
      unanswered = true;
      session.enquire_link({}, () => {
        unanswered = false;
      });
    }, this.options.enquireLinkMs);
    this.keepAlive.unref();
    for (const wake of this.waiters) wake(true);
    this.waiters.clear();
  }

  private onDropped(): void {
    this.session = undefined;
    this.bound = false;
    clearInterval(this.keepAlive);
    for (const fail of [...this.inflight]) fail({ lost: 'SMPP connection lost' });
    if (this.closed) return;
    // Wrong credentials will not fix themselves quickly: retry them at the slowest pace.
    const exponent = Math.min(this.failures, 16);
    const base =
      this.lastBindError !== undefined && isCredentialError(this.lastBindError)
        ? this.options.reconnectMaxMs
        : Math.min(this.options.reconnectMaxMs, this.options.reconnectBaseMs * 2 ** exponent);
    this.failures += 1;
    const delay = Math.round(base * (0.5 + Math.random() / 2));
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.start();
    }, delay);
    this.reconnectTimer.unref();
  }

  /** Resolves true once bound, false after `ms` or when `signal` aborts. */
  waitBound(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.bound) return Promise.resolve(true);
    if (this.closed || signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(finish);
        signal.removeEventListener('abort', abort);
        resolve(value);
      };
      const abort = () => finish(false);
      const timer = setTimeout(abort, ms);
      this.waiters.add(finish);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  /** Sends submit_sm on the bound session and waits for its response. */
  submit(params: Record<string, unknown>, signal: AbortSignal): Promise<LinkResponse> {
    const session = this.session;
    if (!session || !this.bound) return Promise.resolve({ lost: 'SMPP session not bound' });
    return new Promise((resolve) => {
      let done = false;
      const finish = (response: LinkResponse) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.inflight.delete(finish);
        signal.removeEventListener('abort', abort);
        resolve(response);
      };
      const abort = () => finish({ lost: 'send aborted' });
      const timer = setTimeout(
        () => finish({ lost: 'no submit_sm_resp in time' }),
        this.options.responseTimeoutMs,
      );
      this.inflight.add(finish);
      signal.addEventListener('abort', abort, { once: true });
      if (!session.submit_sm(params, (pdu) => finish({ pdu }))) finish({ lost: 'SMPP socket not writable' });
    });
  }

  /** Unbinds politely (briefly), then closes; no reconnect after this. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.keepAlive);
    for (const wake of [...this.waiters]) wake(false);
    const session = this.session;
    if (!session) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => session.destroy(), 1000);
      session.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (!this.bound || !session.unbind({}, () => session.close())) session.destroy();
    });
  }
}
