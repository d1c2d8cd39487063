import { openapiDocument } from '../http/document.ts';

/** `herald openapi`: prints the OpenAPI document (servers from HERALD_PUBLIC_URL) and exits. */
export async function runOpenapi(_args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  console.log(JSON.stringify(await openapiDocument(env), null, 2));
  return 0;
}
