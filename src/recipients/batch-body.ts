import type { FieldError } from '../errors.ts';
import { parseBody } from '../notifications/batch-body.ts';
import { schemaErrors } from '../notifications/validate.ts';
import { checkEntry, type RecipientEntry } from './profile.ts';
import { batchOutline } from './schemas.ts';

/**
 * A POST /recipients/batch body read off the event loop (notifications/batch-thread.ts): refused
 * as Fastify's parser refuses it, refused whole by the batch's schema (its errors), or each
 * item's verdict: the entries to write with their positions, and the refused items' problems.
 */
export type DecodedRecipientBatch =
  | { ok: false; malformed: 'empty' | 'invalid' }
  | { ok: true; errors: FieldError[] }
  | {
      ok: true;
      entries: RecipientEntry[];
      /** The index in the body of each entry. */
      positions: number[];
      refused: Array<{ index: number; errors: FieldError[] }>;
    };

/**
 * Reads and checks a recipients batch body (docs/recipients.md): the outline first (an object
 * with 1 to 1000 `recipients` and nothing else), then each item as a PUT is checked
 * (profile.ts `checkEntry`). Runs in a batch thread: a 7 MiB body is hundreds of milliseconds of
 * parsing and checking, which held the event loop of every tenant's requests (issue 50).
 */
export function decodeRecipientBatch(
  bytes: Uint8Array,
  pushAllowedHosts: readonly string[],
): DecodedRecipientBatch {
  const parsed = parseBody(bytes);
  if (!parsed.ok) return parsed;
  const { body } = parsed;
  if (!batchOutline.Check(body)) {
    const errors: FieldError[] = [];
    schemaErrors(batchOutline, body, 'body', errors);
    return { ok: true, errors };
  }
  const entries: RecipientEntry[] = [];
  const positions: number[] = [];
  const refused: Array<{ index: number; errors: FieldError[] }> = [];
  body.recipients.forEach((item, index) => {
    const entry = checkEntry(item, `body/recipients/${index}`, pushAllowedHosts);
    if (Array.isArray(entry)) {
      refused.push({ index, errors: entry });
    } else {
      entries.push(entry);
      positions.push(index);
    }
  });
  return { ok: true, entries, positions, refused };
}
