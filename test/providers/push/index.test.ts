import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import webpush from 'web-push';
import { systemClock } from '../../../src/clock.ts';
import { pushProviderFactories } from '../../../src/providers/push/index.ts';
import type { ProviderDeps } from '../../../src/providers/types.ts';
import { testConfig } from '../../helpers/config.ts';
import { pushDeps } from './factories.ts';

const build = (env: Record<string, string>): string[] => {
  const deps: ProviderDeps = { ...pushDeps(systemClock), config: testConfig(env) };
  return pushProviderFactories.flatMap((factory) => factory(deps) ?? []).map((provider) => provider.name);
};

describe('push provider factories', () => {
  it('build nothing when no push variables are set', () => {
    assert.deepEqual(build({}), []);
  });

  it('build each provider from its variables', () => {
    const vapid = webpush.generateVAPIDKeys();
    const names = build({
      VAPID_PUBLIC_KEY: vapid.publicKey,
      VAPID_PRIVATE_KEY: vapid.privateKey,
      VAPID_SUBJECT: 'mailto:ops@example.com',
      APNS_KEY_FILE: '/etc/herald/AuthKey.p8',
      APNS_KEY_ID: 'ABC123DEFG',
      APNS_TEAM_ID: 'TEAM123456',
      APNS_TOPIC: 'com.example.app',
      FCM_SERVICE_ACCOUNT_FILE: '/etc/herald/fcm.json',
    });
    assert.deepEqual(names, ['webpush', 'apns', 'fcm']);
  });
});
