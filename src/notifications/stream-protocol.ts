/**
 * What the live status stream and its clients agree on besides the SSE format itself (the
 * server's route, stream-route.ts, and the web UI's reader, web/src/stream.ts): plain constants,
 * so the web bundle can import them.
 */

/** How long a client waits before it reconnects after a drop (the SSE `retry` field). */
export const STREAM_RETRY_MS = 2000;

/**
 * The comment a stream ends with once its access token has expired or its signing key was
 * removed: nothing is wrong but the token, so a client reconnects at once with a new one.
 */
export const TOKEN_ENDED_COMMENT = ': the access token has expired or been revoked: reconnect with a new one';
