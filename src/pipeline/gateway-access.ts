import type { GatewayHandle } from '../http/gateway-handle.js';
import { HttpError } from '../http/errors.js';

/**
 * The gateway's in-process chat, looked up at call time (the gateway may be created after the
 * pipeline, or be absent from this daemon). Absent → 503 with a clear reason.
 */
export function requireGateway(lookup: () => GatewayHandle | undefined): GatewayHandle {
  const g = lookup();
  if (!g || typeof g.chat !== 'function') {
    throw new HttpError(503, 'the model gateway is not running in this daemon; drafting needs it', { code: 'gateway_unavailable' });
  }
  return g;
}

/** Describe a failed chat call for a 502 detail. */
export function chatFailure(what: string, model: string, e: unknown): HttpError {
  const status = (e as { status?: unknown }).status;
  const msg = e instanceof Error ? e.message : String(e);
  const timedOut = (e as { name?: string }).name === 'TimeoutError' || (e as { name?: string }).name === 'AbortError';
  return new HttpError(502, `${what} through model "${model}" failed: ${timedOut ? 'the model did not answer in time' : msg}${typeof status === 'number' ? ` (gateway status ${status})` : ''}`, {
    code: 'upstream_error',
    cause: e,
  });
}
