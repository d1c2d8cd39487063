// Bad input gets a 4xx problem, never a 500, on every operation of the OpenAPI document, on SQLite
// and on PostgreSQL (whose statements refuse more than SQLite's: integer ranges, text it cannot
// hold). Each operation's own example (its body, path and query parameters) is sent mutated one
// part at a time: each body field (and each field one level down) missing, or replaced by a value
// of the wrong kind, too large, empty or holding a NUL; the whole body replaced, left out, sent as
// another type or as broken JSON; each path and query parameter replaced by a malformed value, or
// given twice. Every answer must be below 500, and a 4xx must be problem+json (the token
// endpoint's, OAuth 2.0's JSON form). The inbox's operations are sent with a recipient token, the
// others with an admin's; live streams are left out (an answer that never ends).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openapiDocument } from '../../src/cli/openapi.ts';
import type { App } from '../../src/http/types.ts';
import type { HeraldDeps } from '../../src/main.ts';
import { buildApi, createDeps } from '../../src/main.ts';
import { isPlainObject } from '../../src/recipients/profile.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { examplesOf, type Operation, parameterExample } from '../helpers/openapi-operations.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

/** The token endpoint answers errors in OAuth 2.0's form (RFC 6749), not as problems. */
const OAUTH_ERRORS = '/auth/token';
/** Operations whose success would end the test's own credentials. */
const LEFT_OUT = new Set(['POST /auth/logout-all', 'POST /auth/password']);

const deep = (levels: number): unknown => (levels === 0 ? 1 : [deep(levels - 1)]);
/** Values of the wrong kind, size or content for any field. */
const BAD_VALUES: unknown[] = [
  null,
  -1,
  1.5,
  1e308,
  '',
  'x'.repeat(20_000),
  'a\u0000b',
  [],
  [null],
  {},
  true,
  deep(64),
];
/** Whole bodies that are no object, or one nested past any schema. */
const BAD_BODIES: unknown[] = [
  null,
  [],
  'x',
  0,
  {},
  deep(512),
  { a: { b: { c: { d: 'x'.repeat(5_000) } } } },
];
const BAD_PATH = ['x', 'x'.repeat(300), '%00', '%2F', '..', '%C3%A9', '-1', '%FF'];
/** Bodies as sent: none, of another type, not JSON, JSON of another charset. */
const BAD_RAW: Array<{ type?: string; payload?: string }> = [
  {},
  { type: 'application/json' },
  { type: 'text/plain', payload: 'hello' },
  { type: 'application/json', payload: '{"a":' },
  { type: 'application/json', payload: '{"__proto__":{"x":1}}' },
  { type: 'application/json; charset=latin1', payload: '{}' },
  { type: 'application/x-www-form-urlencoded', payload: 'a=1&a=2' },
];
const BAD_QUERY = [
  '',
  'x',
  '-1',
  '0',
  '99999999999999999999',
  '1.5',
  'x'.repeat(3_000),
  '%00',
  'true',
  '%FF',
];

/** The example body with one field (or one field of a field) missing or replaced. */
function* mutatedBodies(example: unknown): Generator<unknown> {
  yield* BAD_BODIES;
  if (!isPlainObject(example)) return;
  yield { ...example, unexpectedField: 'x' };
  for (const [key, value] of Object.entries(example)) {
    const { [key]: _dropped, ...rest } = example;
    yield rest;
    for (const bad of BAD_VALUES) yield { ...example, [key]: bad };
    if (isPlainObject(value)) {
      for (const inner of Object.keys(value)) {
        for (const bad of [null, '', 'x'.repeat(20_000), [], {}, -1]) {
          yield { ...example, [key]: { ...value, [inner]: bad } };
        }
      }
    }
    if (Array.isArray(value) && isPlainObject(value[0])) {
      for (const inner of Object.keys(value[0])) {
        for (const bad of [null, '', [], {}]) yield { ...example, [key]: [{ ...value[0], [inner]: bad }] };
      }
    }
  }
}

