// Taken unchanged from ../shared/peer-bench/peer/ (the peer).
// The POST /notifications body of Herald's contract (API.md section 3) as a Fastify JSON
// schema, compiled once by ajv. Unknown fields are refused (not silently stripped), the
// recipient must fit the channel, and content is either a template or inline content.
const str = (max) => ({ type: 'string', minLength: 1, maxLength: max });

const recipient = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    email: { type: 'string', format: 'email', maxLength: 320 },
    phone: { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$' },
    subscription: {
      type: 'object',
      required: ['endpoint', 'keys'],
      properties: {
        endpoint: { type: 'string', format: 'uri' },
        keys: { type: 'object', required: ['p256dh', 'auth'], properties: { p256dh: str(256), auth: str(256) } },
      },
    },
    deviceToken: str(4096),
    platform: { enum: ['apns', 'fcm'] },
  },
};

const content = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    subject: str(998),
    text: { type: 'string', maxLength: 65536 },
    html: { type: 'string', maxLength: 65536 },
    title: str(1024),
    body: { type: 'string', maxLength: 4096 },
    data: { type: 'object' },
  },
};

const recipientFor = (channel, then) => ({
  if: { properties: { channel: { const: channel } } },
  then: { properties: { recipient: then } },
});

export const notificationBody = {
  type: 'object',
  additionalProperties: false,
  required: ['channel', 'recipient'],
  properties: {
    channel: { enum: ['email', 'sms', 'push'] },
    priority: { enum: ['CRITICAL', 'HIGH', 'NORMAL', 'LOW'], default: 'NORMAL' },
    recipient,
    template: { type: 'string', pattern: '^[a-z0-9][a-z0-9_.-]{0,127}$' },
    content,
    variables: { type: 'object' },
    metadata: { type: 'object' },
    expiresAt: { type: 'string', format: 'date-time' },
    scheduledAt: { type: 'string', format: 'date-time' },
  },
  allOf: [
    recipientFor('email', { required: ['email'] }),
    recipientFor('sms', { required: ['phone'] }),
    recipientFor('push', { anyOf: [{ required: ['subscription'] }, { required: ['deviceToken', 'platform'] }] }),
    { oneOf: [{ required: ['template'] }, { required: ['content'] }] },
  ],
};

export const acceptedReply = {
  type: 'object',
  properties: {
    notificationId: { type: 'string' },
    status: { type: 'string' },
    channel: { type: 'string' },
    priority: { type: 'string' },
    createdAt: { type: 'string' },
  },
};
