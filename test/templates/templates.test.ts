import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRenderer } from '../../src/templates/render.ts';
import { RenderError } from '../../src/templates/render-error.ts';
import { notificationsApp, send } from '../notifications/fixtures.ts';

type T = Awaited<ReturnType<typeof notificationsApp>>;

describe('templates API', () => {
  let t: T;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  const call = (method: string, url: string, payload?: object, headers: Record<string, string> = t.admin) =>
    t.app.inject({ method: method as 'GET', url, headers, ...(payload ? { payload } : {}) });

  const welcome = {
    key: 'welcome',
    channel: 'email',
    subject: 'Welcome {{ name }} & friends',
    text: 'Hi {{ name }}',
    html: '<p>Hi {{ name }}</p>',
  };

  it('creates, reads, lists, updates and deletes a template', async () => {
    const created = await call('POST', '/templates', welcome);
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.location, '/templates/welcome');
    assert.equal(created.json().version, 1);
    assert.equal((await call('POST', '/templates', welcome)).statusCode, 409);
    const read = await call('GET', '/templates/welcome', undefined, t.viewer);
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().subject, welcome.subject);
    const updated = await call('PUT', '/templates/welcome', { subject: 'Hello {{ name }}', text: 'v2' });
    assert.equal(updated.statusCode, 200);
    assert.equal(updated.json().version, 2);
    assert.equal(updated.json().channel, 'email');
    assert.equal(updated.json().html, undefined);
    await call('POST', '/templates', { key: 'a-sms', channel: 'sms', text: 'x' });
    const list = await call('GET', '/templates?limit=1', undefined, t.viewer);
    assert.deepEqual(
      list.json().items.map((x: { key: string }) => x.key),
      ['a-sms'],
    );
    const next = await call('GET', `/templates?limit=1&cursor=${list.json().nextCursor}`);
    assert.deepEqual(
      next.json().items.map((x: { key: string; version: number }) => [x.key, x.version]),
      [['welcome', 2]],
    );
    assert.equal(next.json().nextCursor, null);
    assert.equal((await call('DELETE', '/templates/a-sms')).statusCode, 204);
    assert.equal((await call('GET', '/templates/a-sms')).statusCode, 404);
    assert.equal((await call('DELETE', '/templates/a-sms')).statusCode, 404);
    assert.equal((await call('PUT', '/templates/a-sms', { text: 'x' })).statusCode, 404);
  });

  it('checks fields per channel and Liquid syntax at save time', async () => {
    const cases: Array<[object, string]> = [
      [{ key: 'e1', channel: 'email', text: 'no subject' }, 'body/subject'],
      [{ key: 'e2', channel: 'email', subject: 'only a subject' }, 'body/text'],
      [{ key: 's1', channel: 'sms', text: 'x', html: '<b>x</b>' }, 'body/html'],
      [{ key: 'p1', channel: 'push', title: 't' }, 'body/body'],
      [{ key: 'bad', channel: 'sms', text: 'Hi {{ name ' }, 'body/text'],
      [{ key: 'bad2', channel: 'sms', text: '{% if x %}open' }, 'body/text'],
      [{ key: 'has space', channel: 'sms', text: 'x' }, 'body/key'],
      [{ key: 'x', channel: 'fax', text: 'x' }, 'body/channel'],
      [{ key: 'x', channel: 'sms', text: 'x', from: 'me' }, 'body/from'],
    ];
    for (const [payload, path] of cases) {
      const response = await call('POST', '/templates', payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.ok(
        response.json().errors.some((e: { path: string }) => e.path === path),
        `${path}: ${response.body}`,
      );
    }
    assert.equal((await call('GET', '/templates/bad')).statusCode, 404);
  });

  it('previews with HTML escaped in html only, and refuses a missing variable clearly', async () => {
    const response = await call('POST', '/templates/welcome/preview', { variables: { name: '<Ada & Bob>' } });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json().content, { subject: 'Hello <Ada & Bob>', text: 'v2' });
    await call('PUT', '/templates/welcome', {
      subject: 'Hi {{ name }}',
      html: '<p>{{ name }}</p>{{ footer | raw }}',
    });
    const html = await call('POST', '/templates/welcome/preview', {
      variables: { name: '<script>alert(1)</script>', footer: '<hr>' },
    });
    assert.equal(html.json().content.html, '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p><hr>');
    const missing = await call('POST', '/templates/welcome/preview', { variables: { footer: '' } });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().code, 'VALIDATION_FAILED');
    assert.match(missing.json().detail, /undefined variable: name/);
    assert.equal(missing.json().errors[0].path, 'body/variables');
  });

  it('keeps sample variables with the template and previews with them when none are given', async () => {
    const created = await call('POST', '/templates', {
      key: 'order-shipped',
      channel: 'sms',
      text: 'Order {{ order.id }} is on its way',
      sampleVariables: { order: { id: 'A-17' } },
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().sampleVariables, { order: { id: 'A-17' } });
    const preview = await call('POST', '/templates/order-shipped/preview', {});
    assert.equal(preview.statusCode, 200, preview.body);
    assert.deepEqual(preview.json().content, { text: 'Order A-17 is on its way' });
    // A new version without sample variables keeps the current ones; with them, replaces them.
    await call('PUT', '/templates/order-shipped', { text: 'Order {{ order.id }} shipped' });
    assert.deepEqual((await call('GET', '/templates/order-shipped')).json().sampleVariables, {
      order: { id: 'A-17' },
    });
    const replaced = await call('PUT', '/templates/order-shipped', {
      text: 'Order {{ order.id }} shipped',
      sampleVariables: { order: { id: 'B-2' } },
    });
    assert.deepEqual(replaced.json().sampleVariables, { order: { id: 'B-2' } });
    const bad = await call('PUT', '/templates/order-shipped', { text: 'x', sampleVariables: ['no'] });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().version, undefined);
    assert.equal((await call('GET', '/templates/order-shipped')).json().version, 3);
  });

  it('keeps templates per tenant and enforces scopes', async () => {
    assert.equal((await call('GET', '/templates/welcome', undefined, t.other)).statusCode, 404);
    assert.equal((await call('GET', '/templates', undefined, t.other)).json().items.length, 0);
    const sameKey = await call(
      'POST',
      '/templates',
      { key: 'welcome', channel: 'sms', text: 'theirs' },
      t.other,
    );
    assert.equal(sameKey.statusCode, 201);
    assert.equal(
      (await call('POST', '/templates', { key: 'z', channel: 'sms', text: 'x' }, t.sender)).statusCode,
      403,
    );
    assert.equal((await call('DELETE', '/templates/welcome', undefined, t.viewer)).statusCode, 403);
  });
});

