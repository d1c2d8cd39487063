// Taken from ../shared/peer-bench/peer/ (the issue's peer), changed only to print its address.
// The peer's API: what a Node team would typically build for Herald's POST /notifications.
// Fastify 5 with the body checked by a compiled JSON schema, jose verifying the ES256 access
// token on every request, and one shared BullMQ Queue on Redis (run with appendfsync always,
// so that the 201, sent after Redis has answered the add, means the job is on disk).
import Fastify from 'fastify';
import { Job, Queue } from 'bullmq';
import { bearerAuth } from './auth.mjs';
import { acceptedReply, notificationBody } from './schema.mjs';
import { JOB_OPTIONS, QUEUE, jobOptions, redisConnection } from './queue.mjs';

const port = Number(process.env.PORT || 3100);
const requireScope = bearerAuth({
  jwks: JSON.parse(process.env.PEER_JWKS),
  issuer: process.env.PEER_ISSUER,
  audience: process.env.PEER_AUDIENCE,
});
const queue = new Queue(QUEUE, { connection: redisConnection(), defaultJobOptions: JOB_OPTIONS });

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
  { onRequest: requireScope('notifications:send'), schema: { body: notificationBody, response: { 201: acceptedReply } } },
  async (request, reply) => {
    const body = request.body;
    const job = await queue.add(body.channel, { ...body, tid: request.principal.tid }, jobOptions(body));
    reply.code(201).header('location', `/notifications/${job.id}`);
    return {
      notificationId: job.id,
      status: 'QUEUED',
      channel: body.channel,
      priority: body.priority,
      createdAt: new Date(job.timestamp).toISOString(),
    };
  },
);

const STATUS = { completed: 'DELIVERED', failed: 'FAILED', active: 'PROCESSING' };

// Not measured; here so that the peer offers the same round trip a client of Herald makes.
app.get('/notifications/:id', { onRequest: requireScope('notifications:read') }, async (request, reply) => {
  const job = await Job.fromId(queue, request.params.id);
  if (!job || job.data.tid !== request.principal.tid) {
    return reply.code(404).type('application/problem+json').send({ title: 'Not Found', status: 404, code: 'NOT_FOUND' });
  }
  const state = await job.getState();
  return {
    notificationId: job.id,
    status: STATUS[state] ?? 'QUEUED',
    channel: job.data.channel,
    priority: job.data.priority,
    attempts: job.attemptsMade,
    createdAt: new Date(job.timestamp).toISOString(),
    processedAt: job.processedOn ? new Date(job.processedOn).toISOString() : null,
    finishedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
  };
});

app.get('/health', async () => ({ status: 'ok' }));

const address = await app.listen({ host: '127.0.0.1', port });
// The bench (bench/lib/peer.ts) reads the address from this line (PORT=0 picks a free port).
console.log(`PEER ${address}`);
process.on('SIGTERM', async () => {
  await app.close();
  await queue.close();
  process.exit(0);
});
