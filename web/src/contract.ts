/**
 * The contract's value sets, imported from the server's own modules (pure constants, no Node
 * APIs) rather than copied, so the UI's selects and filters cannot drift from what the API takes.
 */

export { GRANTABLE_SCOPES, isOperator } from '../../src/auth/principal.ts';
export { CHANNELS, type Channel } from '../../src/channels.ts';
export { PRIORITIES, type Priority, STATUSES, TERMINAL_STATUSES } from '../../src/notifications/model.ts';
export { STREAM_RETRY_MS, TOKEN_ENDED_COMMENT } from '../../src/notifications/stream-protocol.ts';

/**
 * The API's answers as the OpenAPI document describes them, from the types generated for
 * @herald/client (`npm run client:generate`): a change of a route's schema fails the UI's
 * typecheck instead of drifting from it.
 */
type Paths = import('../../clients/typescript/src/schema.ts').paths;
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** A row of GET /notifications. */
export type NotificationSummary = Json<Paths['/notifications']['get']['responses'][200]>['items'][number];
/** GET /notifications/{id}: the summary and its events. */
export type NotificationDetail = Json<Paths['/notifications/{id}']['get']['responses'][200]>;
/** GET /notifications/{id}/message: its rendered message (admins). */
export type NotificationMessage = Json<Paths['/notifications/{id}/message']['get']['responses'][200]>;
/** One tenant's quota of GET /admin/quotas: its limits and today's usage. */
export type QuotaView = Json<Paths['/admin/quotas']['get']['responses'][200]>['items'][number];
/** One row of GET /admin/queues. */
export type QueueRow = Json<Paths['/admin/queues']['get']['responses'][200]>['queues'][number];
/** GET /admin/history: delivered, failed and skipped per channel and bucket. */
export type DeliveryHistory = Json<Paths['/admin/history']['get']['responses'][200]>;
/** A message of GET /admin/sandbox. */
export type SandboxItem = Json<Paths['/admin/sandbox']['get']['responses'][200]>['items'][number];
/** GET /admin/sandbox/channels: which channels go to the sandbox. */
export type SandboxChannels = Json<Paths['/admin/sandbox/channels']['get']['responses'][200]>;
/** A template as GET /templates/{key} shows it. */
export type TemplateView = Json<Paths['/templates/{key}']['get']['responses'][200]>;
/** A user of GET /admin/users. */
export type UserView = Json<Paths['/admin/users']['get']['responses'][200]>['items'][number];
/** A service client of GET /admin/clients. */
export type ClientView = Json<Paths['/admin/clients']['get']['responses'][200]>['items'][number];
/** POST /admin/clients: the client and its secret, shown once. */
export type CreatedClient = Json<Paths['/admin/clients']['post']['responses'][201]>;
/** A suppressed recipient of GET /suppressions (masked). */
export type SuppressionItem = Json<Paths['/suppressions']['get']['responses'][200]>['items'][number];
/** A topic as GET /topics/{key} shows it. */
export type TopicView = Json<Paths['/topics/{key}']['get']['responses'][200]>;
/** A subscriber of GET /topics/{key}/subscribers. */
export type SubscriberItem = Json<
  Paths['/topics/{key}/subscribers']['get']['responses'][200]
>['items'][number];
/** POST /topics/{key}/subscribers: how many were added, and the refused IDs. */
export type Subscribed = Json<Paths['/topics/{key}/subscribers']['post']['responses'][200]>;
/** GET /broadcasts/{id}: its progress and its notifications' counts. */
export type BroadcastView = Json<Paths['/broadcasts/{id}']['get']['responses'][200]>;
/** POST /broadcasts: the 201. */
export type BroadcastAccepted = Json<Paths['/broadcasts']['post']['responses'][201]>;
/** One status change, as GET /notifications/stream sends it (the `data` of a `status` event). */
export type { StatusChange } from '../../src/notifications/changes.ts';
export {
  optedOut,
  PREFERENCE_CHANNELS,
  type PreferenceChannel,
} from '../../src/recipients/model.ts';
/** A category of GET /categories. */
export type CategoryItem = Json<Paths['/categories']['get']['responses'][200]>['items'][number];
/** GET /recipients/{recipientId}/preferences: the recipient's own choices. */
export type PreferencesView = Json<Paths['/recipients/{recipientId}/preferences']['get']['responses'][200]>;
/**
 * GET /recipients/{recipientId} as docs/recipients.md gives it. Written here by hand while that route
 * (issue #50's recipients API) is built beside this page; its generated type replaces this.
 */
export interface RecipientView {
  recipientId: string;
  email: string | null;
  phone: string | null;
  push: unknown[] | null;
  locale: string | null;
  timezone: string | null;
  name: string | null;
  data: Record<string, unknown> | null;
  preferencesUrl: string;
  createdAt: string;
  updatedAt: string;
}
/** A workflow as GET /workflows/{key} shows it (its current version). */
export type WorkflowView = Json<Paths['/workflows/{key}']['get']['responses'][200]>;
/** A run of a workflow, with the timeline of its steps (GET /workflow-runs/{runId}). */
export type WorkflowRunView = Json<Paths['/workflow-runs/{runId}']['get']['responses'][200]>;
/** POST /workflows/{key}/trigger: the runs it made and the recipients it refused. */
export type TriggerAccepted = Json<Paths['/workflows/{key}/trigger']['post']['responses'][201]>;
export {
  durationMs,
  FINAL_RUN_STATUSES,
  RUN_STATUSES,
} from '../../src/workflows/model.ts';
