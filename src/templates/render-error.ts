import { HeraldError } from '../errors.ts';

/**
 * A permanent rendering failure (missing variable, missing template version, bad syntax, or a
 * render limit: time, output size, range). The scheduler fails the notification at once, with
 * `message` as the event detail; a preview answers 400, or 422 RENDER_LIMIT when `limit`.
 */
export class RenderError extends Error {
  /** The content field that failed (`html`, `subject`...), when one did. */
  readonly field: string | undefined;
  /** A render limit (time, output size, range) rather than a template or variables problem. */
  readonly limit: boolean;
  constructor(message: string, field?: string, limit = false) {
    super(message);
    this.name = 'RenderError';
    this.field = field;
    this.limit = limit;
  }
}

/**
 * A render whose thread never had its time on a CPU (render-pool.ts): nothing is known of the
 * template, so it is no RenderError. A delivery retries it with backoff; a preview, a syntax
 * check or an inbox message answers 503 with Retry-After.
 */
export const renderBusy = (message: string) => new HeraldError('UNAVAILABLE', message, { retryAfterS: 1 });
