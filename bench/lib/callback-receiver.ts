import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Api } from './api.ts';

const FIXTURES = join(import.meta.dirname, '../../test/fixtures/push');

/**
 * A status-callback receiver for the bench: HTTPS with the test CA, answers 204 at once and keeps,
 * per message, the lag from the status change to its receipt in ms: all of them in `lags`, and
 * by the request's path in `lagsAt` (one receiver can stand for several callbacks, `url(path)`).
 */
export async function startReceiver() {
  const lags: number[] = [];
  const byPath = new Map<string, number[]>();
  const server = createServer(
    { key: readFileSync(join(FIXTURES, 'server.key')), cert: readFileSync(join(FIXTURES, 'server.pem')) },
    (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const at = Date.now();
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { timestamp: string };
        const lag = at - Date.parse(body.timestamp);
        lags.push(lag);
        const path = request.url ?? '/';
        const here = byPath.get(path) ?? [];
        if (here.length === 0) byPath.set(path, here);
        here.push(lag);
        response.writeHead(204).end();
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `https://localhost:${port}`;
  return {
    lags,
    lagsAt: (path: string) => byPath.get(path) ?? [],
    url: `${origin}/bench`,
    urlOf: (path: string) => `${origin}${path}`,
    host: `localhost:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * What Herald needs to send to the bench's receiver (a private host, our CA). `rate` raises
 * HERALD_CALLBACK_RATE: the default 2,000/s per callback would be the bottleneck of a 100,000
 * burst; raised, the limit is the receiver's to set.
 */
export function receiverEnv(receiver: Receiver, rate?: number): Record<string, string> {
  return {
    HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host,
    NODE_EXTRA_CA_CERTS: join(FIXTURES, 'ca.pem'),
    ...(rate === undefined ? {} : { HERALD_CALLBACK_RATE: String(rate) }),
  };
}

/** Registers the receiver as a callback for every DELIVERED. */
export async function addCallback(api: Api, receiver: Receiver): Promise<void> {
  const created = await api.request('POST', '/callbacks', { url: receiver.url, events: ['DELIVERED'] });
  if (created.status !== 201)
    throw new Error(`POST /callbacks: ${created.status} ${JSON.stringify(created.body)}`);
}
