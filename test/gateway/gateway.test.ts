import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { get as httpGet, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildGateway } from '../../src/gateway/app.ts';
import { tempDir, testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type Seen, startUpstream } from './upstream.ts';

/** A tiny stand-in UI build, so these tests do not depend on `vite build`. */
function fakeWebRoot(): string {
  const root = tempDir('herald-web-');
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Herald</title><div id="root"></div>');
  writeFileSync(join(root, 'assets', 'app-abc123.js'), 'console.log(1)');
  return root;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new TypeError('not listening');
  return `http://127.0.0.1:${address.port}`;
}

describe('gateway (BFF)', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let gateway: FastifyInstance;
  let base: string;
  const lastSeen = (): Seen => upstream.seen.at(-1) as Seen;

  before(async () => {
    upstream = await startUpstream();
    const config = testConfig({ HERALD_AUTH_URL: upstream.url, HERALD_API_URL: upstream.url });
    gateway = await buildGateway(config, { webRoot: fakeWebRoot(), hop: { timeoutMs: 300 } });
    base = await listen(gateway);
  });
  after(async () => {
    await gateway.close();
    await upstream.app.close();
  });

  // node:http with a `path` option sends it as given (a URL string or fetch would normalise it).
  const raw = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; type: string; headers: IncomingHttpHeaders; body: string; error?: string }>(
      (resolve, reject) => {
        const { hostname, port } = new URL(base);
        const request = httpGet({ hostname, port, path, headers }, (response) => {
          let body = '';
          const done = (error?: string) =>
            resolve({
              status: response.statusCode ?? 0,
              type: response.headers['content-type'] ?? '',
              headers: response.headers,
              body,
              error,
            });
          response.on('data', (chunk) => {
            body += chunk;
          });
          response.on('aborted', () => done('aborted'));
          response.on('error', () => done('aborted'));
          response.on('end', () => done());
        });
        request.on('error', reject);
      },
    );
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('forwards POST /api/session to /auth/login with the body unchanged and no-store', async () => {
    const body = '{"email":"a@example.com",  "password":"pw"}';
    const response = await post('/api/session', body);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.deepEqual(await response.json(), { access_token: 'a', refresh_token: 'r' });
    assert.equal(lastSeen().url, '/auth/login');
    assert.equal(lastSeen().body, body);
  });

  it('forwards POST /api/session/refresh to /auth/refresh with no-store', async () => {
    const response = await post('/api/session/refresh', { refresh_token: 'r' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(lastSeen().url, '/auth/refresh');
  });

  it('answers another method on the session routes with 405 and Allow, sending nothing upstream', async () => {
    const before = upstream.seen.length;
    for (const path of ['/api/session', '/api/session/refresh']) {
      const response = await fetch(`${base}${path}`);
      assert.equal(response.status, 405, path);
      assert.equal(response.headers.get('allow'), 'POST');
      assert.equal((await response.json()).code, 'METHOD_NOT_ALLOWED');
    }
    assert.equal(upstream.seen.length, before);
  });

  it('passes a 401 with its WWW-Authenticate and problem+json body through unchanged', async () => {
    const response = await post('/api/session', { email: 'a@example.com', password: 'wrong' });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="herald"');
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal((await response.json()).code, 'AUTH_INVALID_CREDENTIALS');
  });

  it('passes a 429 with its Retry-After through unchanged', async () => {
    const response = await post('/api/session', { email: 'throttled@example.com', password: 'x' });
    assert.equal(response.status, 429);
    assert.equal(response.headers.get('retry-after'), '42');
    assert.equal((await response.json()).code, 'RATE_LIMITED');
  });

  it('forwards /api/auth/X to /auth/X with the Authorization header', async () => {
    const response = await fetch(`${base}/api/auth/me`, { headers: { authorization: 'Bearer abc.def.ghi' } });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="herald", error="invalid_token"');
    assert.equal(lastSeen().url, '/auth/me');
    assert.equal(lastSeen().headers.authorization, 'Bearer abc.def.ghi');
  });

  it('forwards other /api/X to /X and passes Location through unchanged', async () => {
    const response = await post('/api/notifications', { channel: 'email' });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('location'), '/notifications/n1');
    assert.equal(lastSeen().url, '/notifications');
  });

  it('passes ETag through and forwards If-None-Match for a 304', async () => {
    const first = await fetch(`${base}/api/notifications/n1?x=1`);
    assert.equal(first.headers.get('etag'), '"v1"');
    assert.equal(lastSeen().url, '/notifications/n1?x=1');
    const second = await fetch(`${base}/api/notifications/n1`, { headers: { 'if-none-match': '"v1"' } });
    assert.equal(second.status, 304);
  });

  it('passes an upstream 503 with Retry-After through without retrying it', async () => {
    const count = upstream.seen.length;
    const response = await fetch(`${base}/api/busy`);
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '3');
    assert.equal(upstream.seen.length, count + 1);
  });

  it('replaces a client-sent X-Forwarded-For with the real client address', async () => {
    await post('/api/session', { email: 'a@example.com', password: 'pw' }, { 'x-forwarded-for': '6.6.6.6' });
    assert.equal(lastSeen().headers['x-forwarded-for'], '127.0.0.1');
    await post('/api/session', { email: 'a@example.com', password: 'pw' }, { forwarded: 'for=6.6.6.6' });
    assert.equal(lastSeen().headers.forwarded, undefined);
  });

  it('sets no cookie and forwards none', async () => {
    const response = await post('/api/notifications', { channel: 'email' }, { cookie: 'session=abc' });
    assert.equal(response.headers.get('set-cookie'), null);
    assert.equal(lastSeen().headers.cookie, undefined);
    const page = await fetch(`${base}/`);
    assert.equal(page.headers.get('set-cookie'), null);
  });

  it('refuses a body over the limit with 413 problem+json before forwarding it', async () => {
    const count = upstream.seen.length;
    const response = await post('/api/notifications', { text: 'x'.repeat(70 * 1024) });
    assert.equal(response.status, 413);
    assert.equal((await response.json()).code, 'PAYLOAD_TOO_LARGE');
    assert.equal(upstream.seen.length, count);
  });

  it('lets a batch body above the single-notification limit through', async () => {
    const response = await post('/api/notifications/batch', { text: 'x'.repeat(200 * 1024) });
    assert.equal(response.status, 200);
    assert.ok((await response.json()).bytes > 200 * 1024);
  });

  it("lets a recipients batch body up to the API's 10 MiB through", async () => {
    const response = await post('/api/recipients/batch', { text: 'x'.repeat(9 * 1024 * 1024) });
    assert.equal(response.status, 200);
    assert.ok((await response.json()).bytes > 9 * 1024 * 1024);
  });

  it('forwards a POST without a body with Content-Length 0, not chunked', async () => {
    const response = await fetch(`${base}/api/notifications/n1/cancel`, { method: 'POST' });
    assert.equal(response.status, 202);
    assert.equal(lastSeen().headers['content-length'], '0');
    assert.equal(lastSeen().headers['transfer-encoding'], undefined);
  });

  it('forwards no hop-by-hop header in either direction', async () => {
    const response = await raw('/api/hop', {
      connection: 'keep-alive, x-client-secret',
      'x-client-secret': '1',
      'keep-alive': 'timeout=1',
    });
    assert.equal(response.status, 200);
    assert.equal(lastSeen().headers['x-client-secret'], undefined);
    assert.notEqual(lastSeen().headers['keep-alive'], 'timeout=1');
    assert.equal(response.headers['x-hop-secret'], undefined);
    assert.notEqual(response.headers['keep-alive'], 'timeout=72');
  });

  it('sends a path that begins with // to the upstream, never to another host', async () => {
    const response = await raw('/api//other.example/x');
    assert.equal(response.status, 404);
    assert.equal(lastSeen().url, '//other.example/x');
  });

  it('streams an answer as it comes and ends the upstream request when the client goes', async () => {
    const controller = new AbortController();
    const response = await fetch(`${base}/api/stream`, { signal: controller.signal });
    assert.equal(response.status, 200);
    const reader = response.body?.getReader();
    const first = await reader?.read();
    assert.match(new TextDecoder().decode(first?.value), /data: first/);
    controller.abort();
    await upstream.streamClosed();
  });

  it('answers 502 when the upstream cuts a small answer half-way, and cuts a streamed one', async () => {
    const small = await raw('/api/reset');
    assert.equal(small.status, 502);
    assert.match(small.type, /^application\/problem\+json/);
    assert.equal(JSON.parse(small.body).code, 'BAD_GATEWAY');
    const streamed = await raw('/api/reset-stream');
    assert.equal(streamed.status, 200);
    assert.equal(streamed.error, 'aborted');
  });

  it('answers an upstream that does not answer in time with 504 problem+json', async () => {
    const response = await fetch(`${base}/api/slow`);
    assert.equal(response.status, 504);
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal((await response.json()).code, 'GATEWAY_TIMEOUT');
  });

  it('sets the security headers at the edge on UI pages and API answers', async () => {
    for (const response of [await fetch(`${base}/`), await post('/api/notifications', {})]) {
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-eval|script-src[^;]*unsafe-inline/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    }
  });

  it('serves index.html for UI routes and hashed assets with a long cache', async () => {
    const page = await fetch(`${base}/notifications/abc`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="root">/);
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    const asset = await fetch(`${base}/assets/app-abc123.js`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
    const missing = await fetch(`${base}/assets/nope.js`);
    assert.equal(missing.status, 404);
  });

  it('answers path traversal and undecodable paths with 404 problem+json, sent exactly as written', async () => {
    for (const path of [
      '/../../etc/passwd',
      '/assets/../../package.json',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/%252e%252e/etc/passwd',
      '/a/..%5c..%5cwin.ini',
      '/%',
      '/assets/%c0%af',
      '/api/%',
      '/api/a/../b',
      '/api/%2e%2e/admin',
      '/api/notifications/%252e%252e/x',
    ]) {
      const answer = await raw(path);
      assert.equal(answer.status, 404, path);
      assert.match(answer.type, /application\/problem\+json/, path);
      assert.equal(JSON.parse(answer.body).code, 'NOT_FOUND', path);
    }
  });
});

