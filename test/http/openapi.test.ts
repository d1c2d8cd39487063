// The OpenAPI document as a product: redocly's recommended rules find no error in it, and every
// response a real Herald gives (every operation, its success and its errors) matches the schema
// the document gives for that status and content type.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { App } from '../../src/http/types.ts';
import { buildApi, closeDeps, createDeps, type HeraldDeps } from '../../src/main.ts';
import { authHeader, createUser, loginAs } from '../helpers/auth.ts';
import { tempDir, testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  MAILGUN_KEY,
  PUBLIC_URL,
  signMailgun,
  signSendgrid,
  signTwilio,
  TWILIO_TOKEN,
} from '../webhooks/harness.ts';

interface Recorded {
  method: string;
  route: string;
  status: number;
  type: string;
  body: string;
}

type Document = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
};

/**
 * Operations whose success cannot be reached here; their error answers are still checked.
 * The OpenID Connect callback needs an identity provider (test/auth/oidc.test.ts has one).
 */
const NO_SUCCESS_HERE = new Set([
  'post /auth/oidc/callback',
  // Written to the socket itself (reply.hijack: no onSend records it); its 200 is checked in exercise.
  'get /inbox/stream',
]);
/** Public operations without input, which answer an error only when the process is failing. */
const NO_ERROR_HERE = new Set([
  'get /health',
  'get /ready',
  'get /.well-known/jwks.json',
  'get /auth/oidc/config',
  'get /auth/setup',
]);

const openapiPath = (route: string) => route.replace(/:([A-Za-z]+)/g, '{$1}');
const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
const baseType = (type: string) => type.split(';')[0]?.trim() ?? '';

describe('the OpenAPI document', () => {
  let deps: HeraldDeps;
  let app: App;
  let doc: Document;
  let stopWorker: () => Promise<void>;
  const recorded: Recorded[] = [];
  const sendgrid = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  before(async () => {
    deps = await createDeps(
      testConfig({
        HERALD_ROLES: 'auth,api,worker',
        HERALD_PUBLIC_URL: PUBLIC_URL,
        // A notification to fail-permanent@ fails, so that retry has something to redrive.
        HERALD_SANDBOX_FAILURES: 'true',
        // A first render in a cold thread on a busy CI machine can pass the 100 ms default, which
        // fails a notification for good; this test is about the document, not that limit.
        HERALD_RENDER_TIMEOUT_MS: '5000',
        TWILIO_ACCOUNT_SID: 'AC0123456789abcdef0123456789abcdef',
        TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
        TWILIO_FROM: '+15550000000',
        SENDGRID_WEBHOOK_PUBLIC_KEY: sendgrid.publicKey
          .export({ format: 'der', type: 'spki' })
          .toString('base64'),
        MAILGUN_WEBHOOK_SIGNING_KEY: MAILGUN_KEY,
      }),
    );
    app = await buildApi(deps);
    // Every answer, as sent: the route it matched, its status, content type and body.
    app.addHook('onSend', async (request, reply, payload) => {
      const route = request.routeOptions.url;
      if (route && route !== '/docs/json' && !route.startsWith('/docs')) {
        recorded.push({
          method: request.method.toLowerCase(),
          route,
          status: reply.statusCode,
          type: String(reply.getHeader('content-type') ?? ''),
          // A 204 or 304 carries no body on the wire, whatever the handler passed (Fastify drops it).
          body: [204, 304].includes(reply.statusCode) || payload === null ? '' : String(payload),
        });
      }
      return payload;
    });
    await app.ready();
    await deps.worker.start();
    stopWorker = () => deps.worker.stop();
    doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
  });

  after(async () => {
    await stopWorker();
    await app.close();
    await closeDeps(deps);
  });

  it('passes redocly lint with the recommended rules and no error', () => {
    const file = join(tempDir('herald-openapi-'), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const lint = spawnSync(
      join('node_modules', '.bin', 'redocly'),
      ['lint', file, '--extends=recommended', '--format=json'],
      { encoding: 'utf8' },
    );
    const report = JSON.parse(lint.stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; message: string; severity: string }>;
    };
    const errors = report.problems.filter((p) => p.severity === 'error');
    assert.deepEqual(errors, []);
    assert.equal(report.totals.errors, 0);
    assert.equal(lint.status, 0, lint.stderr);
  });

  it('names servers from HERALD_PUBLIC_URL and both security schemes', () => {
    const full = doc as unknown as {
      servers: Array<{ url: string }>;
      components: { securitySchemes: Record<string, { type: string }> };
    };
    assert.deepEqual(full.servers, [{ url: PUBLIC_URL }]);
    assert.equal(full.components.securitySchemes.bearer?.type, 'http');
    assert.equal(full.components.securitySchemes.clientCredentials?.type, 'oauth2');
  });

  it('describes every real response of every operation', async () => {
    await exercise(app, deps, sendgrid.privateKey);

    const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: 'doc' });
    const problems: string[] = [];
    for (const r of recorded) {
      const path = openapiPath(r.route);
      const responses = doc.paths[path]?.[r.method]?.responses;
      if (!responses) {
        problems.push(`${r.method} ${path}: not in the document`);
        continue;
      }
      const key = [String(r.status), `${String(r.status)[0]}XX`, 'default'].find((k) => responses[k]);
      if (!key) {
        problems.push(`${r.method} ${path} answered ${r.status}, which is not documented`);
        continue;
      }
      const content = responses[key]?.content;
      if (!content) {
        if (r.body !== '') problems.push(`${r.method} ${path} ${r.status}: a body where none is documented`);
        continue;
      }
      const media = Object.keys(content).find((m) => baseType(m) === baseType(r.type));
      if (!media) {
        problems.push(
          `${r.method} ${path} ${r.status}: ${r.type} is not documented (${Object.keys(content)})`,
        );
        continue;
      }
      const ref = `doc#/${pointer('paths', path, r.method, 'responses', key, 'content', media, 'schema')}`;
      const validate = ajv.compile({ $ref: ref });
      const value = baseType(r.type).endsWith('json') ? JSON.parse(r.body) : r.body;
      if (!validate(value)) {
        problems.push(
          `${r.method} ${path} ${r.status}: ${ajv.errorsText(validate.errors)} in ${r.body.slice(0, 300)}`,
        );
      }
    }
    assert.deepEqual(problems, []);

    // Every documented operation answered at least once with a success, and once with an error.
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) {
        const answers = recorded.filter((r) => r.method === method && openapiPath(r.route) === path);
        const name = `${method} ${path}`;
        if (!NO_SUCCESS_HERE.has(name) && !answers.some((r) => r.status < 300))
          missing.push(`${name}: no success`);
        if (!NO_ERROR_HERE.has(name) && !answers.some((r) => r.status >= 400))
          missing.push(`${name}: no error`);
      }
    }
    assert.deepEqual(missing, []);
  });
});

