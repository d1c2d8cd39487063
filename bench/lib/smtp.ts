import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerEnvelope } from 'smtp-server';

/**
 * A local SMTP server for the scenarios that send email: every message is read, then
 * `answer` decides when it is accepted (after `delayMs`), from its envelope.
 */
export async function startSmtp(
  answer: (envelope: SMTPServerEnvelope) => number,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        const delayMs = answer(session.envelope);
        if (delayMs > 0) setTimeout(() => callback(null, 'OK'), delayMs);
        else callback(null, 'OK');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
