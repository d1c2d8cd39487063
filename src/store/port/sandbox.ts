import type { Channel, Content, Recipient } from '../../notifications/model.ts';
import type { ScannedPage } from './scanned-page.ts';

/** One message the sandbox provider accepted (unmasked; routes mask the recipient). */
export interface SandboxMessage {
  id: number;
  notificationId: string;
  tenant: string;
  channel: Channel;
  recipient: Recipient;
  content: Content;
  attempt: number;
  at: number;
}

/** Filters of GET /admin/sandbox. `tenant` undefined lists every tenant. */
export interface SandboxQuery {
  tenant?: string;
  channel?: Channel;
  notificationId?: string;
  /** Newest first; rows with id < before. */
  before?: number;
  limit: number;
}

/** The sandbox's stored messages (written by QueueStore.cycle with their DELIVERED completion). */
export interface SandboxStore {
  /** Newest first, at most `limit`; with a channel and no notification, LIST_SCAN rows looked at at most. */
  list(query: SandboxQuery): Promise<ScannedPage<SandboxMessage>>;
}
