import Fastify, { type FastifyInstance } from 'fastify';

/** What the stand-in upstream saw of one request. */
export interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A real HTTP server standing in for the auth service and the API behind the gateway: it records
 * what arrives and answers with the statuses and headers the gateway must pass through.
 */
export async function startUpstream(): Promise<{
  app: FastifyInstance;
  url: string;
  seen: Seen[];
  /** Resolves when the client of GET /stream (the gateway) has closed that request. */
  streamClosed: () => Promise<void>;
  /** Resolves when the client of GET /hang has closed that request. */
  hangClosed: () => Promise<void>;
}> {
  const seen: Seen[] = [];
  let streamClosed: Promise<void> = new Promise(() => {});
  let hangClosed: Promise<void> = new Promise(() => {});
  const app = Fastify({ forceCloseConnections: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.addHook('preHandler', async (request) => {
    seen.push({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: typeof request.body === 'string' ? request.body : '',
    });
  });
  app.post('/auth/login', async (request, reply) => {
    if (String(request.body).includes('wrong')) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="herald"')
        .type('application/problem+json')
        .send({ status: 401, code: 'AUTH_INVALID_CREDENTIALS' });
    }
    if (String(request.body).includes('throttled')) {
      return reply
        .code(429)
        .header('retry-after', '42')
        .type('application/problem+json')
        .send({ status: 429, code: 'RATE_LIMITED' });
    }
    return reply.header('cache-control', 'no-store').send({ access_token: 'a', refresh_token: 'r' });
  });
  app.post('/auth/refresh', async () => ({ refreshed: true }));
  app.get('/auth/me', async (_request, reply) =>
    reply
      .code(401)
      .header('www-authenticate', 'Bearer realm="herald", error="invalid_token"')
      .type('application/problem+json')
      .send({ status: 401, code: 'AUTH_INVALID_TOKEN' }),
  );
  app.post('/notifications', async (_request, reply) =>
    reply
      .code(201)
      .header('location', '/notifications/n1')
      .header('set-cookie', 'tracking=1')
      .send({ notificationId: 'n1' }),
  );
  app.get('/notifications/n1', async (request, reply) => {
    if (request.headers['if-none-match'] === '"v1"') return reply.code(304).header('etag', '"v1"').send();
    return reply.header('etag', '"v1"').send({ notificationId: 'n1', status: 'QUEUED' });
  });
  app.post('/notifications/n1/cancel', async (_request, reply) => reply.code(202).send());
  app.get('/busy', async (_request, reply) =>
    reply.code(503).header('retry-after', '3').type('application/problem+json').send({ status: 503 }),
  );
  app.post('/notifications/batch', async (request) => ({ bytes: String(request.body).length }));
  app.post('/recipients/batch', { bodyLimit: 16 * 1024 * 1024 }, async (request) => ({
    bytes: String(request.body).length,
  }));
  // Never answers: the gateway must give up with a 504.
  app.get('/slow', () => new Promise(() => {}));
  // Never answers either, and tells when its client (the gateway) has gone.
  app.get('/hang', (request) => {
    hangClosed = new Promise((resolve) => request.raw.socket.once('close', () => resolve()));
    return new Promise(() => {});
  });
  // Connection-scoped headers the gateway must not pass on (the named one included).
  app.get('/hop', async (_request, reply) =>
    reply
      .header('connection', 'x-hop-secret')
      .header('x-hop-secret', '1')
      .header('keep-alive', 'timeout=72')
      .send({ ok: true }),
  );
  // One event, then nothing until the client goes: it must reach the client at once.
  app.get('/stream', (request, reply) => {
    streamClosed = new Promise((resolve) => request.raw.socket.once('close', () => resolve()));
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
    reply.raw.write('data: first\n\n');
  });
  // The live status and inbox streams: one comment, then open until the client goes.
  for (const url of ['/notifications/stream', '/inbox/stream']) {
    app.get(url, (_request, reply) => {
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
      reply.raw.write(': connected\n\n');
    });
  }
  // Half an answer, then the connection is cut: a small one of known length, and a streamed one.
  app.get('/reset', (_request, reply) => {
    reply.raw.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
    reply.raw.write('partial', () => reply.raw.socket?.destroy());
  });
  app.get('/reset-stream', (_request, reply) => {
    reply.raw.writeHead(200, { 'content-type': 'text/plain' });
    reply.raw.write('partial', () => setTimeout(() => reply.raw.socket?.destroy(), 50));
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new TypeError('not listening');
  return {
    app,
    url: `http://127.0.0.1:${address.port}`,
    seen,
    streamClosed: () => streamClosed,
    hangClosed: () => hangClosed,
  };
}
