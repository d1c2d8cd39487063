/** Topics (docs/topics.md): what a key may be and how a topic is shown. */
import { Type } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import { withExample } from '../http/examples.ts';
import { describedPattern } from '../http/field-messages.ts';
import type { SubscriberRecord, TopicRecord } from '../store/port/topics.ts';

/** What a topic key may be (a template key's rule, and colons for namespaced keys such as `project:42`). */
export const TOPIC_KEY = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

export const TopicKey = Type.String({
  pattern: describedPattern(
    TOPIC_KEY.source,
    'must be a topic key: 1 to 100 letters, digits, dots, colons, dashes or underscores, starting with a letter or digit',
  ),
});

/** Most recipients one POST /topics/{key}/subscribers takes. */
export const MAX_SUBSCRIBE = 1000;

export const TopicView = withExample(
  Type.Object({
    key: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    subscribers: Type.Integer({ description: 'How many recipients are subscribed' }),
    createdAt: Type.String({ format: 'date-time' }),
  }),
  { key: 'release-notes', name: 'Release notes', subscribers: 1250, createdAt: '2026-11-28T09:00:00.000Z' },
);

export const topicView = (t: TopicRecord) => ({
  key: t.key,
  name: t.name,
  subscribers: t.subscribers,
  createdAt: iso(t.createdAt),
});

export const SubscriberView = Type.Object({
  recipientId: Type.String(),
  subscribedAt: Type.String({ format: 'date-time' }),
});

export const subscriberView = (s: SubscriberRecord) => ({
  recipientId: s.recipientId,
  subscribedAt: iso(s.subscribedAt),
});
