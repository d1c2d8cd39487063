import { type Static, Type } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { literals, nullable } from '../http/schema.ts';
import type { InboxCounts, InboxMessage } from '../store/port/inbox.ts';

const Time = Type.String({ format: 'date-time' });

/** One message of an inbox as the API and the stream show it (docs/inbox-api.md). */
export const InboxItem = withExample(
  Type.Object({
    id: Type.String({ description: "The notification's ID" }),
    title: Type.String(),
    body: Type.String(),
    url: nullable(Type.String()),
    data: nullable(Type.Record(Type.String(), Type.Unknown())),
    category: nullable(Type.String()),
    createdAt: Time,
    seenAt: nullable(Time),
    readAt: nullable(Time),
    archivedAt: nullable(Time),
  }),
  {
    id: '019b76da-a800-70e3-aa1e-88b1e3a76f06',
    title: 'Your order shipped',
    body: 'Order 1042 is on its way.',
    url: 'https://shop.example.com/orders/1042',
    data: { orderId: 1042 },
    category: 'orders',
    createdAt: '2026-11-28T09:30:00.000Z',
    seenAt: '2026-11-28T09:31:10.000Z',
    readAt: null,
    archivedAt: null,
  },
);
export type InboxItemView = Static<typeof InboxItem>;

export const InboxCountsView = withExample(
  Type.Object({
    unread: Type.Integer({ description: 'Messages not read, archived ones left out' }),
    unseen: Type.Integer({ description: 'Messages not seen, archived ones left out' }),
  }),
  { unread: 3, unseen: 1 },
);

export const InboxPage = withExample(
  Type.Object({
    items: Type.Array(InboxItem),
    nextCursor: nullable(Type.String()),
    unread: Type.Integer(),
    unseen: Type.Integer(),
  }),
  {
    items: [exampleOf(InboxItem)],
    nextCursor: 'aToxNzY0MzIyMjAwMDAwOjAxOWI3NmRhLWE4MDAtNzBlMy1hYTFlLTg4YjFlM2E3NmYwNg',
    unread: 3,
    unseen: 1,
  },
);

export const InboxQuery = Type.Object(
  {
    filter: Type.Optional(
      Type.Union([literals(['all', 'unread', 'unseen', 'archived'] as const)], {
        default: 'all',
        description: '`all` (the default) leaves archived messages out; only `archived` lists them',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 400 })),
  },
  { additionalProperties: false },
);

export const MessageParams = Type.Object({
  id: withExample(Type.String({ minLength: 1, maxLength: 100 }), '019b76da-a800-70e3-aa1e-88b1e3a76f06'),
});

export const Updated = withExample(
  Type.Object({ updated: Type.Integer({ description: 'How many messages changed' }) }),
  { updated: 4 },
);

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** A stored message as the API shows it: times as ISO strings, like every other answer. */
export function itemView(m: InboxMessage): InboxItemView {
  return {
    id: m.id,
    title: m.title,
    body: m.body,
    url: m.url,
    data: m.data,
    category: m.category,
    createdAt: iso(m.createdAt),
    seenAt: isoOrNull(m.seenAt),
    readAt: isoOrNull(m.readAt),
    archivedAt: isoOrNull(m.archivedAt),
  };
}

export const countsView = (c: InboxCounts) => ({ unread: c.unread, unseen: c.unseen });
