import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/http/types.ts';
import type { Priority, Recipient } from '../../src/notifications/model.ts';
import type { Store } from '../../src/store/port/index.ts';
import { cycle, newNotification, seedMany } from '../store/queue-fixtures.ts';
import { record } from '../store/reports.suite.ts';
import { PUBLIC_URL, signMailgun, signSendgrid, signTwilio, webhookApp } from '../webhooks/harness.ts';

/**
 * Suppressions from the providers' signed webhooks (API.md §11): each report adds one, and at the
 * next claim a NORMAL notification to that recipient ends FAILED while a CRITICAL one is claimed.
 */
describe('suppressions from signed provider webhooks', () => {
  let app: App;
  let store: Store;
  let sendgridKey: Awaited<ReturnType<typeof webhookApp>>['sendgridKey'];
  before(async () => {
    ({ app, store, sendgridKey } = await webhookApp());
  });
  after(() => app.close());

  /** A notification to `recipient` as a send leaves it: SENT at `provider` under `messageId`. */
  const sent = async (recipient: Recipient, provider: string, messageId: string) => {
    const channel = recipient.email ? 'email' : 'sms';
    const [id] = await seedMany(store, [newNotification({ channel, recipient })]);
    await record(store, id as string, 'SENT', provider, messageId);
  };
  /** What the next claim does with a NORMAL and a CRITICAL notification to `recipient`. */
  const nextClaim = async (recipient: Recipient) => {
    const channel = recipient.email ? 'email' : 'sms';
    const make = (priority: Priority) => newNotification({ channel, recipient, priority });
    const [normal, critical] = (await seedMany(store, [make('NORMAL'), make('CRITICAL')])) as [
      string,
      string,
    ];
    const result = await cycle(store);
    const claimed = result.claimed.map((r) => r.id);
    return { normal: claimed.includes(normal), critical: claimed.includes(critical) };
  };
  const reasonOf = async (channel: 'email' | 'sms', recipient: string) =>
    (await store.suppressions.match([{ tenant: 't1', channel, recipient }]))[0]?.reason;

  const sendgrid = (email: string, messageId: string, event: string, extra: object = {}) => {
    const body = JSON.stringify([
      { email, timestamp: 1767225600, 'smtp-id': `<${messageId}>`, event, ...extra },
    ]);
    return app.inject({
      method: 'POST',
      url: '/webhooks/sendgrid',
      payload: body,
      headers: { 'content-type': 'application/json', ...signSendgrid(sendgridKey, body) },
    });
  };
  const mailgun = (messageId: string, event: string, extra: object = {}) =>
    app.inject({
      method: 'POST',
      url: '/webhooks/mailgun',
      payload: {
        signature: signMailgun(),
        'event-data': {
          event,
          timestamp: 1767225600.5,
          message: { headers: { 'message-id': messageId } },
          ...extra,
        },
      },
    });

  for (const [name, post, reason] of [
    ['SendGrid bounce', (e: string, m: string) => sendgrid(e, m, 'bounce', { type: 'bounce' }), 'bounce'],
    ['SendGrid spamreport', (e: string, m: string) => sendgrid(e, m, 'spamreport'), 'complaint'],
    [
      'Mailgun permanent failed',
      (_: string, m: string) => mailgun(m, 'failed', { severity: 'permanent' }),
      'bounce',
    ],
    ['Mailgun complained', (_: string, m: string) => mailgun(m, 'complained'), 'complaint'],
  ] as const) {
    it(`${name}: suppresses the address (${reason})`, async () => {
      const email = `${randomUUID()}@example.com`;
      const messageId = `${randomUUID()}@mail.example.com`;
      await sent({ email }, 'smtp', messageId);
      const response = await post(email, messageId);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(await reasonOf('email', email), reason);
      assert.deepEqual(await nextClaim({ email }), { normal: false, critical: true });
    });
  }

  it('SendGrid blocked bounce and Mailgun temporary failure suppress nothing', async () => {
    const first = `${randomUUID()}@example.com`;
    const second = `${randomUUID()}@example.com`;
    await sent({ email: first }, 'smtp', 'b1@mail.example.com');
    await sent({ email: second }, 'smtp', 'b2@mail.example.com');
    await sendgrid(first, 'b1@mail.example.com', 'bounce', { type: 'blocked' });
    await mailgun('b2@mail.example.com', 'failed', { severity: 'temporary' });
    assert.equal(await reasonOf('email', first), undefined);
    assert.equal(await reasonOf('email', second), undefined);
  });

  it('Twilio undelivered with error 21610: suppresses the number (opt_out)', async () => {
    const phone = '+15550108888';
    await sent({ phone }, 'twilio', 'SM21610');
    const form = {
      AccountSid: 'AC0123456789abcdef0123456789abcdef',
      MessageSid: 'SM21610',
      MessageStatus: 'undelivered',
      ErrorCode: '21610',
    };
    const response = await app.inject({
      method: 'POST',
      url: '/webhooks/twilio',
      payload: new URLSearchParams(form).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form),
      },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(await reasonOf('sms', phone), 'opt_out');
    assert.deepEqual(await nextClaim({ phone }), { normal: false, critical: true });
  });
});
