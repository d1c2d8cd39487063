import { Liquid } from 'liquidjs';

// The same options as the server (src/templates/liquid.ts), so the live preview in the editor
// renders exactly as delivery will: strict variables, escaped HTML output, no file system.
const COMMON = {
  templates: {},
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
  timezoneOffset: 0,
  renderLimit: 1_000,
} as const;
const textEngine = new Liquid(COMMON);
const htmlEngine = new Liquid({ ...COMMON, outputEscape: 'escape' });

export type Fields = {
  subject?: string;
  text?: string;
  html?: string;
  title?: string;
  body?: string;
  url?: string;
};

/** Renders every field of a draft template with `variables`; throws the engine's message on error. */
export async function renderDraft(fields: Fields, variables: Record<string, unknown>): Promise<Fields> {
  const out: Fields = {};
  for (const key of ['subject', 'text', 'html', 'title', 'body', 'url'] as const) {
    const source = fields[key];
    if (source === undefined || source === '') continue;
    const engine = key === 'html' ? htmlEngine : textEngine;
    try {
      out[key] = await engine.parseAndRender(source, variables);
    } catch (error) {
      throw new Error(`${key}: ${(error as Error).message}`);
    }
  }
  return out;
}