for (const kind of ['sqlite', 'postgres'] as const)
  describe(`bad input on every operation (${kind})`, () => {
    let server: PostgresServer | undefined;
    let app: App;
    let deps: HeraldDeps;
    let admin: string;
    let recipient: string;

    before(async () => {
      if (kind === 'postgres') server = await sharedPostgres();
      const database = server ? { DATABASE_URL: await server.createDatabase('herald_bad_input') } : {};
      deps = await createDeps(testConfig({ HERALD_ROLES: 'auth,api,worker,gateway', ...database }));
      app = await buildApi(deps);
      await app.ready();
      admin = `Bearer ${await tokenFor(deps)}`;
      const put = await app.inject({
        method: 'PUT',
        url: '/recipients/ada',
        headers: { authorization: admin },
        payload: { email: 'ada@example.com' },
      });
      assert.ok(put.statusCode < 300, put.body);
      const minted = await app.inject({
        method: 'POST',
        url: '/recipients/ada/token',
        headers: { authorization: admin },
      });
      assert.equal(minted.statusCode, 200, minted.body);
      recipient = `Bearer ${(minted.json() as { access_token: string }).access_token}`;
    });
    after(async () => {
      await app?.close();
      await deps?.store.close();
      if (server) await stopSharedPostgres();
    });

    it('answers a 4xx problem, never a 500', async () => {
      const doc = (await openapiDocument({})) as { paths: Record<string, Record<string, Operation>> };
      const failures: string[] = [];
      let sent = 0;
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          const name = `${method.toUpperCase()} ${path}`;
          const streams = Object.values(operation.responses).some((r) => r.content?.['text/event-stream']);
          if (streams || LEFT_OUT.has(name)) continue;
          const parameters = operation.parameters ?? [];
          const pathValues = new Map<string, string>();
          for (const p of parameters.filter((p) => p.in === 'path')) {
            pathValues.set(p.name, encodeURIComponent(String(parameterExample(p) ?? 'x')));
          }
          const queryValues = new Map<string, string>();
          for (const p of parameters.filter((p) => p.in === 'query')) {
            const example = parameterExample(p);
            if (example !== undefined) queryValues.set(p.name, encodeURIComponent(String(example)));
          }
          const urlOf = (paths: Map<string, string>, query: Map<string, string>) => {
            const filled = path.replace(/\{([^}]+)\}/g, (_, key: string) => paths.get(key) ?? 'x');
            const search = [...query].map(([k, v]) => `${k}=${v}`).join('&');
            return search ? `${filled}?${search}` : filled;
          };
          const media = operation.requestBody?.content;
          const json = media?.['application/json'] ? 'application/json' : Object.keys(media ?? {})[0];
          const [example] = json && media?.[json] ? examplesOf(media[json]) : [];
          const authorization = path.startsWith('/inbox') ? recipient : admin;

          /** One request: the body as JSON of the operation's type, or `raw` as given (none: no body). */
          const send = async (
            url: string,
            body: unknown,
            what: string,
            raw?: { type?: string; payload?: string },
          ) => {
            sent += 1;
            const type = raw ? raw.type : json;
            const payload = raw ? raw.payload : json ? JSON.stringify(body) : undefined;
            const response = await app.inject({
              method: method.toUpperCase() as 'GET',
              url,
              headers: { authorization, ...(type ? { 'content-type': type } : {}) },
              ...(payload === undefined ? {} : { payload }),
            });
            const answered = String(response.headers['content-type'] ?? '');
            if (response.statusCode >= 500)
              failures.push(`${name} ${what}: ${response.statusCode} ${response.body}`);
            else if (
              response.statusCode >= 400 &&
              path !== OAUTH_ERRORS &&
              !answered.startsWith('application/problem+json')
            )
              failures.push(`${name} ${what}: ${response.statusCode} as ${answered}`);
          };

          if (json) {
            const url = urlOf(pathValues, queryValues);
            for (const raw of BAD_RAW) await send(url, undefined, `raw ${JSON.stringify(raw)}`, raw);
            let i = 0;
            for (const body of mutatedBodies(example)) {
              await send(
                urlOf(pathValues, queryValues),
                body,
                `body #${i++}: ${JSON.stringify(body).slice(0, 120)}`,
              );
            }
          }
          for (const key of pathValues.keys()) {
            for (const bad of BAD_PATH) {
              await send(
                urlOf(new Map([...pathValues, [key, bad]]), queryValues),
                example,
                `path ${key}=${bad.slice(0, 20)}`,
              );
            }
          }
          for (const p of parameters.filter((p) => p.in === 'query')) {
            for (const bad of [...BAD_QUERY, `1&${p.name}=2`, `1&${p.name}[a]=1`]) {
              await send(
                urlOf(pathValues, new Map([...queryValues, [p.name, bad]])),
                example,
                `query ${p.name}=${bad.slice(0, 20)}`,
              );
            }
          }
        }
      }
      assert.ok(sent > 1000, `${sent} requests sent`);
      assert.deepEqual(failures, []);
    });
  });
