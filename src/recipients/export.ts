import type { RecipientStore } from '../store/port/recipients.ts';

/** How many recipients one read of an export takes. */
const PAGE = 1000;

/**
 * `herald recipients export`: a tenant's recipients as JSON lines, `{ recipientId, ...profile,
 * preferences }` in ID order, the form `herald recipients import` reads back (the preferences as
 * GET /recipients/{id}/preferences answers them, so an import restores them). Page by page, each
 * line written before the next page is read (`write` resolves when the output took it), so any
 * number of recipients is exported in constant memory. Resolves with the number exported.
 */
export async function exportRecipients(
  recipients: Pick<RecipientStore, 'list'>,
  tenant: string,
  write: (text: string) => Promise<void>,
): Promise<number> {
  let count = 0;
  let after: string | undefined;
  for (;;) {
    const page = await recipients.list(tenant, { limit: PAGE, ...(after === undefined ? {} : { after }) });
    if (page.length === 0) return count;
    await write(
      page
        .map((r) => `${JSON.stringify({ recipientId: r.id, ...r.profile, preferences: r.preferences })}\n`)
        .join(''),
    );
    count += page.length;
    if (page.length < PAGE) return count;
    after = page.at(-1)?.id;
  }
}
