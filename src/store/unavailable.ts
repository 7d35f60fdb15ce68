/**
 * Shared state (ctl.yaml `storage:`) cannot be reached now: the request that needed it is answered
 * 503 at once, never left to hang. Its own module, so an API can recognise it without loading `pg`.
 */
export class StorageUnavailable extends Error {
  readonly status = 503;
  constructor(what: string, cause?: unknown) {
    super(`${what} is unavailable${cause instanceof Error ? `: ${cause.message}` : ''}`);
  }
}
