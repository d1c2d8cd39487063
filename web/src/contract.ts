/**
 * The contract's value sets, imported from the server's own modules (pure constants, no Node
 * APIs) rather than copied, so the UI's selects and filters cannot drift from what the API takes.
 */

export { SCOPES } from '../../src/auth/principal.ts';
export { CHANNELS, type Channel } from '../../src/channels.ts';
export { PRIORITIES, type Priority, STATUSES } from '../../src/notifications/model.ts';