describe('gateway with live streams open', () => {
  it('keeps serving requests while more streams are open than its request pool has connections', async () => {
    const upstream = await startUpstream();
    const config = testConfig({ HERALD_AUTH_URL: upstream.url, HERALD_API_URL: upstream.url });
    const gateway = await buildGateway(config, {
      webRoot: fakeWebRoot(),
      hop: { maxSockets: 2, timeoutMs: 60_000 },
    });
    const base = await listen(gateway);
    const streams: IncomingMessage[] = [];
    try {
      // Three status and three inbox streams, each holding an upstream connection, against a request pool of two.
      for (let i = 0; i < 6; i += 1) {
        // Not a timing assertion: a stream waiting for a pooled connection would never answer.
        const stream = await new Promise<IncomingMessage>((resolve, reject) =>
          httpGet(
            `${base}/api/${i % 2 ? 'inbox' : 'notifications'}/stream`,
            { agent: false, signal: AbortSignal.timeout(10_000) },
            resolve,
          ).on('error', reject),
        );
        streams.push(stream);
        assert.equal(stream.statusCode, 200);
        const [first] = await once(stream, 'data');
        assert.match(String(first), /: connected/);
      }
      for (let i = 0; i < 3; i += 1) {
        const response = await fetch(`${base}/api/notifications/n1`, { signal: AbortSignal.timeout(10_000) });
        assert.equal(response.status, 200);
        assert.equal((await response.json()).notificationId, 'n1');
      }
      assert.equal(upstream.seen.filter((seen) => seen.url === '/notifications/stream').length, 3);
      assert.equal(upstream.seen.filter((seen) => seen.url === '/inbox/stream').length, 3);
    } finally {
      for (const stream of streams) stream.destroy();
      await gateway.close();
      await upstream.app.close();
    }
  });
});

