import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import { systemClock } from '../../src/clock.ts';
import { HeraldError } from '../../src/errors.ts';
import { buildApp } from '../../src/http/app.ts';
import { healthRoutes } from '../../src/http/health.ts';
import type { App, Routes } from '../../src/http/types.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { testConfig } from '../helpers/config.ts';

const echo: Routes = (app) => {
  app.post(
    '/echo',
    {
      schema: {
        body: Type.Object({ name: Type.String({ maxLength: 10 }) }, { additionalProperties: false }),
      },
    },
    async (request) => request.body,
  );
  app.get(
    '/choose',
    {
      schema: {
        querystring: Type.Object(
          {
            color: Type.Optional(Type.Union([Type.Literal('RED'), Type.Literal('BLUE')])),
            size: Type.Optional(Type.Union([Type.Literal('S'), Type.Integer({ minimum: 1 })])),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => request.query,
  );
  app.get('/boom', async () => {
    throw new Error('database password is hunter2');
  });
  app.get('/things/:id', async (request) => request.params);
  app.get('/busy', async () => {
    throw new HeraldError('UNAVAILABLE', 'Try later', { retryAfterS: 3 });
  });
};

describe('error handling', () => {
  let app: App;
  before(async () => {
    const config = testConfig();
    const store = createSqliteStore(config.dataDir);
    app = await buildApp({
      logLevel: 'silent',
      bodyLimit: config.bodyLimit,
      requestTimeoutMs: 30_000,
      public: [(scope) => healthRoutes(scope, { config, store, clock: systemClock }), echo],
      protected: [
        (scope) => {
          scope.post('/act', async () => ({ done: true }));
          scope.post(
            '/act-on',
            { schema: { body: Type.Object({ what: Type.String() }) } },
            async (r) => r.body,
          );
          scope.get('/look', async () => ({ seen: true }));
        },
      ],
      protect: () => {},
    });
  });
  after(() => app.close());

  const post = (payload: string, contentType = 'application/json') =>
    app.inject({ method: 'POST', url: '/echo', payload, headers: { 'content-type': contentType } });

  it('answers malformed JSON with 400 MALFORMED_BODY as problem+json', async () => {
    const response = await post('{"name": ');
    assert.equal(response.statusCode, 400);
    assert.match(response.headers['content-type'] as string, /^application\/problem\+json/);
    assert.equal(response.json().code, 'MALFORMED_BODY');
  });

  it('refuses a __proto__ or constructor.prototype key with 400, saying that may be why', async () => {
    for (const payload of [
      '{"__proto__":{"name":"x"}}',
      '{"name":"x","constructor":{"prototype":{"a":1}}}',
    ]) {
      const response = await post(payload);
      assert.equal(response.statusCode, 400, payload);
      assert.equal(response.json().code, 'MALFORMED_BODY');
      assert.match(response.json().detail, /__proto__ or constructor\.prototype/);
    }
  });

  it('refuses a compressed body with 415 instead of reading it as JSON', async () => {
    const body = JSON.stringify({ name: 'x' });
    const gzipped = await app.inject({
      method: 'POST',
      url: '/echo',
      payload: gzipSync(body),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    assert.equal(gzipped.statusCode, 415);
    assert.equal(gzipped.json().code, 'UNSUPPORTED_MEDIA_TYPE');
    const identity = await app.inject({
      method: 'POST',
      url: '/echo',
      payload: body,
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    });
    assert.equal(identity.statusCode, 200);
  });

  it('answers an empty JSON body with 400', async () => {
    const response = await post('');
    assert.equal(response.statusCode, 400);
  });

  it('answers a wrong content type with 415', async () => {
    const response = await post('name=x', 'text/plain');
    assert.equal(response.statusCode, 415);
    assert.equal(response.json().code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers an oversized body with 413', async () => {
    const response = await post(JSON.stringify({ name: 'x'.repeat(100_000) }));
    assert.equal(response.statusCode, 413);
    assert.equal(response.json().code, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses unknown fields instead of dropping them', async () => {
    const response = await post(JSON.stringify({ name: 'ada', admin: true }));
    assert.equal(response.statusCode, 400);
    const body = response.json();
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.equal(body.errors[0].path, 'body/admin');
  });

  it('names the choices once for a value that is none of them, not once a choice', async () => {
    for (const url of ['/choose?color=red', '/choose?color=RED&color=BLUE']) {
      const response = await app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 400, url);
      assert.deepEqual(response.json().errors, [
        { path: 'querystring/color', message: 'must be one of RED, BLUE' },
      ]);
    }
    assert.equal((await app.inject({ method: 'GET', url: '/choose?color=BLUE' })).statusCode, 200);
    // A union that is not only literals keeps Ajv's own words: "one of S" would be wrong.
    const mixed = await app.inject({ method: 'GET', url: '/choose?size=XL' });
    assert.equal(mixed.statusCode, 400);
    assert.doesNotMatch(JSON.stringify(mixed.json().errors), /must be one of/);
  });

  it('refuses a body with something in it where a protected route takes none', async () => {
    const act = (payload?: string, contentType = 'application/json') =>
      app.inject({
        method: 'POST',
        url: '/act',
        ...(payload === undefined ? {} : { payload, headers: { 'content-type': contentType } }),
      });
    for (const payload of ['{"reason":"x"}', '[]', '"text"', '1']) {
      const response = await act(payload);
      assert.equal(response.statusCode, 400, payload);
      assert.equal(response.json().code, 'VALIDATION_FAILED');
    }
    for (const payload of [undefined, '{}', 'null'])
      assert.equal((await act(payload)).statusCode, 200, payload);
    // An empty body is no body, whatever type a client announces for it (many send JSON's on
    // every POST); where a route takes a body, empty JSON is still malformed.
    for (const contentType of ['application/json', 'text/plain'])
      assert.equal((await act('', contentType)).statusCode, 200, contentType);
    const emptyOnSchema = await app.inject({
      method: 'POST',
      url: '/act-on',
      payload: '',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(emptyOnSchema.statusCode, 400);
    assert.equal(emptyOnSchema.json().code, 'MALFORMED_BODY');
    // A route with a body schema is left to its schema, and a read is not touched.
    const onSchema = await app.inject({ method: 'POST', url: '/act-on', payload: { what: 'x' } });
    assert.equal(onSchema.statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/look' })).statusCode, 200);
  });

  it('hides the detail of a 500', async () => {
    const response = await app.inject({ method: 'GET', url: '/boom' });
    assert.equal(response.statusCode, 500);
    assert.doesNotMatch(response.body, /hunter2/);
    assert.equal(response.json().code, 'INTERNAL');
  });

  it('passes headers of operational errors', async () => {
    const response = await app.inject({ method: 'GET', url: '/busy' });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['retry-after'], '3');
  });

  it('answers unknown routes with 404 problem+json', async () => {
    const response = await app.inject({ method: 'GET', url: '/nope?token=abc' });
    assert.equal(response.statusCode, 404);
    assert.equal(response.json().code, 'NOT_FOUND');
  });

  it('answers a method a path is not served with by 405 and Allow, without repeating the path', async () => {
    for (const [method, url, allow] of [
      ['DELETE', '/echo', 'POST'],
      ['PUT', '/things/secret-token?also=secret', 'GET, HEAD'],
      ['GET', '/act', 'POST'],
      ['OPTIONS', '/health', 'GET, HEAD'],
    ] as const) {
      const response = await app.inject({ method, url });
      assert.equal(response.statusCode, 405, `${method} ${url}`);
      assert.equal(response.headers.allow, allow);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(response.json().code, 'METHOD_NOT_ALLOWED');
      assert.doesNotMatch(response.body, /secret/);
    }
    // A path no route serves, with any method, stays 404; a catch-all (/docs/static/*, GET) is
    // not counted, or its method would be allowed everywhere below it.
    for (const url of ['/things/a/b', '/thing', '/echo/x', '/docs/static/x.js']) {
      assert.equal((await app.inject({ method: 'DELETE', url })).statusCode, 404, url);
    }
  });

  it('serves health, readiness and the OpenAPI document without a token', async () => {
    assert.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
    const docs = await app.inject({ method: 'GET', url: '/docs/json' });
    assert.equal(docs.statusCode, 200);
    assert.equal(docs.json().openapi, '3.1.0');
  });
});
