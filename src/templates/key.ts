import { Type } from '@sinclair/typebox';
import { describedPattern } from '../http/field-messages.ts';

/** What a template key may be: also the pattern a template list's cursor must decode to. */
export const TEMPLATE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const TemplateKey = Type.String({
  pattern: describedPattern(
    TEMPLATE_KEY.source,
    'must be a template key: 1 to 100 letters, digits, dots, dashes or underscores, starting with a letter or digit',
  ),
});
