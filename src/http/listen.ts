import type { FastifyInstance } from 'fastify';

/**
 * A port this process could not listen on: one line for the person starting Herald, naming the
 * port and the variable that moves it (src/cli/start.ts prints it instead of a stack trace).
 */
export class PortUnavailableError extends Error {
  constructor(port: number, host: string, variable: string, reason: string) {
    super(
      `Cannot listen on ${host}:${port}: ${reason}. Set ${variable} to another port (0 picks a free one).`,
    );
    this.name = 'PortUnavailableError';
  }
}

const REASONS: Record<string, string> = {
  EADDRINUSE: 'the port is in use by another process',
  EACCES: 'this user may not listen on the port',
  EADDRNOTAVAIL: 'the address is not one of this machine’s',
};

/** Listens on `host:port`; a port in use or refused becomes a PortUnavailableError naming `variable`. */
export async function listenOn(
  app: FastifyInstance,
  host: string,
  port: number,
  variable: string,
): Promise<void> {
  try {
    await app.listen({ host, port });
  } catch (error) {
    const reason = REASONS[(error as NodeJS.ErrnoException).code ?? ''];
    if (reason) throw new PortUnavailableError(port, host, variable, reason);
    throw error;
  }
}
