import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/http/types.ts';
import { buildApi, createDeps } from '../../src/main.ts';
import { testConfig } from '../helpers/config.ts';
import { PUBLIC_URL, signTwilio, TWILIO_TOKEN } from './harness.ts';

describe('webhooks on the full API', () => {
  let app: App;
  before(async () => {
    const deps = await createDeps(
      testConfig({
        HERALD_PUBLIC_URL: PUBLIC_URL,
        TWILIO_ACCOUNT_SID: 'AC0123456789abcdef0123456789abcdef',
        TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
        TWILIO_FROM: '+15550000000',
      }),
    );
    app = await buildApi(deps);
    app.addHook('onClose', () => deps.store.close());
  });
  after(() => app.close());

  it('serves the webhooks without a bearer token, authenticated by the provider signature', async () => {
    const form = { MessageSid: 'SMunknown', MessageStatus: 'delivered' };
    const post = (signature?: string) =>
      app.inject({
        method: 'POST',
        url: '/webhooks/twilio',
        payload: new URLSearchParams(form).toString(),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(signature ? { 'x-twilio-signature': signature } : {}),
        },
      });
    const unsigned = await post();
    assert.equal(unsigned.statusCode, 401);
    assert.equal(unsigned.json().code, 'WEBHOOK_SIGNATURE_INVALID');
    assert.equal(unsigned.headers['www-authenticate'], undefined);
    const signed = await post(signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form));
    assert.equal(signed.statusCode, 200);
    assert.deepEqual(signed.json(), { applied: 0, unchanged: 0, pending: 1, duplicate: 0, dropped: 0 });
  });

  it('answers a webhook for a provider without a configured secret with 401', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/webhooks/mailgun',
      payload: JSON.stringify({
        signature: { timestamp: '1', token: 't', signature: 's' },
        'event-data': {},
      }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.statusCode, 401);
  });

  it('lists the webhook routes in the OpenAPI document without a bearer requirement', async () => {
    const docs = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
    for (const provider of ['twilio', 'sendgrid', 'mailgun']) {
      const operation = docs.paths[`/webhooks/${provider}`]?.post;
      assert.ok(operation, `${provider} is documented`);
      assert.deepEqual(operation.security, []);
    }
  });
});
