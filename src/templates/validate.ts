import type { Channel } from '../channels.ts';
import type { FieldError } from '../errors.ts';
import type { TemplateContent } from '../store/port/templates.ts';
import { TEXT_FIELDS } from './fields.ts';

/** Which fields a template of each channel uses; the first group is required. */
const FIELDS: Record<Channel, { required: string[]; anyOf?: string[]; allowed: string[] }> = {
  email: { required: ['subject'], anyOf: ['text', 'html'], allowed: ['subject', 'text', 'html'] },
  sms: { required: ['text'], allowed: ['text'] },
  push: { required: ['title', 'body'], allowed: ['title', 'body'] },
  // `data` is JSON kept as given (no Liquid), stored with each message like inline content's.
  inapp: { required: ['title', 'body'], allowed: ['title', 'body', 'url', 'data'] },
};
/** Every field a template may have: the Liquid ones and inapp's `data`. */
const TEMPLATE_FIELDS = [...TEXT_FIELDS, 'data'] as const;

/** The fields of a template body: the Liquid ones and `data` (anything else in `body` is ignored here). */
export function contentOf(body: Record<string, unknown>): TemplateContent {
  const content: TemplateContent = {};
  for (const field of TEXT_FIELDS) {
    const value = body[field];
    if (typeof value === 'string') content[field] = value;
  }
  const { data } = body;
  if (typeof data === 'object' && data !== null && !Array.isArray(data))
    content.data = data as Record<string, unknown>;
  return content;
}

/**
 * Checks the fields fit the channel (at save time, not at send time); their Liquid syntax is
 * checked after, off the event loop (syntax-check.ts).
 */
export function templateErrors(channel: Channel, content: TemplateContent): FieldError[] {
  const rules = FIELDS[channel];
  const errors: FieldError[] = [];
  const has = (f: string) => content[f as keyof TemplateContent] !== undefined;
  for (const field of TEMPLATE_FIELDS) {
    if (has(field) && !rules.allowed.includes(field)) {
      errors.push({ path: `body/${field}`, message: `must NOT be given for ${channel} templates` });
    }
  }
  for (const field of rules.required) {
    if (!has(field))
      errors.push({ path: `body/${field}`, message: `must be given for ${channel} templates` });
  }
  if (rules.anyOf && !rules.anyOf.some(has)) {
    const [first, ...others] = rules.anyOf;
    errors.push({
      path: `body/${first}`,
      message: `must be given for ${channel} templates, or ${others.join(' or ')} instead`,
    });
  }
  return errors;
}
