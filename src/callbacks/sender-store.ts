import type { CallbackStore } from '../store/port/callbacks.ts';

/**
 * What the callback sender uses of the callback store, in one place: its reads, made on the
 * sender thread's own connection, and its writes, made through the connection of the thread that
 * started it (threaded-sender.ts; on SQLite the one writer).
 */
export const SENDER_READS = ['enabled', 'pendingAmong', 'dueCallbacks'] as const;
export const SENDER_WRITES = ['leaseHead', 'advance', 'claim', 'complete', 'disable', 'prune'] as const;
export type SenderWrite = (typeof SENDER_WRITES)[number];
/** The writes, as the starting thread serves them to the sender's. */
export type SenderWrites = Pick<CallbackStore, SenderWrite>;
export type SenderCallbacks = Pick<CallbackStore, (typeof SENDER_READS)[number] | SenderWrite>;
