import { connect, type Socket } from 'node:net';

/** nodemailer's `getSocket` option: hands the pool the socket of a new connection. */
export type GetSocket = (
  options: unknown,
  callback: (error: null, socket: { connection: Socket }) => void,
) => void;

/**
 * Opens the pool's TCP connections with Nagle's algorithm off. nodemailer writes a message's
 * DATA in more than one piece and the server answers only after the final dot, so with Nagle on
 * the last piece waited for the server's delayed ACK: 44 ms per message on loopback (p50 of 30
 * sequential sends to smtp-server; 0.9 ms without), whatever the message, which capped a pool of
 * 5 connections near 110 messages a second and put 40 ms into every CRITICAL email. nodemailer
 * has no option for it, so Herald opens the socket and nodemailer speaks SMTP (and TLS, for
 * smtps://) over it.
 *
 * The socket is handed over while it is still connecting, never as an error: nodemailer's own
 * handlers then see a refused or failed connection as on a socket it opened itself (the pool
 * drops that connection). An error passed to the callback instead left the pool's slot taken
 * for good, and after `maxConnections` refusals the pool never connected again. A connection
 * that hangs is ended by nodemailer's greeting timeout.
 */
export function connectWithoutDelay(host: string, port: number): GetSocket {
  return (_options, callback) => callback(null, { connection: connect({ host, port, noDelay: true }) });
}
