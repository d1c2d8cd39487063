import { ConfigError, loadConfig } from '../config/config.ts';
import { startHerald } from '../server.ts';

/** `herald start`: runs the configured roles until SIGTERM or SIGINT, then shuts down gracefully. */
export async function runStart(_args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  const herald = await startHerald(config);
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
