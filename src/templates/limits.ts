/**
 * Rendering bounds besides its time (HERALD_RENDER_TIMEOUT_MS), as the README states them. Kept apart from
 * config/schema.ts (whose FIXED section re-exports them) so a render thread loads only Liquid.
 */
export const RENDER_LIMITS = {
  /** Most UTF-8 bytes all the rendered fields of one notification may have together. */
  outputBytes: 256 * 1024,
  /** Most items of a range a loop may go over. */
  maxRange: 10_000,
} as const;
