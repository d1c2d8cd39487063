-- Consecutive holds of a notification (claimed, then given back without a provider call:
-- rate limit, open circuit, paused provider, shutdown). The status machine writes one THROTTLED
-- event per run of holds, not one per claim, and turns a hold past the cap into a failed attempt
-- (src/notifications/status.ts, src/dispatch/deliver.ts). Any other transition resets it.
ALTER TABLE notifications ADD COLUMN holds INTEGER NOT NULL DEFAULT 0;
