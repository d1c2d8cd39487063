// Taken unchanged from ../shared/peer-bench/peer/ (the peer).
// Bearer-token check the usual way: jose's jwtVerify on every request against the public key
// set, with the algorithm, typ, issuer and audience pinned and no verified-token cache.
import { createLocalJWKSet, jwtVerify } from 'jose';

const problem = (status, code, title) => ({ type: 'about:blank', title, status, code });

export function bearerAuth({ jwks, issuer, audience }) {
  const keySet = createLocalJWKSet(jwks);
  const verifyOpts = {
    algorithms: ['ES256'],
    typ: 'at+jwt',
    issuer,
    audience,
    requiredClaims: ['sub', 'exp', 'iat', 'jti', 'scope'],
  };

  const deny = (reply, sent) =>
    reply
      .code(401)
      .header('www-authenticate', sent ? 'Bearer error="invalid_token"' : 'Bearer')
      .type('application/problem+json')
      .send(problem(401, 'AUTH_INVALID_TOKEN', 'Unauthorized'));

  /** An onRequest hook factory: `requireScope('notifications:send')`. */
  return function requireScope(scope) {
    return async function authenticate(request, reply) {
      const header = request.headers.authorization;
      const m = header && /^bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
      if (!m) return deny(reply, Boolean(header));
      let payload;
      try {
        ({ payload } = await jwtVerify(m[1], keySet, verifyOpts));
      } catch {
        return deny(reply, true);
      }
      if (typeof payload.scope !== 'string' || !payload.scope.split(' ').includes(scope)) {
        return reply.code(403).type('application/problem+json').send(problem(403, 'FORBIDDEN', 'Forbidden'));
      }
      request.principal = { sub: payload.sub, tid: payload.tid ?? 'default' };
    };
  };
}
