// Validation answers (docs/sending.md, "When a request is refused"): every problem of a body in
// one answer, in one wording (src/http/field-messages.ts), each limit stated.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LIST_ALL_WITHIN, MAX_FIELD_ERRORS } from '../../src/http/field-messages.ts';
import {
  countRows,
  devicePush,
  email,
  notificationsApp,
  send,
  sms,
  webPush,
} from '../notifications/fixtures.ts';

type T = Awaited<ReturnType<typeof notificationsApp>>;
type FieldErrors = Array<{ path: string; message: string }>;

/** Ajv's words, as field-messages.ts gives them: each message starts with "must". */
const ONE_STYLE = /^must (NOT )?[a-z0-9 ]/;

describe('validation messages', () => {
  let t: T;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: { ...t.admin, 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });

  /** The missing `channel` and two misspelt fields of one notification body. */
  const misspelt = {
    chanel: 'email',
    recipient: { email: 'ada@example.com' },
    subjct: 'x',
    template: 'welcome',
  };
  const missingAndUnknown = (prefix: string): FieldErrors => [
    { path: `${prefix}/channel`, message: "must have required property 'channel'" },
    { path: `${prefix}/chanel`, message: "must NOT have additional property 'chanel'" },
    { path: `${prefix}/subjct`, message: "must NOT have additional property 'subjct'" },
  ];

  it('lists a missing field and each unknown field of a notification at once', async () => {
    const rows = countRows(t.deps);
    const response = await send(t.app, t.sender, misspelt);
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().code, 'VALIDATION_FAILED');
    assert.deepEqual(response.json().errors, missingAndUnknown('body'));
    // With its channel, a missing recipient and the same two unknown fields.
    const { recipient: _, ...noRecipient } = email({ colour: 'red', subjct: 'x' });
    assert.deepEqual((await send(t.app, t.sender, noRecipient)).json().errors, [
      { path: 'body/recipient', message: "must have required property 'recipient'" },
      { path: 'body/colour', message: "must NOT have additional property 'colour'" },
      { path: 'body/subjct', message: "must NOT have additional property 'subjct'" },
    ]);
    assert.equal(countRows(t.deps), rows);
  });

  it('lists them at once for a batch item, beside an item that is accepted', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/notifications/batch',
      headers: t.sender,
      payload: { notifications: [misspelt, sms()] },
    });
    assert.equal(response.statusCode, 207);
    const [bad, good] = response.json().results;
    assert.deepEqual(bad.error.errors, missingAndUnknown('body/notifications/0'));
    assert.equal(good.status, 'QUEUED');
  });

  it('lists them at once on a route its schema checks (ajv)', async () => {
    const response = await call('POST', '/suppressions', { chanel: 'email', recipient: 'a@b.co', colour: 1 });
    assert.equal(response.statusCode, 400);
    assert.deepEqual(response.json().errors, [
      { path: 'body/channel', message: "must have required property 'channel'" },
      { path: 'body/chanel', message: "must NOT have additional property 'chanel'" },
      { path: 'body/colour', message: "must NOT have additional property 'colour'" },
    ]);
  });

  it('states the 8-character minimum of a device token too short, not its character set', async () => {
    const short = devicePush({ recipient: { deviceToken: 'a1b2c3', platform: 'apns' } });
    assert.deepEqual((await send(t.app, t.sender, short)).json().errors, [
      { path: 'body/recipient/deviceToken', message: 'must be at least 8 characters' },
    ]);
    // Too short and with a character outside the set: both are said.
    const both = devicePush({ recipient: { deviceToken: 'a1 b2', platform: 'apns' } });
    assert.deepEqual(
      (await send(t.app, t.sender, both)).json().errors.map((e: { message: string }) => e.message),
      ['must be at least 8 characters', 'must be letters, digits and the characters _ : . = + / - only'],
    );
  });

  it('states the limit of the route in a 413, in bytes', async () => {
    const limit = t.deps.config.bodyLimit;
    const big = email({ variables: { text: 'x'.repeat(limit) } });
    for (const response of [await send(t.app, t.sender, big), await call('POST', '/suppressions', big)]) {
      assert.equal(response.statusCode, 413);
      assert.equal(response.json().detail, `The body exceeds the limit of ${limit} bytes for this route.`);
    }
  });

  it(`lists ${MAX_FIELD_ERRORS} problems at most, and a large refused value's first`, async () => {
    const unknown = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`x${i}`, i]));
    const one = await send(t.app, t.sender, email(unknown));
    assert.equal(one.json().errors.length, MAX_FIELD_ERRORS);
    const schema = await call('POST', '/suppressions', { channel: 'email', recipient: 'a@b.co', ...unknown });
    assert.equal(schema.json().errors.length, MAX_FIELD_ERRORS);
    // A route's schema lists every error of a value of up to LIST_ALL_WITHIN values, the first
    // of a larger one (listing them costs per error: decision 0011).
    const many = Object.fromEntries(Array.from({ length: LIST_ALL_WITHIN }, (_, i) => [`x${i}`, i]));
    const large = await call('POST', '/suppressions', { channel: 'email', recipient: 'a@b.co', ...many });
    assert.equal(large.statusCode, 400);
    assert.deepEqual(large.json().errors, [
      { path: 'body/x0', message: "must NOT have additional property 'x0'" },
    ]);
  });

  it('words every refusal of the main routes alike, and states each limit', async () => {
    const tooLong = 'x'.repeat(1601);
    const requests: Array<['GET' | 'POST' | 'PUT', string, unknown?]> = [
      ['POST', '/notifications', 'a string'],
      ['POST', '/notifications', email({ channel: 'fax', priority: 'URGENT' })],
      ['POST', '/notifications', email({ recipient: { email: 'nobody' }, template: 'a b' })],
      ['POST', '/notifications', sms({ recipient: { phone: '555' }, content: { text: tooLong } })],
      ['POST', '/notifications', sms({ expiresAt: '2026-02-30T00:00:00Z', scheduledAt: 'soon' })],
      ['POST', '/notifications', sms({ expiresAt: '2020-01-01T00:00:00Z', metadata: { a: 'b\u0000' } })],
      ['POST', '/notifications', sms({ template: 'welcome' })],
      ['POST', '/notifications', devicePush({ content: { title: 'x'.repeat(1001), body: '' } })],
      ['POST', '/notifications', sms({ content: undefined })],
      ['POST', '/notifications', { channel: 'push', recipient: { subscription: { endpoint: 'http://x' } } }],
      [
        'POST',
        '/notifications',
        webPush({ recipient: { subscription: { endpoint: 'https://a.example/1', expirationTime: 'x' } } }),
      ],
      ['POST', '/notifications/batch', { notifications: [] }],
      ['POST', '/notifications/batch', { notifications: [1, {}], dryRun: true }],
      ['GET', '/notifications?status=LOST&limit=0&colour=red'],
      ['GET', '/notifications?createdAfter=yesterday'],
      ['GET', '/notifications?cursor=forged'],
      ['POST', '/templates', { key: '-bad key', channel: 'sms', text: '{% if %}', subject: 'x' }],
      ['POST', '/templates', { key: 'k', channel: 'email', sampleVariables: [] }],
      ['POST', '/templates', { key: 'k', channel: 'push', title: 'x' }],
      ['POST', '/suppressions', { channel: 'sms', recipient: 'nobody', reason: ' ' }],
      ['POST', '/suppressions', { channel: 'email', recipient: '', reason: 'a\nb' }],
      ['GET', '/suppressions?recipient=a@b.co'],
      ['POST', '/admin/users', { email: 'nobody', password: 'short', role: 'root', tenant: 'Bad Name' }],
      ['POST', '/admin/users', { email: 'ada@example.com', password: 'aaaaaaaaaaaaaaaa', role: 'viewer' }],
      ['POST', '/callbacks', { url: 'http://127.0.0.1/hook', events: ['LOST', 'LOST'] }],
      ['POST', '/callbacks', { url: 'https://127.0.0.1/hook' }],
      ['POST', '/auth/login', { email: '', password: '', tenant: 'Bad Name' }],
    ];
    const said: string[] = [];
    for (const [method, url, payload] of requests) {
      const response = await call(method, url, payload);
      const label = `${method} ${url} ${JSON.stringify(payload)?.slice(0, 80)}`;
      assert.equal(response.statusCode, 400, `${label}: ${response.body}`);
      const { errors } = response.json() as { errors?: FieldErrors };
      assert.ok(errors && errors.length > 0, label);
      for (const { message } of errors) {
        assert.match(message, ONE_STYLE, label);
        said.push(message);
      }
    }
    // Each limit is stated with its number; a union of types names its types.
    for (const limit of [
      'must NOT have more than 1600 characters',
      'must NOT have more than 1000 characters',
      'must be at least 1 character',
      'must have at least 1 item',
      'must be at least 12 characters',
      'must be >= 1',
      'must be number or null',
    ]) {
      assert.ok(said.includes(limit), `${limit} in ${JSON.stringify(said)}`);
    }
    // No regular expression, and none of TypeBox's own words.
    for (const message of said) assert.doesNotMatch(message, /pattern|Expected|\^|\$/, message);
  });
});
