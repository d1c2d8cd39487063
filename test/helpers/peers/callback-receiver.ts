import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { peerTls } from './webpush.ts';

/** One request a receiver got. */
export interface ReceivedCallback {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it answered. */
  status: number;
  at: number;
}

/**
 * A status-callback receiver over HTTPS (the test CA's localhost certificate), as a customer
 * would run one: it records each request as received; tests verify them with `standardwebhooks`.
 * Each path answers the statuses scripted for it in order, then 204.
 */
export interface CallbackReceiver {
  origin: string;
  /** The host:port to list in HERALD_CALLBACK_ALLOWED_HOSTS. */
  host: string;
  received: ReceivedCallback[];
  script(path: string, ...statuses: number[]): void;
  /** Answers this path's requests only after `ms` (a slow receiver); they count as received at once. */
  hold(path: string, ms: number): void;
  /** What one path got. */
  at(path: string): ReceivedCallback[];
  close(): Promise<void>;
}

export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const scripts = new Map<string, number[]>();
  const holds = new Map<string, number>();
  const server = createServer(peerTls(), (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const status = scripts.get(path)?.shift() ?? 204;
      received.push({
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
        status,
        at: Date.now(),
      });
      const wait = holds.get(path) ?? 0;
      if (wait === 0) response.writeHead(status).end();
      else setTimeout(() => response.writeHead(status).end(), wait).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://localhost:${port}`,
    host: `localhost:${port}`,
    received,
    script: (path, ...statuses) => scripts.set(path, statuses),
    hold: (path, ms) => holds.set(path, ms),
    at: (path) => received.filter((r) => r.path === path),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
