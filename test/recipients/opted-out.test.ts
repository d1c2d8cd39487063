import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CategoryRecord, NO_PREFERENCES, optedOut } from '../../src/recipients/model.ts';

const marketing: CategoryRecord = {
  tenant: 't1',
  name: 'marketing',
  description: null,
  required: false,
  defaultChannels: { sms: false },
  createdAt: 0,
  updatedAt: 0,
};
const base = {
  priority: 'NORMAL' as const,
  channel: 'email' as const,
  category: 'marketing',
  declared: marketing,
};

describe('the preference rule (docs/preferences.md)', () => {
  it('sends when nothing is set', () => {
    assert.equal(optedOut({ ...base, preferences: NO_PREFERENCES }), null);
  });
  it('takes the first choice set: the category on the channel, then the channel, then the default', () => {
    const prefs = { channels: { email: false, sms: true }, categories: { marketing: { email: true } } };
    assert.equal(optedOut({ ...base, preferences: prefs }), null);
    assert.equal(
      optedOut({ ...base, channel: 'push', preferences: { channels: { push: false }, categories: {} } }),
      'opted out of push',
    );
    assert.equal(
      optedOut({ ...base, preferences: { channels: {}, categories: { marketing: { email: false } } } }),
      'opted out of marketing on email',
    );
    assert.equal(
      optedOut({ ...base, channel: 'sms', preferences: NO_PREFERENCES }),
      'marketing is off by default on sms',
    );
    assert.equal(
      optedOut({ ...base, channel: 'sms', preferences: { channels: { sms: true }, categories: {} } }),
      null,
    );
  });
  it('always sends CRITICAL and required categories', () => {
    const prefs = { channels: { email: false }, categories: { marketing: { email: false } } };
    assert.equal(optedOut({ ...base, priority: 'CRITICAL', preferences: prefs }), null);
    assert.equal(optedOut({ ...base, declared: { ...marketing, required: true }, preferences: prefs }), null);
  });
  it('without a category, only the channel choice counts', () => {
    assert.equal(
      optedOut({
        ...base,
        category: null,
        declared: undefined,
        preferences: { channels: { email: false }, categories: {} },
      }),
      'opted out of email',
    );
  });
});
