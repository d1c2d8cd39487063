import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { createStall, type Stall } from './stall.ts';

/** One message as the peer received it. */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** Header lines, names lower-cased. */
  headers: Map<string, string>;
  /** When its MAIL FROM arrived (the start of the transaction), epoch ms. */
  at: number;
  /** Whether the session was encrypted (implicit TLS or after STARTTLS). */
  secure: boolean;
}

export interface SmtpPeerOptions {
  /** user → password; when set, AUTH is required and other credentials get 535. */
  users?: Record<string, string>;
  /** recipient → SMTP reply code to refuse its RCPT TO with (450, 550, ...). */
  rejectRecipients?: Record<string, number>;
  /** The address to listen on (default 127.0.0.1). */
  listen?: string;
  /** The port (default: a free one); a server back on the port of one that stopped. */
  port?: number;
  /**
   * TLS with the test CA's certificate for 127.0.0.1 (test/fixtures/push): from the first byte
   * (`smtps://`), or offered through STARTTLS. None by default.
   */
  tls?: 'implicit' | 'starttls';
}

const FIXTURES = join(import.meta.dirname, '../../fixtures/push');

/** A real SMTP server (smtp-server) on a free local port, recording what it receives. */
export interface SmtpPeer {
  port: number;
  url(user?: string, pass?: string, query?: string): string;
  received: ReceivedMail[];
  /** Most connections that were open at the same time. */
  maxConcurrentConnections: number;
  /** Connections opened in total. */
  connections: number;
  /** Per-recipient slowness: the answer to DATA waits `stall.delay(recipient)` ms. */
  stall: Stall;
  /** AUTH commands received (credentials a client sent). */
  authAttempts: number;
  /** Every RCPT TO address, refused ones included: what a provider call to each recipient left. */
  rcpt: string[];
  close(): Promise<void>;
}

function parseHeaders(raw: string): Map<string, string> {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? '';
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

export async function startSmtpPeer(options: SmtpPeerOptions = {}): Promise<SmtpPeer> {
  let open = 0;
  const mailFromAt = new Map<string, number>();
  const peer = {
    received: [] as ReceivedMail[],
    rcpt: [] as string[],
    maxConcurrentConnections: 0,
    connections: 0,
    stall: createStall(),
    authAttempts: 0,
  };
  const reject = options.rejectRecipients ?? {};
  const tls =
    options.tls === undefined
      ? {}
      : { key: readFileSync(join(FIXTURES, 'server.key')), cert: readFileSync(join(FIXTURES, 'server.pem')) };
  const serverOptions: SMTPServerOptions = {
    ...tls,
    secure: options.tls === 'implicit',
    disabledCommands: options.tls === 'starttls' ? [] : ['STARTTLS'],
    disableReverseLookup: true,
    // A client's idle pooled connection does not hold a closing test up for the default 30 s.
    closeTimeout: 500,
    allowInsecureAuth: true,
    authOptional: !options.users,
    logger: false,
    onConnect(_session, callback) {
      open += 1;
      peer.connections += 1;
      peer.maxConcurrentConnections = Math.max(peer.maxConcurrentConnections, open);
      callback();
    },
    onClose() {
      open -= 1;
    },
    onAuth(auth, _session, callback) {
      peer.authAttempts += 1;
      const expected = options.users?.[auth.username ?? ''];
      if (expected !== undefined && expected === auth.password)
        return callback(null, { user: auth.username });
      const error = Object.assign(new Error('5.7.8 Authentication credentials invalid'), {
        responseCode: 535,
      });
      return callback(error);
    },
    onMailFrom(_address, session, callback) {
      mailFromAt.set(session.id, Date.now());
      callback();
    },
    onRcptTo(address, _session, callback) {
      peer.rcpt.push(address.address.toLowerCase());
      const code = reject[address.address.toLowerCase()];
      if (!code) return callback();
      const text = code >= 500 ? '5.1.1 No such user here' : '4.2.1 Mailbox temporarily unavailable';
      return callback(Object.assign(new Error(text), { responseCode: code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        await peer.stall.wait(session.envelope.rcptTo[0]?.address ?? '');
        const raw = Buffer.concat(chunks).toString('utf8');
        peer.received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          headers: parseHeaders(raw),
          at: mailFromAt.get(session.id) ?? Date.now(),
          secure: session.secure,
        });
        callback(null, 'OK: queued as test');
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.listen ?? '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(peer, {
    port,
    url(user?: string, pass?: string, query = '') {
      const auth = user ? `${encodeURIComponent(user)}:${encodeURIComponent(pass ?? '')}@` : '';
      const scheme = options.tls === 'implicit' ? 'smtps' : 'smtp';
      return `${scheme}://${auth}127.0.0.1:${port}${query ? `?${query}` : ''}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
