import { createServer } from 'node:net';

/** A TCP port free right now on 127.0.0.1 (the server binds it a moment later; start retries on a clash). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether a server can listen on `port` of 127.0.0.1 right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port free on 127.0.0.1 that nothing else here takes meanwhile: below Linux's ephemeral range
 * (32768 to 60999), where every `listen(0)` of the tests running beside this one lands. For a
 * test that needs connections refused now and a server on the same port later: a port from
 * freePort(), once closed, can be taken by another test's peer (likely why the failover test's
 * "refused" SMTP primary once ended an attempt FAILED, in a run on Node 22).
 */
export async function portOutsideEphemeralRange(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (await canListen(port)) return port;
  }
}
