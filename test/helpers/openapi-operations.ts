/** The parts of the OpenAPI document (src/cli/openapi.ts) that tests read of each operation. */

/** A request or answer body's media type, with its example(s). */
export interface Media {
  schema?: object;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

export interface Parameter {
  in: string;
  name: string;
  schema?: { examples?: unknown[] };
  example?: unknown;
}

export interface Operation {
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

/** The examples of one media type, whichever way the document gives them. */
export function examplesOf(media: Media): unknown[] {
  if (media.example !== undefined) return [media.example];
  return Object.values(media.examples ?? {}).map((example) => example.value);
}

/** A parameter's example, whichever way the document gives it. */
export const parameterExample = (parameter: Parameter): unknown =>
  parameter.example ?? parameter.schema?.examples?.[0];
