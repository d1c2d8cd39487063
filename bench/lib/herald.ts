import { randomBytes } from 'node:crypto';
import { baseEnv, type Child, memoryOf, spawnNode } from './proc.ts';
import { tempDir } from './tmp.ts';

/** The bootstrap admin every benched Herald gets (HERALD_ADMIN_EMAIL / HERALD_ADMIN_PASSWORD). */
export const ADMIN = { email: 'bench-admin@example.com', password: randomBytes(12).toString('hex') };

/** How to start one Herald process. */
export interface HeraldSpec {
  /** Reuse a data directory (a restart); a fresh temporary one by default. */
  dataDir?: string;
  /** HERALD_ROLES; the gateway is left out (it serves the UI, which no scenario measures). */
  roles?: string;
  /** Extra variables, e.g. DATABASE_URL or HERALD_JWKS_URL. */
  env?: Record<string, string>;
  name?: string;
}

/** A Herald started as a user starts it, in its own process. */
export interface HeraldProcess {
  /** What the bench calls it (`herald`, or the deployment's `herald-api-1` and the like). */
  name: string;
  /** The API port's base URL; a worker-only process has none (an empty string). */
  url: string;
  /** The gateway's base URL when the process runs that role (an empty string otherwise). */
  gatewayUrl: string;
  pid: number;
  dataDir: string;
  /** Peak (VmHWM) and current RSS of the process, in MB. */
  memory(): { peakMb: number; currentMb: number } | undefined;
  stop(): Promise<void>;
}

/**
 * Starts `node bin/herald.js start` (what `npm start` runs, without npm in between, so that the
 * pid is Herald's own for /proc/<pid>/status). Port 0: the OS picks a free port, read from the
 * start-up line. LOG_LEVEL=warn: per-request info logs off, as a production deployment runs.
 */
export async function startHerald(spec: HeraldSpec = {}): Promise<HeraldProcess> {
  const dataDir = spec.dataDir ?? tempDir('data');
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    HERALD_DATA_DIR: dataDir,
    HERALD_HOST: '127.0.0.1',
    HERALD_API_PORT: '0',
    HERALD_GATEWAY_PORT: '0',
    HERALD_ROLES: spec.roles ?? 'auth,api,worker',
    HERALD_ADMIN_EMAIL: ADMIN.email,
    HERALD_ADMIN_PASSWORD: ADMIN.password,
    // One token serves the whole run; the default 600 s would expire mid-bench.
    HERALD_ACCESS_TTL: '7200',
    // Several processes verify one another's tokens (PostgreSQL layout): one issuer for all.
    HERALD_JWT_ISSUER: 'http://herald-bench.local',
    LOG_LEVEL: 'warn',
    ...spec.env,
  };
  const name = spec.name ?? 'herald';
  const child: Child = spawnNode(['bin/herald.js', 'start'], env, name);
  let url: string;
  let gatewayUrl: string;
  try {
    const match = await child.waitForLine(/Herald running/, 90_000);
    const address = (label: string) =>
      (new RegExp(`${label} (http://[^\\s,]+)`).exec(match.input)?.[1] ?? '').replace(/[,.]$/, '');
    url = address('API');
    gatewayUrl = address('UI');
  } catch (error) {
    await child.stop(2000);
    throw error;
  }
  return {
    name,
    url,
    gatewayUrl,
    pid: child.pid,
    dataDir,
    memory: () => memoryOf(child.pid),
    stop: () => child.stop(),
  };
}
