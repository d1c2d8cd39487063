// Taken from ../shared/peer-bench/peer-pg/ (the issue's PostgreSQL peer), changed only to print its address.
// The PostgreSQL peer's API: what a Node team on PostgreSQL would typically build for Herald's
// POST /notifications. The same Fastify 5 app as the BullMQ peer (../peer: the compiled JSON
// schema, jose verifying the ES256 token on every request), with graphile-worker as the queue:
// one WorkerUtils (makeWorkerUtils, a pg pool of graphile-worker's default 10 connections) adds
// the job, and the 201 goes out once add_job's INSERT has committed (synchronous_commit on).
import Fastify from 'fastify';
import { makeWorkerUtils } from 'graphile-worker';
import { bearerAuth } from '../peer/auth.mjs';
import { acceptedReply, notificationBody } from '../peer/schema.mjs';
import { jobSpec, makeLogger, TASK } from './jobs.mjs';

const port = Number(process.env.PORT || 3200);
const requireScope = bearerAuth({
  jwks: JSON.parse(process.env.PEER_JWKS),
  issuer: process.env.PEER_ISSUER,
  audience: process.env.PEER_AUDIENCE,
});
const utils = await makeWorkerUtils({ connectionString: process.env.DATABASE_URL, logger: makeLogger() });
await utils.migrate(); // installs or updates the graphile_worker schema

const app = Fastify({
  logger: { level: process.env.LOG_LEVEL || 'warn' },
  bodyLimit: 65536,
  ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
});

app.setErrorHandler((err, request, reply) => {
  const status = err.validation ? 400 : err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 503;
  if (status >= 500) request.log.error(err);
  reply
    .code(status)
    .type('application/problem+json')
    .send({
      type: 'about:blank',
      title: status === 400 ? 'Bad Request' : status >= 500 ? 'Service Unavailable' : err.code || 'Error',
      status,
      code: err.validation ? 'VALIDATION_FAILED' : status >= 500 ? 'UNAVAILABLE' : err.code || 'BAD_REQUEST',
      detail: status >= 500 ? undefined : err.message,
      errors: err.validation?.map((v) => ({ path: v.instancePath || '/', message: v.message })),
    });
});

app.post(
  '/notifications',
  {
    onRequest: requireScope('notifications:send'),
    schema: { body: notificationBody, response: { 201: acceptedReply } },
  },
  async (request, reply) => {
    const body = request.body;
    const job = await utils.addJob(TASK, { ...body, tid: request.principal.tid }, jobSpec(body));
    reply.code(201).header('location', `/notifications/${job.id}`);
    return {
      notificationId: String(job.id),
      status: 'QUEUED',
      channel: body.channel,
      priority: body.priority,
      createdAt: job.created_at.toISOString(),
    };
  },
);

// No GET /notifications/{id}: graphile-worker deletes a job once it has run, so a status to read
// back would need a table of the peer's own (see the bench README).

app.get('/health', async () => ({ status: 'ok' }));

const address = await app.listen({ host: '127.0.0.1', port });
// The bench (bench/lib/peer-pg.ts) reads the address from this line (PORT=0 picks a free port).
console.log(`PEER ${address}`);
process.on('SIGTERM', async () => {
  await app.close();
  await utils.release();
  process.exit(0);
});
