import { openapiDocument } from '../http/document.ts';

export const OPENAPI_HELP = `Usage: herald openapi

Prints the OpenAPI 3.1 document the API serves at GET /docs/json, without starting anything;
its servers entry is HERALD_PUBLIC_URL.

Examples:
  herald openapi > openapi.json
  HERALD_PUBLIC_URL=https://notify.example.com herald openapi | npx @redocly/cli lint /dev/stdin`;

/** `herald openapi`: prints the OpenAPI document (servers from HERALD_PUBLIC_URL) and exits. */
export async function runOpenapi(_args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  console.log(JSON.stringify(await openapiDocument(env), null, 2));
  return 0;
}
