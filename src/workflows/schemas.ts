import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CHANNELS } from '../channels.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { describedPattern } from '../http/field-messages.ts';
import { PageSchema } from '../http/page.ts';
import { literals, nullable } from '../http/schema.ts';
import { CategoryName, CONTENT_SCHEMAS } from '../notifications/schemas.ts';
import type { Checker } from '../notifications/validate.ts';
import { TemplateKey } from '../templates/key.ts';
import { MAX_STEPS, SEND_CONDITIONS, type StepType, VARIABLE_NAME, WORKFLOW_KEY } from './model.ts';

// The schemas of a workflow definition (docs/workflows.md): what the OpenAPI document shows, and
// the compiled checks validate.ts runs, one per step kind, so that a bad step's errors name its
// own fields and not every branch of a union.

const strict = { additionalProperties: false } as const;

/** The key of a workflow. */
export const WorkflowKey = Type.String({
  pattern: describedPattern(
    WORKFLOW_KEY.source,
    'must be a workflow key: 1 to 100 letters, digits, dots, dashes or underscores, starting with a letter or digit',
  ),
  examples: ['comment-follow-up'],
});

export const Duration = Type.String({
  maxLength: 40,
  description:
    'An ISO 8601 duration of weeks (P2W) or days, hours, minutes and seconds (P1DT2H, PT10M, PT30S): more than 0, at most 30 days.',
});

const VariableKey = Type.String({
  description: "The name of one of the trigger's variables, whose value keeps its own digest or window.",
  pattern: describedPattern(
    VARIABLE_NAME.source,
    'must be a variable name: 1 to 64 letters, digits or underscores, not starting with a digit',
  ),
});

const IF_DESCRIPTION =
  'Send only if, when the run reaches this step: `not_read`, no in-app message sent earlier in this run was read; `not_delivered`, none of its notifications is DELIVERED; `failed`, one of them ended FAILED or SKIPPED. Otherwise the step is SKIPPED and the run goes on.';

/** A send step of one channel, its content that channel's (documentation: validate.ts checks it with the notification's rules). */
const sendOf = (channel: (typeof CHANNELS)[number]) =>
  Type.Object(
    {
      type: Type.Literal('send'),
      channel: Type.Literal(channel),
      template: Type.Optional({
        ...TemplateKey,
        description: `A ${channel} template's key (give this or content).`,
      }),
      content: Type.Optional(CONTENT_SCHEMAS[channel]),
      if: Type.Optional({ ...literals(SEND_CONDITIONS), description: IF_DESCRIPTION }),
    },
    strict,
  );

export const DelayStep = Type.Object({ type: Type.Literal('delay'), for: Duration }, strict);
export const DigestStep = Type.Object(
  { type: Type.Literal('digest'), for: Duration, key: Type.Optional(VariableKey) },
  strict,
);
export const ThrottleStep = Type.Object(
  {
    type: Type.Literal('throttle'),
    limit: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    for: Duration,
    key: Type.Optional(VariableKey),
  },
  strict,
);

/** One step, as documented: a send per channel, a delay, a digest or a throttle. */
export const WorkflowStepSchema = Type.Union([...CHANNELS.map(sendOf), DelayStep, DigestStep, ThrottleStep]);

const Name = Type.String({ minLength: 1, maxLength: 200 });
const STEPS_DESCRIPTION = `Run in order, 1 to ${MAX_STEPS} of them.`;
const CATEGORY_DESCRIPTION =
  "The category of the workflow's notifications: the recipient's preferences for it apply (docs/preferences.md).";

const STEPS_EXAMPLE = [
  { type: 'send' as const, channel: 'inapp' as const, template: 'comment' },
  { type: 'delay' as const, for: 'PT10M' },
  { type: 'send' as const, channel: 'email' as const, template: 'comment-email', if: 'not_read' as const },
];

/** The body of PUT /workflows/{key}, as documented. */
export const WorkflowBody = withExample(
  Type.Object(
    {
      name: Type.Optional(Name),
      category: Type.Optional({ ...CategoryName, description: CATEGORY_DESCRIPTION }),
      steps: Type.Array(WorkflowStepSchema, {
        minItems: 1,
        maxItems: MAX_STEPS,
        description: STEPS_DESCRIPTION,
      }),
    },
    strict,
  ),
  { name: 'Comment, then email if unread', category: 'comments', steps: STEPS_EXAMPLE },
);

/** The body's outer fields, checked before each step (validate.ts). */
export const outerChecker = TypeCompiler.Compile(
  Type.Object(
    {
      name: Type.Optional(Name),
      category: Type.Optional(CategoryName),
      steps: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_STEPS }),
    },
    strict,
  ),
);

/**
 * A send step's own fields: `type` and `if`; its channel, template and content are a
 * notification's, checked by the notification's rules (validate.ts).
 */
const SendOwn = Type.Object(
  {
    type: Type.Literal('send'),
    channel: Type.Optional(Type.Unknown()),
    template: Type.Optional(Type.Unknown()),
    content: Type.Optional(Type.Unknown()),
    if: Type.Optional(literals(SEND_CONDITIONS)),
  },
  strict,
);

/** The compiled check of each step kind. */
export const stepCheckers: Record<StepType, Checker> = {
  send: TypeCompiler.Compile(SendOwn),
  delay: TypeCompiler.Compile(DelayStep),
  digest: TypeCompiler.Compile(DigestStep),
  throttle: TypeCompiler.Compile(ThrottleStep),
};

/** A workflow as the API shows it (routes.ts `workflowView`). */
export const WorkflowView = withExample(
  Type.Object({
    key: Type.String(),
    name: nullable(Type.String()),
    category: nullable(Type.String()),
    version: Type.Integer({ description: 'Runs keep the version they started with.' }),
    steps: Type.Array(WorkflowStepSchema),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  }),
  {
    key: 'comment-follow-up',
    name: 'Comment, then email if unread',
    category: 'comments',
    version: 2,
    steps: STEPS_EXAMPLE,
    createdAt: '2026-11-28T09:00:00.000Z',
    updatedAt: '2026-11-28T09:05:00.000Z',
  },
);

export const WorkflowList = withExample(PageSchema(WorkflowView), {
  items: [exampleOf(WorkflowView)],
  nextCursor: null,
});
