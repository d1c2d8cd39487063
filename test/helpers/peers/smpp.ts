import type { AddressInfo } from 'node:net';
import smpp from 'smpp';

type Session = InstanceType<typeof smpp.Session>;

/** One submit_sm as the SMSC received it. */
export interface Submitted {
  messageId: string | undefined;
  sourceAddr: string;
  destinationAddr: string;
  destTon: number;
  registeredDelivery: number;
  text: string;
  /** When it arrived, epoch ms. */
  at: number;
}

export interface SmppPeerOptions {
  systemId: string;
  password: string;
  /** destination_addr → command_status to answer submit_sm with (0x58, 0x0B, ...). */
  submitStatus?: Record<string, number>;
  /** destination_addr → receipt `stat` sent right after the submit (default DELIVRD); 'none' sends none. */
  receipts?: Record<string, string>;
  /** Answer enquire_link? (false simulates a dead link.) */
  answerEnquireLink?: boolean;
}

/** A local SMSC (the `smpp` package's server) that binds, answers submits and sends receipts. */
export interface SmppPeer {
  url(systemId?: string, password?: string): string;
  submitted: Submitted[];
  binds: number;
  refusedBinds: number;
  enquireLinks: number;
  /** deliver_sm_resp statuses the client answered receipts with. */
  receiptAcks: number[];
  /** Sends a receipt for `messageId` on the bound session; resolves with the client's status. */
  sendReceipt(messageId: string, stat: string, destination?: string): Promise<number>;
  /** Drops every client connection (the client should reconnect and rebind). */
  dropConnections(): void;
  close(): Promise<void>;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && 'message' in value)
    return String((value as { message: unknown }).message);
  return '';
}

export async function startSmppPeer(options: SmppPeerOptions): Promise<SmppPeer> {
  const sessions = new Set<Session>();
  let bound: Session | undefined;
  // A receipt goes back on the session that submitted the message, as an SMSC does; the latest
  // bound session may belong to another client (an earlier test's provider that reconnected).
  const submitters = new Map<string, Session>();
  let sequence = 0;
  const peer = {
    submitted: [] as Submitted[],
    binds: 0,
    refusedBinds: 0,
    enquireLinks: 0,
    receiptAcks: [] as number[],
  };
  const sendReceipt = (messageId: string, stat: string, destination = '15551234567') =>
    new Promise<number>((resolve, reject) => {
      const owner = submitters.get(messageId);
      const session = owner && sessions.has(owner) ? owner : bound;
      if (!session) return reject(new Error('no bound session'));
      const delivered = stat === 'DELIVRD' ? '001' : '000';
      session.deliver_sm(
        {
          source_addr: destination,
          destination_addr: 'HERALD',
          esm_class: 0x04,
          short_message: {
            message: `id:${messageId} sub:001 dlvrd:${delivered} submit date:2601010000 done date:2601010001 stat:${stat} err:000 text:`,
          },
        },
        (pdu) => {
          peer.receiptAcks.push(pdu.command_status);
          resolve(pdu.command_status);
        },
      );
    });

  const server = smpp.createServer({}, (session) => {
    sessions.add(session);
    session.on('close', () => {
      sessions.delete(session);
      if (bound === session) bound = undefined;
    });
    session.on('error', () => undefined);
    session.on('bind_transceiver', (pdu) => {
      if (pdu.system_id !== options.systemId || pdu.password !== options.password) {
        peer.refusedBinds += 1;
        session.send(pdu.response({ command_status: 0x0e }));
        return;
      }
      peer.binds += 1;
      bound = session;
      session.send(pdu.response({ system_id: 'TESTSMSC' }));
    });
    session.on('enquire_link', (pdu) => {
      peer.enquireLinks += 1;
      if (options.answerEnquireLink !== false) session.send(pdu.response());
    });
    session.on('unbind', (pdu) => {
      session.send(pdu.response());
      session.close();
    });
    session.on('submit_sm', (pdu) => {
      const destination = String(pdu.destination_addr);
      const status = options.submitStatus?.[destination] ?? 0;
      const messageId = status === 0 ? `msg-${++sequence}` : undefined;
      peer.submitted.push({
        messageId,
        sourceAddr: String(pdu.source_addr),
        destinationAddr: destination,
        destTon: Number(pdu.dest_addr_ton),
        registeredDelivery: Number(pdu.registered_delivery),
        text: text(pdu.short_message) || text(pdu.message_payload),
        at: Date.now(),
      });
      if (status !== 0) {
        session.send(pdu.response({ command_status: status }));
        return;
      }
      session.send(pdu.response({ message_id: messageId }));
      if (messageId) submitters.set(messageId, session);
      const stat = options.receipts?.[destination] ?? 'DELIVRD';
      if (pdu.registered_delivery && stat !== 'none' && messageId) {
        setImmediate(() => sendReceipt(messageId, stat, destination).catch(() => undefined));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(peer, {
    url: (systemId = options.systemId, password = options.password) =>
      `smpp://${encodeURIComponent(systemId)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    sendReceipt,
    dropConnections() {
      for (const session of sessions) session.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  });
}
