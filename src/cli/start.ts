import { ConfigError, loadConfig } from '../config/config.ts';
import { type Herald, startHerald } from '../main.ts';

/** `herald start`: runs the configured roles until SIGTERM or SIGINT, then shuts down gracefully. */
export async function runStart(_args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  let herald: Herald;
  try {
    config = loadConfig(env);
    herald = await startHerald(config);
  } catch (error) {
    // Configuration problems (also those found at start, like a wrong key secret) get one readable line.
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  const where = [herald.apiUrl && `API ${herald.apiUrl}`, herald.gatewayUrl && `UI ${herald.gatewayUrl}`];
  console.log(`Herald running (${config.roles.join(',')}) ${where.filter(Boolean).join(', ')}`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await herald.close();
  return 0;
}
