// A TCP proxy in front of PostgreSQL that counts, for each connection (by its application_name),
// the times the client waited for the server: statements it sent when every statement before had
// been answered. Pipelined statements ride on the wait of the first. Counted from the protocol's
// messages (the client's Sync ends a statement, as does a simple Query, postgres.js's for a BEGIN
// of sql.begin; the server's ReadyForQuery answers one), so nothing here depends on timing.
import { createServer, connect as dial, type Socket } from 'node:net';

export interface WaitCounter {
  /** The database URL through the proxy. */
  url: string;
  /** Waits counted for connections named `applicationName` since the last reset. */
  waits(applicationName: string): number;
  reset(): void;
  close(): Promise<void>;
}

/** Calls `onMessage(type)` for each message of a stream; the first is untyped when `startup`. */
function framer(startup: boolean, onMessage: (type: number, body: Buffer) => void) {
  let pending = Buffer.alloc(0);
  let untyped = startup;
  return (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      const head = untyped ? 0 : 1;
      if (pending.length < head + 4) return;
      const end = head + pending.readUInt32BE(head);
      if (pending.length < end) return;
      onMessage(untyped ? 0 : (pending[0] as number), pending.subarray(head + 4, end));
      pending = pending.subarray(end);
      untyped = false;
    }
  };
}

const SYNC = 'S'.charCodeAt(0);
const QUERY = 'Q'.charCodeAt(0);
const READY = 'Z'.charCodeAt(0);

/** The application_name of a startup message's body (protocol version, then name\0value\0 pairs). */
function applicationName(body: Buffer): string {
  const fields = body.subarray(4).toString('utf8').split('\u0000');
  const at = fields.indexOf('application_name');
  return at >= 0 ? (fields[at + 1] ?? '') : '';
}

export async function waitCounter(databaseUrl: string): Promise<WaitCounter> {
  const target = new URL(databaseUrl);
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = dial(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let name = '';
    let unanswered = 0;
    let waited = false;
    const fromClient = framer(true, (type, body) => {
      if (type === 0) name = applicationName(body);
      if (type !== SYNC && type !== QUERY) return;
      // The first statement sent with nothing outstanding began a wait.
      if (unanswered === 0) waited = true;
      unanswered += 1;
    });
    const fromServer = framer(false, (type) => {
      if (type === READY && unanswered > 0) unanswered -= 1;
    });
    client.on('data', (chunk: Buffer) => {
      fromClient(chunk);
      if (waited) counts.set(name, (counts.get(name) ?? 0) + 1);
      waited = false;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      fromServer(chunk);
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no proxy port');
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(address.port);
  return {
    url: proxied.toString(),
    waits: (applicationName) => counts.get(applicationName) ?? 0,
    reset: () => counts.clear(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
