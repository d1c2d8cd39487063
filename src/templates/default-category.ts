import type { TemplateRecord } from '../store/port/templates.ts';

/**
 * A notification's category (the contract's section 12, docs/preferences.md): its own, else the default of the
 * template version it pins at acceptance. Taken there, once, so that preferences and SKIPPED at
 * processing, GET /notifications/{id} and a later template change all see the same category.
 */
export function categoryOf(
  own: string | null,
  template: Pick<TemplateRecord, 'category'> | null,
): string | null {
  return own ?? template?.category ?? null;
}
