import type { FastifyRequest } from 'fastify';

/**
 * pino options shared by every app. The request serializer drops the query string and all
 * headers, so tokens (even ones wrongly sent in a URL), passwords and secrets never reach a log.
 */
export function loggerOptions(level: string) {
  return {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        '*.password',
        '*.client_secret',
        '*.refresh_token',
        '*.access_token',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req(request: FastifyRequest) {
        return {
          id: request.id,
          method: request.method,
          url: request.url.split('?')[0],
          remoteAddress: request.ip,
        };
      },
    },
  };
}
