import {
  type ClientHttp2Session,
  connect,
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';

/** One HTTP/2 exchange's answer. */
export interface Http2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A lazily (re)connected HTTP/2 session to one origin; every request is a stream on it. */
export interface Http2Client {
  request(headers: OutgoingHttpHeaders, body: string, signal: AbortSignal): Promise<Http2Answer>;
  close(): Promise<void>;
}

/**
 * APNs wants one long-lived connection carrying many concurrent streams rather than a
 * connection per message. A session that errors, closes or receives GOAWAY is forgotten and
 * the next request connects again.
 */
export function createHttp2Client(origin: string): Http2Client {
  let session: ClientHttp2Session | undefined;
  const inFlight = new WeakMap<ClientHttp2Session, number>();

  function current(): ClientHttp2Session {
    if (session && !session.closed && !session.destroyed) return session;
    const fresh = connect(origin);
    const forget = () => {
      if (session === fresh) session = undefined;
    };
    // Errors surface on the streams too; this listener only keeps them from being uncaught.
    fresh.on('error', forget);
    fresh.on('goaway', forget);
    fresh.on('close', forget);
    // An idle connection must not keep the process alive on shutdown (see settle()).
    fresh.unref();
    session = fresh;
    return fresh;
  }

  return {
    request(headers, body, signal) {
      return new Promise<Http2Answer>((resolve, reject) => {
        let stream: ReturnType<ClientHttp2Session['request']>;
        let used: ClientHttp2Session;
        try {
          used = current();
          stream = used.request({ [constants.HTTP2_HEADER_METHOD]: 'POST', ...headers }, { signal });
        } catch (error) {
          reject(error);
          return;
        }
        // A request in flight keeps the process alive; the idle connection does not.
        inFlight.set(used, (inFlight.get(used) ?? 0) + 1);
        used.ref();
        const settle = () => {
          const left = (inFlight.get(used) ?? 1) - 1;
          inFlight.set(used, left);
          if (left === 0 && !used.destroyed) used.unref();
        };
        stream.once('close', settle);
        let status = 0;
        let responseHeaders: IncomingHttpHeaders = {};
        const chunks: Buffer[] = [];
        stream.on('response', (received) => {
          responseHeaders = received;
          status = Number(received[constants.HTTP2_HEADER_STATUS]);
        });
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () =>
          resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks).toString() }),
        );
        stream.on('error', reject);
        stream.on('close', () => {
          // A stream reset before any response (RST_STREAM, abort) ends without 'end'.
          if (status === 0) reject(new Error(`stream closed (code ${stream.rstCode})`));
        });
        stream.end(body);
      });
    },
    close() {
      const open = session;
      session = undefined;
      if (!open || open.closed) return Promise.resolve();
      return new Promise((resolve) => open.close(() => resolve()));
    },
  };
}
