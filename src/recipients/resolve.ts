/**
 * What processing a notification to a person decides (docs/sending-to-people.md), once, for both databases: the
 * claim reads the claimed notifications' recipients and categories in its transaction
 * (store/queue-core.ts, `resolvePeople`) and asks this for each one.
 */
import type { Channel } from '../channels.ts';
import type { NotificationRecord, Person, Recipient } from '../notifications/model.ts';
import { type CategoryRecord, optedOut, type RecipientRecord } from './model.ts';

/** Not sent, and why (the SKIPPED event's detail); or the address it goes to and the person. */
export type Resolution = { skip: string } | { recipient: Recipient; person: Person };

/** The profile's addresses for a channel: one email or phone, every push target, or the inbox. */
function addressesFor(channel: Channel, found: RecipientRecord): Recipient[] {
  const { profile } = found;
  switch (channel) {
    case 'email':
      return profile.email === undefined ? [] : [{ email: profile.email }];
    case 'sms':
      return profile.phone === undefined ? [] : [{ phone: profile.phone }];
    case 'push':
      return (profile.push ?? []) as Recipient[];
    case 'inapp':
      // Every recipient has an inbox: the recipient itself is its address.
      return [{ id: found.id }];
  }
}

/**
 * A notification to a person as processing finds it: the recipient gone (`found` undefined: it
 * was deleted after acceptance), no address for the channel, or opted out by the preference rule
 * (recipients/model.ts `optedOut`, with the declared category if there is one) is SKIPPED;
 * otherwise it goes to the profile's address (on push, every target).
 */
export function resolve(
  record: Pick<NotificationRecord, 'channel' | 'priority' | 'category'>,
  found: RecipientRecord | undefined,
  declared: CategoryRecord | undefined,
): Resolution {
  if (found === undefined) return { skip: 'recipient deleted' };
  const { channel } = record;
  const addresses = addressesFor(channel, found);
  const first = addresses[0];
  if (first === undefined) return { skip: `no ${channel} address` };
  const why = optedOut({
    priority: record.priority,
    channel,
    category: record.category,
    declared,
    preferences: found.preferences,
  });
  if (why !== null) return { skip: why };
  const { profile } = found;
  const person: Person = {
    id: found.id,
    name: profile.name ?? null,
    locale: profile.locale ?? null,
    timezone: profile.timezone ?? null,
    data: profile.data ?? {},
  };
  if (channel === 'push') person.targets = addresses;
  return { recipient: first, person };
}
