/**
 * The reference for the ingest ratios: a bare Fastify server in its own process that parses the
 * JSON body, answers 201 and does no other work (no auth, no validation, no storage). Prints
 * "BARE http://host:port" once listening. Started by the bench, stopped with SIGTERM.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
const accepted = { notificationId: '00000000-0000-0000-0000-000000000000', status: 'QUEUED' };
app.post('/notifications', async (_request, reply) => reply.code(201).send(accepted));
app.post('/notifications/batch', async (_request, reply) => reply.code(207).send({ results: [] }));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
if (!address || typeof address === 'string') throw new Error('not listening on TCP');
console.log(`BARE http://127.0.0.1:${address.port}`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
