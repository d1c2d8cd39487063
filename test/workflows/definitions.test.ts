// Workflow definitions over HTTP (docs/workflows.md): versions, every validation
// rule with the field it names, scopes and 404s. One Herald on SQLite for the file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_TENANT } from '../../src/auth/principal.ts';
import { notificationsApp } from '../notifications/fixtures.ts';

type T = Awaited<ReturnType<typeof notificationsApp>>;
interface FieldError {
  path: string;
  message: string;
}

const FOLLOW_UP = [
  { type: 'send', channel: 'inapp', template: 'comment' },
  { type: 'delay', for: 'PT10M' },
  { type: 'send', channel: 'email', template: 'comment-email', if: 'not_read' },
];

describe('workflow definitions API', () => {
  let t: T;
  before(async () => {
    t = await notificationsApp();
    const templates = [
      { key: 'comment', channel: 'inapp', title: 'New comment', body: '{{ text }}' },
      { key: 'comment-email', channel: 'email', subject: 'A comment', text: '{{ text }}' },
    ];
    for (const payload of templates) {
      const created = await call('POST', '/templates', payload);
      assert.equal(created.statusCode, 201, created.body);
    }
  });
  after(() => t.close());

  const call = (method: string, url: string, payload?: unknown, headers: Record<string, string> = t.admin) =>
    t.app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const errorsOf = (response: { json(): { errors: FieldError[] } }) => response.json().errors;

  it('saves versions (201, then 200), reads, lists by key and deletes, keeping old versions for runs', async () => {
    const created = await call('PUT', '/workflows/follow-up', {
      name: 'Comment follow-up',
      category: 'comments',
      steps: FOLLOW_UP,
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.location, '/workflows/follow-up');
    assert.deepEqual(created.json(), {
      key: 'follow-up',
      name: 'Comment follow-up',
      category: 'comments',
      version: 1,
      steps: FOLLOW_UP,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    t.clock.advance(60_000);
    const every = [
      { type: 'throttle', limit: 3, for: 'PT1H', key: 'projectId' },
      { type: 'digest', for: 'P1D', key: 'projectId' },
      { type: 'send', channel: 'sms', content: { text: '{{ digest.count }} comments' }, if: 'failed' },
      {
        type: 'send',
        channel: 'push',
        content: { title: 'Hi', body: 'x', data: { a: 1 } },
        if: 'not_delivered',
      },
      { type: 'send', channel: 'inapp', content: { title: 'T', body: 'B', url: '/c/{{ id }}' } },
      { type: 'delay', for: 'P2W' },
    ];
    const second = await call('PUT', '/workflows/follow-up', { steps: every });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(
      [second.json().version, second.json().name, second.json().category, second.json().createdAt],
      [2, null, null, '2026-01-01T00:00:00.000Z'],
    );
    assert.equal(second.json().updatedAt, '2026-01-01T00:01:00.000Z');
    assert.deepEqual(second.json().steps, every);
    const read = await call('GET', '/workflows/follow-up', undefined, t.viewer);
    assert.deepEqual(read.json(), second.json());

    await call('PUT', '/workflows/a-first', { steps: [{ type: 'delay', for: 'PT1S' }] });
    const page = await call('GET', '/workflows?limit=1', undefined, t.sender);
    assert.deepEqual(
      page.json().items.map((w: { key: string }) => w.key),
      ['a-first'],
    );
    const next = await call('GET', `/workflows?limit=1&cursor=${page.json().nextCursor}`);
    assert.deepEqual(
      [
        next.json().items.map((w: { key: string; version: number }) => [w.key, w.version]),
        next.json().nextCursor,
      ],
      [[['follow-up', 2]], null],
    );
    const foreign = Buffer.from('t:follow-up').toString('base64url');
    assert.deepEqual(
      errorsOf(await call('GET', `/workflows?cursor=${foreign}`)).map((e) => e.path),
      ['querystring/cursor'],
    );

    assert.equal((await call('DELETE', '/workflows/follow-up')).statusCode, 204);
    for (const method of ['GET', 'DELETE']) {
      const gone = await call(method, '/workflows/follow-up');
      assert.equal(gone.statusCode, 404, method);
      assert.match(String(gone.headers['content-type']), /^application\/problem\+json/);
    }
    const kept = await t.deps.store.workflows.get(DEFAULT_TENANT, 'follow-up', 1);
    assert.deepEqual(kept?.steps, FOLLOW_UP, 'a run keeps the version it started with after a delete');
    const again = await call('PUT', '/workflows/follow-up', { steps: FOLLOW_UP });
    assert.deepEqual([again.statusCode, again.json().version], [201, 3], 'numbers go on after a delete');
  });

  it('keeps to the scopes of templates and to the tenant', async () => {
    const body = { steps: [{ type: 'delay', for: 'PT1M' }] };
    assert.equal((await call('PUT', '/workflows/scoped', body, t.viewer)).statusCode, 403);
    assert.equal((await call('PUT', '/workflows/scoped', body, t.sender)).statusCode, 403);
    assert.equal((await call('PUT', '/workflows/scoped', body)).statusCode, 201);
    assert.equal((await call('DELETE', '/workflows/scoped', undefined, t.viewer)).statusCode, 403);
    assert.equal((await call('GET', '/workflows/scoped', undefined, t.viewer)).statusCode, 200);
    assert.equal((await call('GET', '/workflows/scoped', undefined, t.other)).statusCode, 404);
    assert.equal((await call('GET', '/workflows', undefined, t.other)).json().items.length, 0);
    assert.equal((await call('GET', '/workflows/scoped', undefined, {})).statusCode, 401);
    const badKey = await call('PUT', '/workflows/has%20space', body);
    assert.equal(badKey.statusCode, 400, badKey.body);
    assert.deepEqual(errorsOf(badKey), [
      {
        path: 'params/key',
        message:
          'must be a workflow key: 1 to 100 letters, digits, dots, dashes or underscores, starting with a letter or digit',
      },
    ]);
    assert.equal((await call('GET', '/workflows/has%20space')).statusCode, 400);
  });

  it('refuses each broken rule with 400 naming the step and field, and stores nothing', async () => {
    const send = { type: 'send', channel: 'sms', content: { text: 'hi' } };
    const cases: Array<[string, unknown, string]> = [
      ['not an object', [], 'body'],
      ['no steps', {}, 'body/steps'],
      ['an empty list', { steps: [] }, 'body/steps'],
      ['21 steps', { steps: Array.from({ length: 21 }, () => send) }, 'body/steps'],
      ['an unknown field', { steps: [send], owner: 'me' }, 'body/owner'],
      ['a bad category', { category: 'Not A Name', steps: [send] }, 'body/category'],
      ['an empty name', { name: '', steps: [send] }, 'body/name'],
      ['a step not an object', { steps: [send, 'delay'] }, 'body/steps/1'],
      ['a step without type', { steps: [{ for: 'PT1M' }] }, 'body/steps/0/type'],
      ['an unknown kind', { steps: [send, { type: 'wait', for: 'PT1M' }] }, 'body/steps/1/type'],
      ['a delay without for', { steps: [{ type: 'delay' }] }, 'body/steps/0/for'],
      ['a duration not a string', { steps: [{ type: 'delay', for: 600 }] }, 'body/steps/0/for'],
      ['a duration in months', { steps: [{ type: 'delay', for: 'P1M' }] }, 'body/steps/0/for'],
      ['a duration of 0', { steps: [{ type: 'delay', for: 'PT0S' }] }, 'body/steps/0/for'],
      ['a duration over 30 days', { steps: [send, { type: 'delay', for: 'P31D' }] }, 'body/steps/1/for'],
      ['a digest over 30 days', { steps: [{ type: 'digest', for: 'PT721H' }] }, 'body/steps/0/for'],
      [
        'a digest key not a name',
        { steps: [{ type: 'digest', for: 'PT1H', key: 'project id' }] },
        'body/steps/0/key',
      ],
      [
        'a throttle limit of 0',
        { steps: [{ type: 'throttle', limit: 0, for: 'PT1H' }] },
        'body/steps/0/limit',
      ],
      [
        'a fractional limit',
        { steps: [{ type: 'throttle', limit: 1.5, for: 'PT1H' }] },
        'body/steps/0/limit',
      ],
      ['a throttle without limit', { steps: [{ type: 'throttle', for: 'PT1H' }] }, 'body/steps/0/limit'],
      ['if on a delay', { steps: [{ type: 'delay', for: 'PT1M', if: 'failed' }] }, 'body/steps/0/if'],
      ['an unknown if', { steps: [{ ...send, if: 'unread' }] }, 'body/steps/0/if'],
      ['an unknown channel', { steps: [{ ...send, channel: 'fax' }] }, 'body/steps/0/channel'],
      ['a send without channel', { steps: [{ type: 'send', template: 'comment' }] }, 'body/steps/0/channel'],
      ['a send with neither', { steps: [{ type: 'send', channel: 'sms' }] }, 'body/steps/0/template'],
      ['a send with both', { steps: [{ ...send, template: 'comment' }] }, 'body/steps/0/content'],
      ['a notification field in a send', { steps: [{ ...send, priority: 'HIGH' }] }, 'body/steps/0/priority'],
      [
        'email content without subject',
        { steps: [{ ...send, channel: 'email' }] },
        'body/steps/0/content/subject',
      ],
      [
        'sms content too long',
        { steps: [{ ...send, content: { text: 'x'.repeat(1601) } }] },
        'body/steps/0/content/text',
      ],
      [
        'an inapp link that is not one',
        {
          steps: [
            { type: 'send', channel: 'inapp', content: { title: 'a', body: 'b', url: 'javascript:x' } },
          ],
        },
        'body/steps/0/content/url',
      ],
      [
        'broken Liquid',
        { steps: [send, { ...send, content: { text: 'Hi {{ name ' } }] },
        'body/steps/1/content/text',
      ],
      [
        'an unknown template',
        { steps: [{ type: 'send', channel: 'inapp', template: 'nope' }] },
        'body/steps/0/template',
      ],
      [
        'a template of another channel',
        { steps: [send, { type: 'send', channel: 'email', template: 'comment' }] },
        'body/steps/1/template',
      ],
      [
        'a template key not a key',
        { steps: [{ type: 'send', channel: 'sms', template: 'a b' }] },
        'body/steps/0/template',
      ],
    ];
    for (const [rule, body, path] of cases) {
      const response = await call('PUT', '/workflows/refused', body);
      assert.equal(response.statusCode, 400, `${rule}: ${response.body}`);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/, rule);
      assert.equal(response.json().code, 'VALIDATION_FAILED', rule);
      assert.ok(
        errorsOf(response).some((e) => e.path === path),
        `${rule}: wants ${path}, got ${response.body}`,
      );
    }
    assert.equal((await call('GET', '/workflows/refused')).statusCode, 404, 'nothing was stored');
  });

  it('lists every error of a body at once, in the wording of other 400s', async () => {
    const response = await call('PUT', '/workflows/many', {
      steps: [
        { type: 'delay', for: 'soon' },
        { type: 'throttle', limit: 0, for: 'PT1H', key: '1x' },
        { type: 'send', channel: 'email', template: 'missing' },
        { type: 'send', channel: 'sms', content: { text: '{% if %}' } },
        { type: 'digest', for: 'PT1H', if: 'not_read' },
      ],
    });
    assert.equal(response.statusCode, 400);
    assert.deepEqual(errorsOf(response), [
      { path: 'body/steps/0/for', message: errorsOf(response)[0]?.message },
      { path: 'body/steps/1/limit', message: 'must be >= 1' },
      { path: 'body/steps/1/key', message: errorsOf(response)[2]?.message },
      { path: 'body/steps/4/if', message: "must NOT have additional property 'if'" },
      { path: 'body/steps/2/template', message: 'must name an email template of your tenant' },
      { path: 'body/steps/3/content/text', message: errorsOf(response)[5]?.message },
    ]);
    assert.match(errorsOf(response)[0]?.message ?? '', /^must be an ISO 8601 duration/);
    assert.match(errorsOf(response)[2]?.message ?? '', /^must be a variable name/);
    assert.match(errorsOf(response)[5]?.message ?? '', /^must be valid Liquid/);
  });
});
