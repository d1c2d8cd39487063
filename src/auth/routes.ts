import type { RouteModule } from '../http/types.ts';
import { jwksRoute } from './jwks-route.ts';
import { loginRoutes } from './login-routes.ts';
import type { AuthDeps } from './service.ts';
import { setupRoute } from './setup-route.ts';
import { tokenRoute } from './token-route.ts';

export { adminAccountRoutes } from './admin-routes.ts';
export { meRoute } from './me-route.ts';
export { sessionRoutes } from './session-routes.ts';

/** The auth role's public routes: login, refresh, client credentials, the JWKS and whether setup is needed. */
export const authPublicRoutes: RouteModule<AuthDeps> = async (app, deps) => {
  await loginRoutes(app, deps);
  await tokenRoute(app, deps);
  await jwksRoute(app, deps);
  await setupRoute(app, deps);
};
