// The image's HEALTHCHECK (Containerfile): exits 0 when this container's Herald answers. A process
// with the auth or api role is asked GET /health on HERALD_API_PORT; a gateway alone, its web UI
// on HERALD_GATEWAY_PORT (it has no /health of its own, and asking the API through it would mark
// it unhealthy whenever the API is); a worker alone serves no HTTP, so running is all it can show.
const env = process.env;
const roles = (env.HERALD_ROLES ?? 'auth,api,worker,gateway').split(',').map((role) => role.trim());
// Herald listens on HERALD_HOST; a wildcard address is reached through loopback.
const listen = env.HERALD_HOST ?? '127.0.0.1';
const local = listen === '0.0.0.0' || listen === '' ? '127.0.0.1' : listen === '::' ? '::1' : listen;
const host = local.includes(':') ? `[${local}]` : local;

let url;
if (roles.includes('api') || roles.includes('auth'))
  url = `http://${host}:${env.HERALD_API_PORT ?? 8080}/health`;
else if (roles.includes('gateway')) url = `http://${host}:${env.HERALD_GATEWAY_PORT ?? 3000}/`;
else process.exit(0);

try {
  const response = await fetch(url, { signal: AbortSignal.timeout(4000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
