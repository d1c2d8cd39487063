/**
 * Rendering bounds besides its time (HERALD_RENDER_TIMEOUT_MS), as the README states them: their
 * one home (fixed, not configuration), apart from config/ so a render thread loads only Liquid.
 */
export const RENDER_LIMITS = {
  /** Most UTF-8 bytes all the rendered fields of one notification may have together. */
  outputBytes: 256 * 1024,
  /** Most items of a range a loop may go over. */
  maxRange: 10_000,
} as const;
