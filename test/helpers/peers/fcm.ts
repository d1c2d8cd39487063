import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type CryptoKey, decodeJwt, exportPKCS8, generateKeyPair, jwtVerify } from 'jose';
import { tempDir } from '../config.ts';

/** A scripted FCM error for one registration token (google.rpc.Status with an FcmError detail). */
export interface FcmScripted {
  status: number;
  errorStatus?: string;
  errorCode?: string;
  headers?: Record<string, string>;
}

/** A message the peer accepted. */
export interface FcmReceived {
  project: string;
  message: Record<string, unknown> & { token: string; data?: Record<string, string> };
  name: string;
}

/** A local stand-in for Google's OAuth token endpoint and FCM HTTP v1, on one plain-HTTP port. */
export interface FcmPeer {
  apiBase: string;
  tokenUri: string;
  received: FcmReceived[];
  /** JWT assertions the token endpoint accepted (one per access-token exchange). */
  exchanges: number;
  refused: { status: number; reason: string }[];
  maxInFlight: number;
  holdMs: number;
  /** Lifetime of issued access tokens, in seconds. */
  expiresIn: number;
  /** Makes a service account whose key the peer trusts and writes its JSON key file. */
  createServiceAccount(options?: { trusted?: boolean; projectId?: string }): Promise<string>;
  script(registrationToken: string, ...answers: FcmScripted[]): void;
  /** Answers the next token exchanges with these responses. */
  scriptToken(...answers: FcmScripted[]): void;
  /** Revokes every access token issued so far (the next send gets 401). */
  revokeAll(): void;
  close(): Promise<void>;
}

export async function startFcmPeer(): Promise<FcmPeer> {
  const trusted = new Map<string, CryptoKey>();
  const accessTokens = new Set<string>();
  const scripts = new Map<string, FcmScripted[]>();
  const tokenScript: FcmScripted[] = [];
  let inFlight = 0;

  const server = createServer((request, response) => {
    inFlight++;
    peer.maxInFlight = Math.max(peer.maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      const [status, payload, headers] = await route(request, body).catch(
        (error: Error) => [500, { error: { status: 'INTERNAL', message: error.message } }, {}] as const,
      );
      if (peer.holdMs > 0) await new Promise((r) => setTimeout(r, peer.holdMs));
      inFlight--;
      send(response, status, payload, headers);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  type Answer = readonly [number, unknown, Record<string, string>];
  const refuse = (status: number, reason: string, body: unknown): Answer => {
    peer.refused.push({ status, reason });
    return [status, body, {}];
  };
  const rpcError = (s: FcmScripted): Answer => [
    s.status,
    {
      error: {
        code: s.status,
        status: s.errorStatus ?? 'INVALID_ARGUMENT',
        message: `scripted ${s.errorCode ?? s.errorStatus}`,
        details: s.errorCode
          ? [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: s.errorCode }]
          : [],
      },
    },
    s.headers ?? {},
  ];

  async function route(request: IncomingMessage, body: string): Promise<Answer> {
    if (request.method === 'POST' && request.url === '/token') return tokenLeg(request, body);
    const project = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(request.url ?? '')?.[1];
    if (request.method === 'POST' && project) return sendLeg(request, decodeURIComponent(project), body);
    return [404, { error: { code: 404, status: 'NOT_FOUND', message: 'no such route' } }, {}];
  }

  /** RFC 7523: the assertion must be an RS256 JWT from a trusted account, for this token URI and scope. */
  async function tokenLeg(request: IncomingMessage, body: string): Promise<Answer> {
    if (!String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      return refuse(400, 'not a form', { error: 'invalid_request' });
    }
    const form = new URLSearchParams(body);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return refuse(400, 'grant_type', { error: 'unsupported_grant_type' });
    }
    try {
      const assertion = form.get('assertion') ?? '';
      const key = trusted.get(String(decodeJwt(assertion).iss));
      if (!key) throw new Error('unknown client');
      const { payload } = await jwtVerify(assertion, key, {
        algorithms: ['RS256'],
        audience: peer.tokenUri,
        requiredClaims: ['iss', 'exp', 'iat'],
      });
      if ((payload.exp as number) - (payload.iat as number) > 3600) throw new Error('lifetime over 1 h');
      if (!String(payload.scope).split(' ').includes('https://www.googleapis.com/auth/firebase.messaging')) {
        throw new Error('scope');
      }
    } catch (error) {
      return refuse(400, `invalid_grant: ${(error as Error).message}`, {
        error: 'invalid_grant',
        error_description: 'Invalid JWT Signature.',
      });
    }
    const scripted = tokenScript.shift();
    if (scripted) return [scripted.status, { error: 'temporarily_unavailable' }, scripted.headers ?? {}];
    peer.exchanges++;
    const accessToken = `ya29.${randomBytes(24).toString('base64url')}`;
    accessTokens.add(accessToken);
    return [200, { access_token: accessToken, expires_in: peer.expiresIn, token_type: 'Bearer' }, {}];
  }

  async function sendLeg(request: IncomingMessage, project: string, body: string): Promise<Answer> {
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    if (!bearer || !accessTokens.has(bearer)) {
      return refuse(401, 'UNAUTHENTICATED', {
        error: { code: 401, status: 'UNAUTHENTICATED', message: 'bad token' },
      });
    }
    const { message } = JSON.parse(body) as { message: FcmReceived['message'] };
    const data = message.data ?? {};
    if (!message.token || Object.values(data).some((value) => typeof value !== 'string')) {
      return rpcError({ status: 400, errorStatus: 'INVALID_ARGUMENT', errorCode: 'INVALID_ARGUMENT' });
    }
    const next = scripts.get(message.token)?.shift();
    if (next) return rpcError(next);
    const name = `projects/${project}/messages/${randomUUID()}`;
    peer.received.push({ project, message, name });
    return [200, { name }, {}];
  }

  const peer: FcmPeer = {
    apiBase: origin,
    tokenUri: `${origin}/token`,
    received: [],
    exchanges: 0,
    refused: [],
    maxInFlight: 0,
    holdMs: 0,
    expiresIn: 3599,
    async createServiceAccount({ trusted: trust = true, projectId = 'herald-test' } = {}) {
      const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
      const clientEmail = `herald@${projectId}.iam.gserviceaccount.com`;
      if (trust) trusted.set(clientEmail, publicKey);
      const file = join(tempDir('herald-fcm-'), 'service-account.json');
      const account = {
        type: 'service_account',
        project_id: projectId,
        private_key_id: randomBytes(20).toString('hex'),
        private_key: await exportPKCS8(privateKey),
        client_email: clientEmail,
        token_uri: peer.tokenUri,
      };
      writeFileSync(file, JSON.stringify(account, null, 2));
      return file;
    },
    script(registrationToken, ...answers) {
      scripts.set(registrationToken, [...(scripts.get(registrationToken) ?? []), ...answers]);
    },
    scriptToken: (...answers) => tokenScript.push(...answers),
    revokeAll: () => accessTokens.clear(),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return peer;
}

function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}
