import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { buildGateway } from '../../src/gateway/app.ts';
// @ts-expect-error: a plain ES module of the build, without types
import { buildInbox } from '../../web/inbox/build.mjs';
import { tempDir, testConfig } from '../helpers/config.ts';

/** Issue #51: the element is "under 25 KB gzipped". */
const GZIP_LIMIT = 25 * 1024;

describe('/inbox.js: the <herald-inbox> element, built and served by the gateway', () => {
  let gateway: FastifyInstance;
  let base: string;
  let built: Buffer;

  before(async () => {
    const root = tempDir('herald-web-');
    mkdirSync(join(root, 'assets'));
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>Herald</title>');
    await buildInbox(join(root, 'inbox.js'));
    built = readFileSync(join(root, 'inbox.js'));
    // Nothing listens upstream: /inbox.js never reaches the API or the auth service.
    const nowhere = 'http://127.0.0.1:9';
    gateway = await buildGateway(testConfig({ HERALD_AUTH_URL: nowhere, HERALD_API_URL: nowhere }), {
      webRoot: root,
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    const address = gateway.server.address();
    if (!address || typeof address === 'string') throw new TypeError('not listening');
    base = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    await gateway?.close();
  });

  it('is one self-contained script under 25 KB gzipped', () => {
    const gzipped = gzipSync(built, { level: 9 }).length;
    assert.ok(gzipped < GZIP_LIMIT, `${gzipped} bytes gzipped`);
    const source = built.toString('utf8');
    // No module syntax (a classic <script src> runs it) and nothing fetched besides the API.
    assert.doesNotMatch(source, /\bimport\s*\(|^import |^export /m);
    // Nothing that a strict CSP or Trusted Types would refuse: no eval, no markup parsed.
    assert.doesNotMatch(
      source,
      /\beval\(|new Function\(|innerHTML|outerHTML|insertAdjacentHTML|document\.write/,
    );
    assert.match(source, /customElements\.define\("herald-inbox"/);
    assert.match(source, /attachShadow\(\{mode:"open"\}\)/);
  });

  it('is served with a JavaScript type, the strict CSP, and loadable by other origins', async () => {
    const response = await fetch(`${base}/inbox.js`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^(text|application)\/javascript/);
    assert.deepEqual(Buffer.from(await response.arrayBuffer()), built);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    // The callers' own apps load it from their origins; revalidated, so a new build shows at once.
    assert.equal(response.headers.get('cross-origin-resource-policy'), 'cross-origin');
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    // Every other file keeps the same-origin policy.
    const page = await fetch(`${base}/`);
    await page.body?.cancel();
    assert.equal(page.headers.get('cross-origin-resource-policy'), 'same-origin');
  });
});