describe('pinned template versions at delivery', () => {
  let t: T;
  before(async () => {
    // A roomier render deadline than the default 100 ms, so that on a busy machine each limit
    // case reaches its own limit (a loop's length, the output size) before the time limit.
    t = await notificationsApp({ HERALD_RENDER_TIMEOUT_MS: '2000' });
  });
  after(() => t.close());

  const record = async (id: string) => {
    const found = await t.deps.store.notifications.get('default', id);
    assert.ok(found);
    return found.record;
  };
  const call = (method: string, url: string, payload?: object, headers: Record<string, string> = t.admin) =>
    t.app.inject({ method: method as 'GET', url, headers, ...(payload ? { payload } : {}) });

  it('renders the version pinned at acceptance after an update and after a delete', async () => {
    const create = {
      key: 'reset',
      channel: 'email',
      subject: 'Reset v1',
      html: '<a href="{{ link }}">{{ name }}</a>',
    };
    assert.equal(
      (await t.app.inject({ method: 'POST', url: '/templates', headers: t.admin, payload: create }))
        .statusCode,
      201,
    );
    const body = {
      channel: 'email',
      recipient: { email: 'ada@example.com' },
      template: 'reset',
      variables: { name: 'Ada <3', link: 'https://x.example/?a=1&b=2' },
    };
    const v1 = (await send(t.app, t.sender, body)).json().notificationId;
    await t.app.inject({
      method: 'PUT',
      url: '/templates/reset',
      headers: t.admin,
      payload: { subject: 'Reset v2', text: '{{ name }}' },
    });
    const v2 = (await send(t.app, t.sender, body)).json().notificationId;
    await t.app.inject({ method: 'DELETE', url: '/templates/reset', headers: t.admin });

    const renderer = createRenderer(t.deps.store);
    assert.deepEqual((await renderer.render(await record(v1))).content, {
      subject: 'Reset v1',
      html: '<a href="https://x.example/?a=1&amp;b=2">Ada &lt;3</a>',
    });
    assert.deepEqual((await renderer.render(await record(v2))).content, {
      subject: 'Reset v2',
      text: 'Ada <3',
    });
    // A deleted key can no longer be used for new notifications.
    assert.equal((await send(t.app, t.sender, body)).statusCode, 422);
  });

  it('fails rendering with a RenderError naming the missing variable', async () => {
    const id = (
      await send(t.app, t.sender, {
        channel: 'sms',
        recipient: { phone: '+15550101234' },
        content: { text: 'Code {{ code }} for {{ user.name }}' },
        variables: { code: '1', user: {} },
      })
    ).json().notificationId;
    const renderer = createRenderer(t.deps.store);
    await assert.rejects(renderer.render(await record(id)), (error: unknown) => {
      assert.ok(error instanceof RenderError);
      assert.match(error.message, /undefined variable: user\.name/);
      assert.equal(error.field, 'text');
      return true;
    });
  });

  it('renders inline push content and passes data through', async () => {
    const id = (
      await send(t.app, t.sender, {
        channel: 'push',
        recipient: { deviceToken: 'a1b2c3d4e5f6a7b8', platform: 'fcm' },
        content: { title: '{{ n }} new', body: 'from {{ who }}', data: { route: '/inbox' } },
        variables: { n: 3, who: 'Ada & co' },
      })
    ).json().notificationId;
    assert.deepEqual((await createRenderer(t.deps.store).render(await record(id))).content, {
      title: '3 new',
      body: 'from Ada & co',
      data: { route: '/inbox' },
    });
  });

  it('refuses include, render and layout at save and at acceptance (400), so no template reads another or a file', async () => {
    for (const tag of ["include '/etc/passwd'", "render 'welcome'", "layout 'base'"]) {
      const saved = await call('POST', '/templates', { key: 'sneaky', channel: 'sms', text: `{% ${tag} %}` });
      assert.equal(saved.statusCode, 400, tag);
      assert.match(saved.json().errors[0].message, /tag is not allowed/);
      const inline = await send(t.app, t.sender, {
        channel: 'sms',
        recipient: { phone: '+15550101234' },
        content: { text: `{% ${tag} %}` },
      });
      assert.equal(inline.statusCode, 400, tag);
    }
  });

  it('answers 422 RENDER_LIMIT to a preview past a limit: a long range, its time, its output size', async () => {
    const cases: Array<[string, string, RegExp]> = [
      [
        'range',
        '{% for i in (1..n) %}{{ i }}{% endfor %}',
        /a loop over 40000000 items is over the limit of 10000/,
      ],
      [
        'time',
        '{% for i in (1..10000) %}{% for j in (1..10000) %}{% endfor %}{% endfor %}',
        /rendering ran out of time/,
      ],
      ['size', `{% for i in (1..10000) %}${'x'.repeat(40)}{% endfor %}`, /over 256 KiB/],
    ];
    for (const [key, text, detail] of cases) {
      assert.equal((await call('POST', '/templates', { key, channel: 'sms', text })).statusCode, 201);
      const preview = await call(
        'POST',
        `/templates/${key}/preview`,
        { variables: { n: 40_000_000 } },
        t.viewer,
      );
      assert.equal(preview.statusCode, 422, `${key}: ${preview.body}`);
      assert.equal(preview.json().code, 'RENDER_LIMIT');
      assert.match(preview.json().detail, detail);
    }
    const fine = await call('POST', '/templates/range/preview', { variables: { n: 3 } }, t.viewer);
    assert.equal(fine.statusCode, 200, 'the limits leave ordinary templates alone');
    assert.equal(fine.json().content.text, '123');
  });

  it('refuses preview variables nested past 32 levels with 400, as at acceptance', async () => {
    assert.equal(
      (await call('POST', '/templates', { key: 'deep', channel: 'sms', text: 'Hi {{ a }}' })).statusCode,
      201,
    );
    const nest = (levels: number, leaf: unknown) => {
      let value = leaf;
      for (let i = 0; i < levels; i++) value = { a: value };
      return value as Record<string, unknown>;
    };
    const forty = await call('POST', '/templates/deep/preview', { variables: nest(40, 'x') }, t.viewer);
    assert.equal(forty.statusCode, 400, forty.body);
    assert.deepEqual(forty.json().errors, [
      { path: 'body/variables', message: 'must NOT nest more than 32 levels deep' },
    ]);
    // Far deeper than a thread hand-over can copy: still a 400, never a 500.
    const array = `${'['.repeat(12_000)}${']'.repeat(12_000)}`;
    const deep = await t.app.inject({
      method: 'POST',
      url: '/templates/deep/preview',
      headers: { ...t.viewer, 'content-type': 'application/json' },
      payload: `{"variables":{"a":${array}}}`,
    });
    assert.equal(deep.statusCode, 400, deep.body);
    assert.equal(deep.json().errors[0].path, 'body/variables');
    const fine = await call('POST', '/templates/deep/preview', { variables: nest(31, 'x') }, t.viewer);
    assert.equal(fine.statusCode, 200, fine.body);
  });

  it('fails a notification past a render limit permanently, saying so', async () => {
    const id = (
      await send(t.app, t.sender, {
        channel: 'sms',
        recipient: { phone: '+15550101234' },
        content: { text: '{% for i in (1..n) %}{% endfor %}' },
        variables: { n: 20_000 },
      })
    ).json().notificationId;
    await assert.rejects(createRenderer(t.deps.store).render(await record(id)), (error: unknown) => {
      assert.ok(error instanceof RenderError && error.limit);
      assert.match(error.message, /a loop over 20000 items is over the limit of 10000/);
      return true;
    });
  });
});
