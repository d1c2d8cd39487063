import { baseEnv, spawnNode } from './proc.ts';

/** The bare Fastify reference server, running in its own process. */
export interface BareServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts bench/bare-server.ts as a child process and waits for its address. */
export async function startBare(): Promise<BareServer> {
  const child = spawnNode(['--import', 'tsx', 'bench/bare-server.ts'], baseEnv(), 'bare fastify');
  const match = await child.waitForLine(/^BARE (http:\/\/\S+)/, 30_000);
  return { url: match[1] as string, stop: () => child.stop(5000) };
}