describe('gateway with a client that leaves before the answer', () => {
  it('ends the upstream request at once instead of holding it until the timeout', async () => {
    const upstream = await startUpstream();
    const config = testConfig({ HERALD_AUTH_URL: upstream.url, HERALD_API_URL: upstream.url });
    const gateway = await buildGateway(config, { webRoot: fakeWebRoot(), hop: { timeoutMs: 60_000 } });
    const base = await listen(gateway);
    try {
      const client = httpGet(`${base}/api/hang`, { agent: false });
      client.on('error', () => undefined);
      const gone = new Promise((resolve) => client.once('close', resolve));
      await eventually(
        () => upstream.seen.some((seen) => seen.url === '/hang'),
        10_000,
        'the request upstream',
      );
      client.destroy();
      await gone;
      // Not a timing assertion: without the gateway ending it, the upstream request would stay
      // open for the hop's 60 s timeout.
      await Promise.race([
        upstream.hangClosed(),
        sleep(10_000, undefined, { ref: false }).then(() => assert.fail('the upstream request stayed open')),
      ]);
    } finally {
      await gateway.close();
      await upstream.app.close();
    }
  });
});

describe('gateway with a dead upstream', () => {
  it('gives up on a connection that never completes with 504, after the connect timeout', {
    timeout: 20_000,
  }, async () => {
    // Takes the TCP connection and never answers the TLS handshake: only the connect timeout ends it.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const url = `https://127.0.0.1:${port}`;
    const config = testConfig({ HERALD_AUTH_URL: url, HERALD_API_URL: url });
    const gateway = await buildGateway(config, {
      webRoot: fakeWebRoot(),
      hop: { connectTimeoutMs: 100, timeoutMs: 60_000 },
    });
    try {
      const response = await fetch(`${await listen(gateway)}/api/notifications`);
      assert.equal(response.status, 504);
      assert.equal((await response.json()).code, 'GATEWAY_TIMEOUT');
    } finally {
      await gateway.close();
      silent.close();
    }
  });

  it('answers 502 problem+json when the upstream refuses connections', async () => {
    const upstream = await startUpstream();
    const url = upstream.url;
    await upstream.app.close();
    const config = testConfig({ HERALD_AUTH_URL: url, HERALD_API_URL: url });
    const gateway = await buildGateway(config, { webRoot: fakeWebRoot() });
    try {
      const base = await listen(gateway);
      for (const path of ['/api/session', '/api/notifications']) {
        const response = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        assert.equal(response.status, 502);
        assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
        const body = await response.json();
        assert.equal(body.code, 'BAD_GATEWAY');
        assert.doesNotMatch(JSON.stringify(body), /ECONNREFUSED|127\.0\.0\.1/);
      }
    } finally {
      await gateway.close();
    }
  });
});
