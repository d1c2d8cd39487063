import { Type } from '@sinclair/typebox';

/** What a template key may be: also the pattern a template list's cursor must decode to. */
export const TEMPLATE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const TemplateKey = Type.String({ pattern: TEMPLATE_KEY.source });
