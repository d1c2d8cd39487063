// #49.3: a taken port ends `herald start` with one line naming the port and its variable, a
// non-zero exit, and the other port closed again.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { describe, it } from 'node:test';
import { PortUnavailableError } from '../../src/http/listen.ts';
import { startHerald } from '../../src/main.ts';
import { tempDir, testConfig } from '../helpers/config.ts';
import { runHerald } from '../helpers/herald-process.ts';
import { freePort } from '../helpers/ports.ts';

/** A server holding a port of 127.0.0.1, as another program would. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as { port: number }).port, server };
}

/** Whether something listens on `port` of 127.0.0.1. */
async function listening(port: number): Promise<boolean> {
  const probe = createServer();
  probe.listen(port, '127.0.0.1');
  const [event] = await Promise.race([once(probe, 'listening').then(() => ['free']), once(probe, 'error')]);
  if (event === 'free') {
    probe.close();
    return false;
  }
  return true;
}

const base = (api: number, gateway: number) => ({
  HERALD_HOST: '127.0.0.1',
  HERALD_API_PORT: String(api),
  HERALD_GATEWAY_PORT: String(gateway),
  HERALD_DATA_DIR: tempDir(),
  LOG_LEVEL: 'warn',
});

describe('a taken port', () => {
  for (const which of ['HERALD_API_PORT', 'HERALD_GATEWAY_PORT'] as const) {
    it(`${which}: herald start says which port and variable in one line and exits non-zero`, async () => {
      const taken = await holdPort();
      try {
        const other = await freePort();
        const env = which === 'HERALD_API_PORT' ? base(taken.port, other) : base(other, taken.port);
        const result = await runHerald(['start'], env);
        assert.notEqual(result.code, 0, result.output);
        const lines = result.output.trim().split('\n');
        const line = lines.find((l) => l.includes(String(taken.port)));
        assert.equal(
          line,
          `Cannot listen on 127.0.0.1:${taken.port}: the port is in use by another process. Set ${which} to another port (0 picks a free one).`,
        );
        assert.doesNotMatch(result.output, /EADDRINUSE|^\s+at /m, 'no stack trace');
      } finally {
        taken.server.close();
      }
    });
  }

  it('closes the API port it had opened when the gateway port is taken', async () => {
    const taken = await holdPort();
    const api = await freePort();
    try {
      await assert.rejects(
        startHerald(testConfig({ ...base(api, taken.port), LOG_LEVEL: 'silent' })),
        (error) => error instanceof PortUnavailableError && /HERALD_GATEWAY_PORT/.test(error.message),
      );
      assert.equal(await listening(api), false, `port ${api} is still open`);
    } finally {
      taken.server.close();
    }
  });
});
