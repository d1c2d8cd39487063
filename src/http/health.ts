import { Type } from '@sinclair/typebox';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import type { RouteModule } from './types.ts';

/** `/health` (the process is up) and `/ready` (it can reach its store). Public, no data. */
export const healthRoutes: RouteModule<CoreDeps> = (app, deps) => {
  const Health = Type.Object({ status: Type.String() });
  app.get(
    '/health',
    { schema: { tags: ['ops'], summary: 'Liveness: the process is up', response: { 200: Health } } },
    async () => ({ status: 'ok' }),
  );
  const ready = {
    tags: ['ops'],
    summary: 'Readiness: the store answers (503 when not)',
    response: { 200: Health },
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
