import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';

/** Sends headers announcing 100 bytes and one byte of body, then nothing; resolves what the server did. */
function slowBody(url: string): Promise<{ closed: boolean; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    // A guard, not a measurement: a server without a request timeout would keep it open for good.
    const guard = setTimeout(() => {
      socket.destroy();
      resolve({ closed: false, answer });
    }, 20_000);
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('close', () => {
      clearTimeout(guard);
      resolve({ closed: true, answer });
    });
    socket.on('error', () => undefined);
    socket.write(
      'POST /notifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
  });
}

/** A POST announcing `length` bytes with `Expect: 100-continue`, its body not sent yet. */
const announce = (url: string, path: string, length: number) =>
  request(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(length), expect: '100-continue' },
  });

/** Announces `length` bytes, sends 10 if asked to: did the server ask for the body, and its answer. */
function expectContinue(
  url: string,
  path: string,
  length: number,
): Promise<{ status: number; continued: boolean; body: string }> {
  return new Promise((resolve, reject) => {
    const req = announce(url, path, length);
    let continued = false;
    req.on('continue', () => {
      continued = true;
      req.end('x'.repeat(Math.min(length, 10)));
    });
    req.on('response', (response) => {
      let body = '';
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, continued, body }));
    });
    req.on('error', reject);
  });
}

/** Announces `length` bytes with `Expect: 100-continue` and sends none: `continue`, or the status. */
function askToUpload(url: string, path: string, length: number): Promise<'continue' | number> {
  return new Promise((resolve, reject) => {
    const req = announce(url, path, length);
    req.on('continue', () => {
      resolve('continue');
      req.destroy();
    });
    req.on('response', (response) => {
      resolve(response.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
  });
}

describe('HTTP hardening', () => {
  let herald: Herald;
  const config = testConfig({ HERALD_ROLES: 'auth,api,gateway', HERALD_REQUEST_TIMEOUT_MS: '1000' });
  before(async () => {
    herald = await startHerald(config);
  });
  after(() => herald.close());

  it('closes a request whose body stops arriving, on the API port and on the gateway', async () => {
    for (const url of [herald.apiUrl as string, herald.gatewayUrl as string]) {
      const outcome = await slowBody(url);
      assert.equal(outcome.closed, true, `${url} kept a slow request open`);
    }
  });

  it('refuses a body announced larger than the limit with 413 before it is uploaded', async () => {
    const api = herald.apiUrl as string;
    const big = await expectContinue(api, '/notifications', 64 * 1024 * 1024);
    assert.equal(big.status, 413);
    assert.equal(big.continued, false, 'no 100 Continue: the client never uploads');
    assert.equal(JSON.parse(big.body).code, 'PAYLOAD_TOO_LARGE');
    // The answer states the limit of the route the body was announced to.
    const limit = (bytes: number) => `The body exceeds the limit of ${bytes} bytes for this route.`;
    assert.equal(JSON.parse(big.body).detail, limit(config.bodyLimit));
    const batch = await expectContinue(api, '/notifications/batch', 64 * 1024 * 1024);
    assert.equal(JSON.parse(batch.body).detail, limit(config.batchBodyLimit));
    // Within the limit the client is asked for the body (and then needs a token: 401).
    const small = await expectContinue(api, '/notifications', 10);
    assert.equal(small.continued, true);
    assert.equal(small.status, 401);
    const gateway = await expectContinue(herald.gatewayUrl as string, '/api/notifications', 64 * 1024 * 1024);
    assert.equal(gateway.status, 413);
    assert.equal(gateway.continued, false);
    assert.equal(JSON.parse(gateway.body).detail, limit(config.bodyLimit));
  });

  it('checks an announced body against the limit of the route it names', async () => {
    const api = herald.apiUrl as string;
    // 1 MiB: over the default limit (64 KiB), within the batch (8 MiB) and webhook (2 MiB) limits.
    const mib = 1024 * 1024;
    assert.equal(await askToUpload(api, '/notifications', mib), 413);
    for (const path of ['/notifications/batch', '/notifications/batch?x=1', '/webhooks/twilio']) {
      assert.equal(await askToUpload(api, path, mib), 'continue', path);
    }
    assert.equal(await askToUpload(api, '/notifications/batch', 9 * mib), 413);
    assert.equal(await askToUpload(api, '/webhooks/twilio', 3 * mib), 413);
    // A path the batch route's pattern must not take in.
    assert.equal(await askToUpload(api, '/notifications/batchx', mib), 413);
    // The gateway's rules have the same limits.
    const gateway = herald.gatewayUrl as string;
    assert.equal(await askToUpload(gateway, '/api/notifications', mib), 413);
    assert.equal(await askToUpload(gateway, '/api/notifications/batch', mib), 'continue');
    assert.equal(await askToUpload(gateway, '/api/notifications/batch', 9 * mib), 413);
    assert.equal(await askToUpload(gateway, '/api/session', mib), 413);
  });

  it('sends nosniff on every API answer, and a frame-ancestors CSP on /docs', async () => {
    const api = herald.apiUrl as string;
    for (const path of ['/health', '/notifications', '/no-such-route', '/docs/json']) {
      const response = await fetch(`${api}${path}`);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path);
    }
    const docs = await fetch(`${api}/docs`, { redirect: 'manual' });
    assert.match(docs.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  });

  it('routes long path segments: a 4xx for a long id, a 401 without a token, never a 500', async () => {
    const api = herald.apiUrl as string;
    const token = await tokenFor(herald.deps, { role: 'admin' });
    const bearer = { authorization: `Bearer ${token}` };
    // Fastify's router refuses segments over 100 characters unless told otherwise: that was a 500.
    const long = 'a'.repeat(150);
    // Template keys and callback ids have a pattern and a length: a long one fails validation.
    const cases: Array<[string, number]> = [
      [`/notifications/${long}`, 404],
      [`/callbacks/${long}/deliveries`, 400],
      [`/templates/${long}`, 400],
    ];
    for (const [path, status] of cases) {
      const known = await fetch(`${api}${path}`, { headers: bearer });
      assert.equal(known.status, status, path);
      assert.match(known.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal((await fetch(`${api}${path}`)).status, 401, `${path} without a token`);
      assert.equal((await fetch(`${herald.gatewayUrl}/api${path}`, { headers: bearer })).status, status);
    }
    // A segment longer than any name Herald has (4096): refused as no route, with problem+json.
    const huge = 'a'.repeat(5000);
    for (const url of [
      `${api}/notifications/${huge}`,
      `${api}/unsubscribe/${huge}`,
      `${herald.gatewayUrl}/api/notifications/${huge}`,
    ]) {
      const answer = await fetch(url, { headers: bearer });
      assert.equal(answer.status, 404, url.slice(0, 60));
      assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
      const body = await answer.json();
      assert.equal(body.code, 'NOT_FOUND');
      assert.doesNotMatch(body.detail, /aaaa/, 'the path is not echoed');
    }
  });
});