/** Calls every operation: its success, and at least one of its errors. */
async function exercise(
  app: App,
  deps: HeraldDeps,
  sendgridKey: ReturnType<typeof generateKeyPairSync>['privateKey'],
) {
  const admin = await authHeader(deps);
  const call = async (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: { ...admin, ...headers },
    });
  const anonymous = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers,
    });
  const expect = async (
    response: Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>,
    status: number,
  ) => {
    const r = await response;
    assert.equal(r.statusCode, status, r.body);
    return String(r.headers['content-type'] ?? '').includes('json') ? JSON.parse(r.body) : r.body;
  };

  // ops
  await expect(anonymous('GET', '/health'), 200);
  await expect(anonymous('GET', '/ready'), 200);
  await expect(call('GET', '/metrics'), 200);
  await expect(anonymous('GET', '/metrics'), 401);
  await expect(call('GET', '/metrics/cluster'), 200);
  await expect(anonymous('GET', '/metrics/cluster'), 401);

  // auth
  await createUser(deps, {
    email: 'doc@example.com',
    password: 'correct horse battery staple',
    role: 'admin',
  });
  const pair = await loginAs(app, 'doc@example.com');
  await expect(
    anonymous('POST', '/auth/login', { email: 'doc@example.com', password: 'wrong password!' }),
    401,
  );
  await expect(anonymous('POST', '/auth/refresh', { refresh_token: pair.refresh_token }), 200);
  await expect(anonymous('POST', '/auth/refresh', { refresh_token: 'nope' }), 401);
  await expect(anonymous('GET', '/.well-known/jwks.json'), 200);
  await expect(anonymous('GET', '/auth/setup'), 200);
  await anonymous('GET', '/auth/oidc/config');
  await anonymous('POST', '/auth/oidc/callback', { code: 'x', state: 'y' });
  const user = { authorization: `Bearer ${pair.access_token}` };
  await expect(anonymous('GET', '/auth/me', undefined, user), 200);
  await expect(anonymous('GET', '/auth/me'), 401);
  const passwords = {
    currentPassword: 'correct horse battery staple',
    newPassword: 'a new horse battery staple',
  };
  await expect(
    anonymous('POST', '/auth/password', { ...passwords, currentPassword: 'not it at all' }, user),
    401,
  );
  await expect(anonymous('POST', '/auth/password', passwords, user), 204);
  const again = await loginAs(app, 'doc@example.com', passwords.newPassword);
  await expect(
    anonymous('POST', '/auth/logout-all', undefined, { authorization: `Bearer ${again.access_token}` }),
    204,
  );
  await expect(anonymous('POST', '/auth/logout-all'), 401);

  // admin: users and clients
  const created = await expect(
    call('POST', '/admin/users', {
      email: 'u@example.com',
      password: 'long enough password',
      role: 'viewer',
    }),
    201,
  );
  await expect(
    call('POST', '/admin/users', {
      email: 'u@example.com',
      password: 'long enough password',
      role: 'viewer',
    }),
    409,
  );
  await expect(call('GET', '/admin/users'), 200);
  await expect(call('GET', '/admin/users?tenant=%00'), 400);
  await expect(call('POST', `/admin/users/${created.id}/revoke-sessions`), 204);
  await expect(call('POST', '/admin/users/unknown/revoke-sessions'), 404);
  await expect(call('POST', `/admin/users/${created.id}/disable`), 200);
  await expect(call('POST', '/admin/users/unknown/disable'), 404);
  const client = await expect(
    call('POST', '/admin/clients', { name: 'svc', scopes: ['notifications:send'] }),
    201,
  );
  await expect(call('POST', '/admin/clients', { name: 'svc' }), 400);
  await expect(call('GET', '/admin/clients'), 200);
  await expect(call('GET', '/admin/clients?extra=1'), 400);
  const rotated = await expect(call('POST', `/admin/clients/${client.client_id}/rotate`), 200);
  await expect(call('POST', '/admin/clients/unknown/rotate'), 404);
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const grant = `grant_type=client_credentials&client_id=${client.client_id}&client_secret=${rotated.client_secret}`;
  await expect(anonymous('POST', '/auth/token', grant, form), 200);
  await expect(
    anonymous('POST', '/auth/token', 'grant_type=client_credentials&client_id=x&client_secret=y', form),
    401,
  );
  await expect(call('POST', `/admin/clients/${client.client_id}/disable`), 200);
  await expect(call('POST', '/admin/clients/unknown/disable'), 404);

  // templates
  const template = {
    key: 'doc-welcome',
    channel: 'email',
    subject: 'Hi {{ name }}',
    text: 'Hello {{ name }}',
  };
  await expect(call('POST', '/templates', template), 201);
  await expect(call('POST', '/templates', template), 409);
  await expect(call('GET', '/templates'), 200);
  await expect(call('GET', '/templates?limit=0'), 400);
  await expect(call('GET', '/templates/doc-welcome'), 200);
  await expect(call('GET', '/templates/nope'), 404);
  await expect(
    call('PUT', '/templates/doc-welcome', { subject: 'Hi {{ name }}', text: 'Hello again {{ name }}' }),
    200,
  );
  await expect(call('PUT', '/templates/nope', { text: 'x' }), 404);
  const french = { subject: 'Bonjour {{ name }}', text: 'Bonjour {{ name }}' };
  await expect(call('PUT', '/templates/doc-welcome/locales/fr-ca', french), 200);
  await expect(call('PUT', '/templates/doc-welcome/locales/not_a_tag', french), 400);
  await expect(call('DELETE', '/templates/doc-welcome/locales/fr-CA'), 204);
  await expect(call('DELETE', '/templates/doc-welcome/locales/fr-CA'), 404);
  await expect(call('POST', '/templates/doc-welcome/preview', { variables: { name: 'Ada' } }), 200);
  await expect(call('POST', '/templates/doc-welcome/preview', { variables: 'no' }), 400);

  // recipients
  const profile = {
    email: 'ada@example.com',
    push: [{ deviceToken: 'a1b2c3d4e5f6a7b8c9d0', platform: 'apns' }],
    locale: 'fr-CA',
    data: { plan: 'pro' },
  };
  await expect(call('PUT', '/recipients/doc-ada', profile), 201);
  await expect(call('PUT', '/recipients/doc-ada', { ...profile, name: 'Ada' }), 200);
  await expect(call('PUT', '/recipients/doc-ada', { email: 'nope' }), 400);
  await expect(call('GET', '/recipients/doc-ada'), 200);
  await expect(call('GET', '/recipients/nobody'), 404);
  await expect(call('GET', '/recipients?limit=1'), 200);
  await expect(call('GET', '/recipients?limit=0'), 400);
  const mergePatch = { 'content-type': 'application/merge-patch+json' };
  await expect(call('PATCH', '/recipients/doc-ada', JSON.stringify({ locale: null }), mergePatch), 200);
  await expect(call('PATCH', '/recipients/doc-ada', JSON.stringify([1]), mergePatch), 400);
  await expect(
    call('POST', '/recipients/batch', { recipients: [{ recipientId: 'doc-bo' }, { recipientId: 'bad id' }] }),
    207,
  );
  await expect(call('POST', '/recipients/batch', { recipients: [] }), 400);
  await expect(call('DELETE', '/recipients/doc-bo'), 204);
  await expect(call('DELETE', '/recipients/doc-bo'), 404);

  // notifications
  const email = (to: string, extra: object = {}) => ({
    channel: 'email',
    priority: 'NORMAL',
    recipient: { email: to },
    template: 'doc-welcome',
    variables: { name: 'Ada' },
    metadata: { order: 42 },
    ...extra,
  });
  const key = { 'idempotency-key': 'doc-1' };
  const accepted = await expect(call('POST', '/notifications', email('ada@example.com'), key), 201);
  await expect(call('POST', '/notifications', email('ada@example.com'), key), 200);
  await expect(call('POST', '/notifications', { channel: 'fax' }), 400);
  await expect(
    call('POST', '/notifications/batch', { notifications: [email('b@example.com'), { channel: 'fax' }] }),
    207,
  );
  await expect(call('POST', '/notifications/batch', {}), 400);
  const detail = await call('GET', `/notifications/${accepted.notificationId}`);
  assert.equal(detail.statusCode, 200);
  await expect(
    call('GET', `/notifications/${accepted.notificationId}`, undefined, {
      'if-none-match': String(detail.headers.etag),
    }),
    304,
  );
  await expect(call('GET', '/notifications/unknown'), 404);
  await expect(call('GET', `/notifications/${accepted.notificationId}/message`), 200);
  await expect(call('GET', '/notifications/unknown/message'), 404);
  await expect(call('GET', '/notifications?limit=2'), 200);
  await expect(call('GET', '/notifications?status=LOST'), 400);
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const scheduled = await expect(
    call('POST', '/notifications', email('c@example.com', { scheduledAt: later })),
    201,
  );
  await expect(call('POST', `/notifications/${scheduled.notificationId}/cancel`), 200);
  await expect(call('POST', `/notifications/${scheduled.notificationId}/cancel`), 409);
  const failing = await expect(call('POST', '/notifications', email('fail-permanent@example.com')), 201);
  const seen = new Map<string, unknown>();
  const statusOf = async (id: string) => {
    const found = await expect(call('GET', `/notifications/${id}`), 200);
    seen.set(id, found.events);
    return found.status;
  };
  const until = (id: string, status: string) =>
    eventually(async () => (await statusOf(id)) === status, 20_000, status).catch((error: Error) => {
      throw new Error(`${error.message}; events: ${JSON.stringify(seen.get(id))}`);
    });
  await until(failing.notificationId, 'FAILED');
  await expect(call('POST', `/notifications/${failing.notificationId}/retry`), 200);
  await expect(call('POST', '/notifications/unknown/retry'), 404);
  await until(accepted.notificationId, 'DELIVERED');
  await expect(call('DELETE', '/templates/doc-welcome'), 204);
  await expect(call('DELETE', '/templates/doc-welcome'), 404);
  await expect(call('POST', '/templates/doc-welcome/preview', {}), 404);

  // the live stream: its headers and first bytes (the stream itself never ends)
  const stream = await app.inject({
    method: 'GET',
    url: '/notifications/stream',
    headers: admin,
    payloadAsStream: true,
  });
  assert.equal(stream.statusCode, 200);
  assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
  stream.stream().destroy();
  await expect(call('GET', '/notifications/stream', undefined, { 'last-event-id': 'x' }), 400);

  // callbacks (to a status no notification here reaches, so nothing is sent)
  const hook = await expect(
    call('POST', '/callbacks', { url: 'https://hooks.example.com/herald', events: ['EXPIRED'] }),
    201,
  );
  await expect(call('POST', '/callbacks', { url: 'http://hooks.example.com/herald' }), 400);
  await expect(call('GET', '/callbacks'), 200);
  await expect(call('POST', `/callbacks/${hook.id}/rotate-secret`), 200);
  await expect(call('POST', '/callbacks/unknown/rotate-secret'), 404);
  await expect(call('GET', `/callbacks/${hook.id}/deliveries`), 200);
  await expect(call('GET', '/callbacks/unknown/deliveries'), 404);
  await expect(call('DELETE', `/callbacks/${hook.id}`), 204);
  await expect(call('DELETE', `/callbacks/${hook.id}`), 404);
  await expect(anonymous('GET', '/callbacks'), 401);

  // suppressions and one-click unsubscribe
  await expect(call('POST', '/suppressions', { channel: 'sms', recipient: '+15550100999' }), 201);
  await expect(call('POST', '/suppressions', { channel: 'sms', recipient: 'ada@example.com' }), 400);
  await expect(call('GET', '/suppressions?channel=sms'), 200);
  await expect(call('GET', '/suppressions?recipient=%2B15550100999'), 400);
  await expect(call('DELETE', `/suppressions/sms/${encodeURIComponent('+15550100999')}`), 204);
  await expect(call('DELETE', `/suppressions/sms/${encodeURIComponent('+15550100999')}`), 404);
  const token = await deps.unsubscribe.make({
    tenant: 'default',
    channel: 'email',
    recipient: 'ada@example.com',
  });
  const oneClick = { 'content-type': 'application/x-www-form-urlencoded' };
  await expect(anonymous('GET', `/unsubscribe/${token}`), 200);
  await expect(
    anonymous('GET', `/unsubscribe/${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`),
    404,
  );
  await expect(anonymous('POST', `/unsubscribe/${token}`, 'List-Unsubscribe=One-Click', oneClick), 200);
  await expect(anonymous('POST', `/unsubscribe/${token}`, 'List-Unsubscribe=No', oneClick), 400);

  // categories, preferences and the hosted preferences page
  const categoryBody = { description: 'News', defaultChannels: { sms: false } };
  await expect(call('PUT', '/categories/doc-news', categoryBody), 201);
  await expect(call('PUT', '/categories/doc-news', { required: false }), 200);
  await expect(call('PUT', '/categories/doc%20news', {}), 400);
  await expect(call('GET', '/categories'), 200);
  await expect(call('GET', '/categories?limit=0'), 400);
  await deps.store.recipients.put('default', [{ id: 'doc-user', profile: {} }], Date.now());
  const preferences = '/recipients/doc-user/preferences';
  await expect(call('GET', preferences), 200);
  await expect(call('GET', '/recipients/nobody/preferences'), 404);
  await expect(call('PUT', preferences, { channels: { sms: false } }), 200);
  await expect(call('PUT', preferences, { channels: { sms: 'no' } }), 400);
  await expect(call('PATCH', preferences, { categories: { 'doc-news': { email: false } } }, mergePatch), 200);
  await expect(call('PATCH', preferences, [], mergePatch), 400);
  const preferencesToken = await deps.preferenceTokens.make({ tenant: 'default', id: 'doc-user' });
  await expect(anonymous('GET', `/preferences/${preferencesToken}`), 200);
  await expect(anonymous('GET', '/preferences/x.y'), 404);
  await expect(anonymous('POST', `/preferences/${preferencesToken}`, 'channels.email=on', oneClick), 200);
  await expect(anonymous('POST', `/preferences/${preferencesToken}`, 'evil=1', oneClick), 400);
  await expect(call('DELETE', '/categories/doc-news'), 204);
  await expect(call('DELETE', '/categories/doc-news'), 404);
  // topics and broadcasts (the recipient through the store: its routes are another area's)
  await deps.store.recipients.put(
    'default',
    [{ id: 'doc-reader', profile: { email: 'r@example.com' } }],
    Date.now(),
  );
  await expect(call('PUT', '/topics/doc-news', { name: 'News' }), 201);
  await expect(call('PUT', '/topics/doc news', {}), 400);
  await expect(call('GET', '/topics'), 200);
  await expect(call('GET', '/topics?cursor=forged'), 400);
  await expect(call('GET', '/topics/doc-news'), 200);
  await expect(call('GET', '/topics/nope'), 404);
  await expect(call('POST', '/topics/doc-news/subscribers', { recipients: ['doc-reader', 'ghost'] }), 200);
  await expect(call('POST', '/topics/nope/subscribers', { recipients: ['doc-reader'] }), 404);
  await expect(call('GET', '/topics/doc-news/subscribers'), 200);
  await expect(call('GET', '/topics/nope/subscribers'), 404);
  const broadcast = { topic: 'doc-news', channel: 'email', content: { subject: 'News', text: 'Hi' } };
  const made = await expect(call('POST', '/broadcasts', broadcast), 201);
  await expect(call('POST', '/broadcasts', { ...broadcast, topic: 'nope' }), 404);
  await expect(call('GET', `/broadcasts/${made.broadcastId}`), 200);
  await expect(call('GET', '/broadcasts/nope'), 404);
  await expect(call('POST', `/broadcasts/${made.broadcastId}/cancel`), 200);
  await expect(call('POST', '/broadcasts/nope/cancel'), 404);
  // workflow runs (the workflow through the store: its routes are another area's)
  await deps.store.workflows.put(
    'default',
    'doc-run-flow',
    { name: null, category: null, steps: [{ type: 'delay', for: 'PT1H' }] },
    Date.now(),
  );
  const triggered = await expect(
    call('POST', '/workflows/doc-run-flow/trigger', { recipients: ['doc-reader'] }),
    201,
  );
  await expect(call('POST', '/workflows/nope/trigger', { recipients: ['doc-reader'] }), 404);
  const runId = triggered.runs[0].runId as string;
  await expect(call('GET', `/workflow-runs/${runId}`), 200);
  await expect(call('GET', '/workflow-runs/nope'), 404);
  await expect(call('GET', '/workflow-runs?workflow=doc-run-flow'), 200);
  await expect(call('GET', '/workflow-runs?cursor=forged'), 400);
  await expect(call('POST', `/workflow-runs/${runId}/cancel`), 200);
  await expect(call('POST', `/workflow-runs/${runId}/cancel`), 409);
  await expect(call('DELETE', '/topics/doc-news/subscribers/doc-reader'), 204);
  await expect(call('DELETE', '/topics/doc-news/subscribers/doc-reader'), 404);
  await expect(call('DELETE', '/topics/doc-news'), 204);
  await expect(call('DELETE', '/topics/doc-news'), 404);

  // workflow definitions
  const workflow = { steps: [{ type: 'send', channel: 'email', content: { subject: 'Hi', text: 'x' } }] };
  await expect(call('PUT', '/workflows/doc-flow', workflow), 201);
  await expect(call('PUT', '/workflows/doc-flow', { ...workflow, name: 'Doc flow' }), 200);
  await expect(call('PUT', '/workflows/doc-flow', { steps: [{ type: 'delay', for: 'P1M' }] }), 400);
  await expect(call('GET', '/workflows'), 200);
  await expect(call('GET', '/workflows?cursor=forged'), 400);
  await expect(call('GET', '/workflows/doc-flow'), 200);
  await expect(call('GET', '/workflows/nope'), 404);
  await expect(call('DELETE', '/workflows/doc-flow'), 204);
  await expect(call('DELETE', '/workflows/doc-flow'), 404);

  // queues and the sandbox
  await expect(call('GET', '/admin/queues'), 200);
  await expect(anonymous('GET', '/admin/queues'), 401);
  await expect(call('POST', '/admin/queues/pause', { priority: 'LOW' }), 200);
  await expect(call('POST', '/admin/queues/pause', { priority: 'NONE' }), 400);
  await expect(call('POST', '/admin/queues/resume', { priority: 'LOW' }), 200);
  await expect(call('POST', '/admin/queues/resume', { channel: 'fax' }), 400);
  await expect(call('GET', '/admin/history?window=7d'), 200);
  await expect(call('GET', '/admin/history?window=1y'), 400);
  await expect(call('GET', '/admin/sandbox'), 200);
  await expect(call('GET', '/admin/sandbox?limit=-1'), 400);
  await expect(call('GET', '/admin/sandbox/channels'), 200);
  await expect(anonymous('GET', '/admin/sandbox/channels'), 401);

  // per-tenant quotas (the operator's)
  const quota = { total: { ratePerSecond: 100, perDay: 1000 } };
  await expect(call('PUT', '/admin/tenants/doc-quota/quotas', quota), 200);
  await expect(call('PUT', '/admin/tenants/doc-quota/quotas', { total: { burst: 5 } }), 400);
  await expect(call('GET', '/admin/tenants/doc-quota/quotas'), 200);
  await expect(call('GET', '/admin/quotas'), 200);
  await expect(anonymous('GET', '/admin/quotas'), 401);
  await expect(call('DELETE', '/admin/tenants/doc-quota/quotas'), 204);
  await expect(call('DELETE', '/admin/tenants/doc-quota/quotas'), 404);
  await expect(call('GET', '/admin/tenants/doc-quota/quotas'), 404);

  // webhooks, signed as each provider signs
  const now = String(Math.floor(Date.now() / 1000));
  const twilio = { MessageSid: 'SMunknown', MessageStatus: 'delivered' };
  const twilioBody = new URLSearchParams(twilio).toString();
  await expect(
    anonymous('POST', '/webhooks/twilio', twilioBody, {
      ...form,
      'x-twilio-signature': signTwilio(`${PUBLIC_URL}/webhooks/twilio`, twilio),
    }),
    200,
  );
  await expect(anonymous('POST', '/webhooks/twilio', twilioBody, form), 401);
  const events = JSON.stringify([{ event: 'delivered', sg_message_id: 'unknown.1', timestamp: Number(now) }]);
  const json = { 'content-type': 'application/json' };
  await expect(
    anonymous('POST', '/webhooks/sendgrid', events, { ...json, ...signSendgrid(sendgridKey, events, now) }),
    200,
  );
  await expect(anonymous('POST', '/webhooks/sendgrid', events, json), 401);
  const mailgun = {
    signature: signMailgun(undefined, now),
    'event-data': { event: 'delivered', message: { headers: { 'message-id': 'unknown' } } },
  };
  await expect(anonymous('POST', '/webhooks/mailgun', mailgun, json), 200);
  await expect(
    anonymous(
      'POST',
      '/webhooks/mailgun',
      { ...mailgun, signature: signMailgun('t', now, 'wrong key') },
      json,
    ),
    401,
  );

  // the inbox, with a recipient token (docs/inbox-api.md)
  await expect(call('PUT', '/recipients/doc-inbox', {}), 201);
  await expect(call('POST', '/recipients/nobody/token'), 404);
  const minted = await expect(call('POST', '/recipients/doc-inbox/token'), 200);
  const recipient = { authorization: `Bearer ${minted.access_token}` };
  const message = await expect(
    call('POST', '/notifications', {
      channel: 'inapp',
      recipient: { id: 'doc-inbox' },
      content: { title: 'Hello', body: 'In the inbox' },
    }),
    201,
  );
  await until(message.notificationId, 'DELIVERED');
  const mine = (method: string, url: string, headers: Record<string, string> = {}) =>
    anonymous(method, url, undefined, { ...recipient, ...headers });
  await expect(mine('GET', '/inbox?limit=1'), 200);
  await expect(mine('GET', '/inbox?filter=read'), 400);
  await expect(mine('GET', '/inbox/counts'), 200);
  await expect(call('GET', '/inbox/counts'), 403);
  for (const action of ['seen', 'read', 'unread', 'archive', 'unarchive']) {
    await expect(mine('POST', `/inbox/${message.notificationId}/${action}`), 200);
    await expect(mine('POST', `/inbox/unknown/${action}`), 404);
  }
  for (const all of ['seen-all', 'read-all']) {
    await expect(mine('POST', `/inbox/${all}`), 200);
    await expect(anonymous('POST', `/inbox/${all}`), 401);
  }
  // The stream is written to the socket itself (no onSend to record): its error answer is recorded here.
  const inboxStream = await app.inject({
    method: 'GET',
    url: '/inbox/stream',
    headers: recipient,
    payloadAsStream: true,
  });
  assert.equal(inboxStream.statusCode, 200);
  assert.match(String(inboxStream.headers['content-type']), /^text\/event-stream/);
  inboxStream.stream().destroy();
  await expect(mine('GET', '/inbox/stream', { 'last-event-id': 'x' }), 400);
}
