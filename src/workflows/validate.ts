import { type FieldError, HeraldError } from '../errors.ts';
import { fieldMessage, MAX_FIELD_ERRORS, oneOf } from '../http/field-messages.ts';
import { priorityRank } from '../notifications/model.ts';
import { schemaErrors, validateNotification } from '../notifications/validate.ts';
import type { Store } from '../store/port/index.ts';
import { liquidSources } from '../templates/fields.ts';
import type { SyntaxCheck } from '../templates/syntax-check.ts';
import {
  DURATION_MESSAGE,
  durationMs,
  MAX_STEPS,
  type SendStep,
  STEP_TYPES,
  type StepType,
  type WorkflowDefinition,
  type WorkflowStep,
} from './model.ts';
import { outerChecker, stepCheckers } from './schemas.ts';

/** What checking a definition reads: the tenant's templates, and Liquid's parser in the render threads. */
export interface WorkflowCheckDeps {
  store: Pick<Store, 'templates'>;
  syntax: SyntaxCheck;
}

/** The run's recipient stands in for a send's recipient: a send goes to a person, `{ id }`. */
const STAND_IN = { id: 'workflow-run' };

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One send step's errors under `path`: its `type` and `if` here; its channel, template XOR content
 * and the content's fields by the notification's own rules and wording (notifications/validate.ts),
 * as a broadcast's are.
 */
function sendErrors(step: Record<string, unknown>, path: string, errors: FieldError[]): void {
  if (!stepCheckers.send.Check(step)) schemaErrors(stepCheckers.send, step, path, errors);
  const { type: _type, if: _if, ...notification } = step;
  const checked = validateNotification({ ...notification, recipient: STAND_IN }, path, 0);
  if (Array.isArray(checked)) errors.push(...checked);
}

/** One step's errors under `path` (e.g. `body/steps/2`): its shape, and what its shape cannot say. */
function stepErrors(step: unknown, path: string, errors: FieldError[]): void {
  if (!isObject(step)) {
    errors.push({ path, message: fieldMessage({ keyword: 'type', params: { type: 'object' } }) });
    return;
  }
  const kind = step.type;
  if (kind === undefined) {
    // Where TypeBox's checks put a missing property: at the property (schemaErrors).
    errors.push({
      path: `${path}/type`,
      message: fieldMessage({ keyword: 'required', params: { missingProperty: 'type' } }),
    });
    return;
  }
  if (typeof kind !== 'string' || !(STEP_TYPES as readonly string[]).includes(kind)) {
    errors.push({ path: `${path}/type`, message: oneOf(STEP_TYPES) });
    return;
  }
  if (kind === 'send') {
    sendErrors(step, path, errors);
    return;
  }
  const checker = stepCheckers[kind as StepType];
  const before = errors.length;
  if (!checker.Check(step)) schemaErrors(checker, step, path, errors);
  // The schema says a duration is a string; its form and bounds are durationMs's.
  const forPath = `${path}/for`;
  if (
    typeof step.for === 'string' &&
    !errors.slice(before).some((e) => e.path === forPath) &&
    durationMs(step.for) === undefined
  ) {
    errors.push({ path: forPath, message: DURATION_MESSAGE });
  }
}

/**
 * Every error of a definition's shape (paths under `body`, MAX_FIELD_ERRORS at most): the outer
 * fields, then each step by its kind. Pure: nothing read.
 */
export function definitionErrors(body: unknown): FieldError[] {
  if (!isObject(body))
    return [{ path: 'body', message: fieldMessage({ keyword: 'type', params: { type: 'object' } }) }];
  const errors: FieldError[] = [];
  if (!outerChecker.Check(body)) schemaErrors(outerChecker, body, 'body', errors);
  if (Array.isArray(body.steps)) {
    // Past MAX_STEPS the list is refused whole (maxItems); its first steps are still checked.
    for (const [i, step] of body.steps.slice(0, MAX_STEPS).entries()) {
      if (errors.length >= MAX_FIELD_ERRORS) break;
      stepErrors(step, `body/steps/${i}`, errors);
    }
  }
  return errors.slice(0, MAX_FIELD_ERRORS);
}

/**
 * What only the tenant's data can say of well-formed send steps (`sends`, by index): each
 * template exists and is of the step's channel, and each inline content's Liquid parses (in the
 * render threads, at NORMAL, as a template's save does).
 */
async function referenceErrors(
  tenant: string,
  sends: ReadonlyArray<{ step: SendStep; i: number }>,
  deps: WorkflowCheckDeps,
): Promise<FieldError[]> {
  const keys = [
    ...new Set(sends.flatMap(({ step }) => (step.template === undefined ? [] : [step.template]))),
  ];
  const templates = new Map(
    await Promise.all(keys.map(async (key) => [key, await deps.store.templates.get(tenant, key)] as const)),
  );
  const errors: FieldError[] = [];
  for (const { step, i } of sends) {
    if (step.template !== undefined && templates.get(step.template)?.channel !== step.channel) {
      errors.push({
        path: `body/steps/${i}/template`,
        message: `must name ${article(step.channel)} ${step.channel} template of your tenant`,
      });
    }
  }
  const inline = sends.flatMap(({ step, i }) =>
    step.content === undefined ? [] : [{ content: step.content, i }],
  );
  const problems = await deps.syntax(
    tenant,
    inline.map(({ content, i }) => ({
      sources: liquidSources(content),
      prefix: `body/steps/${i}/content`,
      rank: priorityRank('NORMAL'),
    })),
  );
  return [...errors, ...problems.flat()];
}

/**
 * The definition a PUT body saves, once every rule holds (docs/workflows.md#validation); else a
 * 400 VALIDATION_FAILED listing every error, by step and field: the shape's, and the templates'
 * and Liquid's of every send step whose shape is right. Nothing is stored before this.
 */
export async function checkDefinition(
  tenant: string,
  body: unknown,
  deps: WorkflowCheckDeps,
): Promise<WorkflowDefinition> {
  const errors = definitionErrors(body);
  const steps = isObject(body) && Array.isArray(body.steps) ? (body.steps as WorkflowStep[]) : [];
  const faulty = (i: number) =>
    errors.some((e) => e.path === `body/steps/${i}` || e.path.startsWith(`body/steps/${i}/`));
  const sends = steps
    .slice(0, MAX_STEPS)
    .flatMap((step, i) => (!faulty(i) && step.type === 'send' ? [{ step, i }] : []));
  if (errors.length < MAX_FIELD_ERRORS) errors.push(...(await referenceErrors(tenant, sends, deps)));
  if (errors.length > 0) {
    throw new HeraldError('VALIDATION_FAILED', 'The workflow is invalid.', {
      errors: errors.slice(0, MAX_FIELD_ERRORS),
    });
  }
  const { name, category } = body as { name?: string; category?: string };
  return { name: name ?? null, category: category ?? null, steps };
}
