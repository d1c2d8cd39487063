import { Type } from '@sinclair/typebox';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { withExample } from './examples.ts';
import type { RouteModule } from './types.ts';

/** `/health` (the process is up) and `/ready` (it can reach its store). Public, no data. */
export const healthRoutes: RouteModule<CoreDeps> = (app, deps) => {
  const Health = Type.Object({ status: Type.String() });
  const Live = withExample(Health, { status: 'ok' });
  const Ready = withExample(Health, { status: 'ready' });
  app.get(
    '/health',
    {
      schema: {
        tags: ['ops'],
        summary: 'Liveness: the process is up',
        description:
          'Public and cheap: answers 200 while the process serves requests, whatever its store does.',
        response: { 200: Live },
      },
    },
    async () => ({ status: 'ok' }),
  );
  const ready = {
    tags: ['ops'],
    summary: 'Readiness: the store answers (503 when not)',
    description:
      'Public: 200 once the process can reach its store (SQLite file or PostgreSQL), else 503 with Retry-After, so a load balancer sends no traffic to it meanwhile.',
    response: { 200: Ready },
  };
  app.get('/ready', { schema: ready }, async () => {
    try {
      await deps.store.ping();
    } catch {
      throw new HeraldError('UNAVAILABLE', 'The store is not reachable.', { retryAfterS: 5 });
    }
    return { status: 'ready' };
  });
};
