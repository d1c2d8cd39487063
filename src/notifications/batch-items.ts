import type { FieldError } from '../errors.ts';
import { type EncodedColumns, encodeColumns, type PackedColumns } from '../store/port/notifications.ts';
import { type LiquidSource, liquidSources } from '../templates/fields.ts';
import type { Channel, Content, Priority } from './model.ts';
import { recipientDigest } from './recipient-digest.ts';
import { validateNotification } from './validate.ts';

/**
 * One batch item after every check that needs no store and no Liquid parse: what ingest needs to
 * make its row (the JSON columns already serialized), and the inline content only where it has
 * Liquid markup for the syntax check to parse. Small on purpose: it crosses from the batch
 * thread to the event loop (batch-decoder.ts), where each string that crosses costs.
 */
export interface CheckedItem {
  channel: Channel;
  priority: Priority;
  template: string | null;
  locale: string | null;
  scheduledAt: number | null;
  expiresAt: number | null;
  category: string | null;
  /** The person a `{ id }` recipient names: ingest checks the batch's ones in one read. */
  recipientId: string | null;
  /** Serialized (and the recipient digested) by checkItem, then packed with the batch's other rows (batch-body.ts). */
  encoded: EncodedColumns | PackedColumns;
  /**
   * The inline content's fields that hold Liquid markup (null: none), packed with the batch's
   * other sources in one shared buffer (batch-body.ts).
   */
  liquid: LiquidSource[] | null;
}

/** An item refused by validation (paths under `body/notifications/<index>`), or checked. */
export type ItemVerdict = { errors: FieldError[] } | { item: CheckedItem };

const withLiquid = (content: Content | null): LiquidSource[] | null => {
  const sources = content === null ? [] : liquidSources(content);
  return sources.length > 0 ? sources : null;
};

/**
 * Validates and serializes the item at `index` of a batch, as acceptance at `now` sees it, its
 * recipient digested with the tenant's `digestKey`.
 */
export function checkItem(
  raw: unknown,
  index: number,
  now: number,
  pushAllowedHosts: readonly string[],
  digestKey: Uint8Array,
): ItemVerdict {
  const v = validateNotification(raw, `body/notifications/${index}`, now, pushAllowedHosts);
  if (Array.isArray(v)) return { errors: v };
  return {
    item: {
      channel: v.channel,
      priority: v.priority,
      template: v.template,
      locale: v.locale,
      scheduledAt: v.scheduledAt,
      expiresAt: v.expiresAt,
      category: v.category,
      recipientId: v.recipient.id ?? null,
      encoded: encodeColumns(v, recipientDigest(digestKey, v.recipient)),
      liquid: withLiquid(v.content),
    },
  };
}
