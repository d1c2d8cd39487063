import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { SCOPES } from '../auth/principal.ts';
import { ProblemSchema } from './problem.ts';

/** The tags of the document, in the order a reader meets them. */
const TAGS = [
  { name: 'auth', description: 'Login, refresh, client credentials, keys, sessions' },
  { name: 'notifications', description: 'Accept notifications and follow their status' },
  { name: 'templates', description: 'Versioned Liquid templates and previews' },
  {
    name: 'recipients',
    description:
      "A tenant's recipients: the caller's own user IDs with their addresses, locale and data (see docs/recipients.md)",
  },
  {
    name: 'callbacks',
    description:
      'Signed status callbacks (Standard Webhooks), per tenant, scope admin: see docs/callbacks.md for verifying them',
  },
  {
    name: 'suppressions',
    description:
      'Recipients a tenant no longer sends to, and one-click unsubscribe: see docs/deliverability.md',
  },
  {
    name: 'preferences',
    description:
      "Categories, recipients' preferences and the hosted preferences page: see docs/preferences.md",
  },
  {
    name: 'topics',
    description: "Topics: a tenant's lists of recipients to broadcast to (see docs/topics.md)",
  },
  {
    name: 'broadcasts',
    description: 'One notification to every subscriber of a topic, fanned out durably (see docs/topics.md)',
  },
  {
    name: 'inbox',
    description:
      "A recipient's in-app inbox, with a recipient token (scope inbox): its messages, counts, actions and live stream (see docs/inbox-api.md)",
  },
  {
    name: 'workflows',
    description:
      'Several steps for one event: sends, delays, digests and throttles, versioned (see docs/workflows.md)',
  },
  { name: 'admin', description: 'Users, clients, queues and the sandbox (scope admin)' },
  { name: 'webhooks', description: 'Delivery reports from providers, authenticated by their signatures' },
  { name: 'ops', description: 'Health, readiness and metrics' },
];

/** Every error answer, on every route: RFC 9457 problem+json. */
const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** `GET /notifications/{id}` → `getNotificationsId`: a stable operationId from method and path. */
function operationId(method: string, url: string): string {
  const words = url
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1));
  return method.toLowerCase() + words.join('');
}

/**
 * The OpenAPI document's options (`GET /docs/json`), in one place: servers from
 * HERALD_PUBLIC_URL, bearer tokens and OAuth2 client credentials as security schemes, and per
 * route what the route schemas leave out: an operationId, the problem+json answers every route
 * can give (4XX, 5XX), and `security: []` on the public routes (the protected scope sets its own,
 * app.ts).
 */
export function openapiOptions(publicUrl: string | undefined, version: string): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald',
        version,
        description: 'Notification delivery with stateless JWT auth.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Without a public URL (an app built by a test), the server is the document's own origin.
      servers: [{ url: publicUrl ?? '/' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          clientCredentials: {
            type: 'oauth2',
            description: 'A service client exchanges its id and secret for an access token.',
            flows: {
              clientCredentials: {
                tokenUrl: `${publicUrl ?? ''}/auth/token`,
                scopes: Object.fromEntries(SCOPES.map((scope) => [scope, `the ${scope} scope`])),
              },
            },
          },
        },
        schemas: { Problem: ProblemSchema },
      },
    },
    transform: ({ schema, url, route }) => {
      const method = Array.isArray(route.method) ? String(route.method[0]) : String(route.method);
      const base = schema ?? {};
      const response = (base.response ?? {}) as Record<string, unknown>;
      return {
        url,
        schema: {
          ...base,
          operationId: base.operationId ?? operationId(method, url),
          security: base.security ?? [],
          response: {
            ...response,
            '4XX': response['4XX'] ?? problemResponse('The request was refused (problem+json)'),
            '5XX': response['5XX'] ?? problemResponse('Herald could not answer (problem+json)'),
          },
        },
      };
    },
  };
}
