import type { Static } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import type { RecipientKey } from '../store/port/recipients.ts';
import type { RecipientRecord } from './model.ts';
import type { PreferenceTokens } from './preferences-token.ts';
import type { RecipientView } from './schemas.ts';

type View = Static<typeof RecipientView>;

/** Builds the API's view of recipients (GET, PUT, PATCH, the list). */
export interface RecipientViews {
  view(record: RecipientRecord): Promise<View>;
}

/** A recipient's preferences link: `{HERALD_PUBLIC_URL}/preferences/{token}` (docs/recipients.md). */
export async function preferencesUrlOf(
  publicUrl: string,
  tokens: PreferenceTokens,
  recipient: RecipientKey,
): Promise<string> {
  return `${publicUrl}/preferences/${await tokens.make(recipient)}`;
}

/**
 * A recipient as the API shows it (docs/recipients.md): every field present, an unset address, locale,
 * time zone or name as null, no push target as [], no data as {}; addresses unmasked, since the
 * caller stored them; and the recipient's preferences link.
 */
export function recipientViews(publicUrl: string, tokens: PreferenceTokens): RecipientViews {
  return {
    async view(record) {
      const { profile } = record;
      return {
        recipientId: record.id,
        email: profile.email ?? null,
        phone: profile.phone ?? null,
        // Stored only after profile.ts checked each target against the schema this type comes from.
        push: (profile.push ?? []) as View['push'],
        locale: profile.locale ?? null,
        timezone: profile.timezone ?? null,
        name: profile.name ?? null,
        data: profile.data ?? {},
        preferencesUrl: await preferencesUrlOf(publicUrl, tokens, record),
        createdAt: iso(record.createdAt),
        updatedAt: iso(record.updatedAt),
      };
    },
  };
}
