/**
 * Where the gateway's domain errors get their HTTP status: one table, beside the wire format that
 * renders them (renderGatewayError). Everything else goes through the kit's toHttpError.
 */
import { HttpError, toHttpError } from '../../http/errors.js';
import { GatewayError, type GatewayErrorKind } from '../errors.js';

export const STATUS_OF_KIND: Readonly<Record<GatewayErrorKind, number>> = {
  invalid: 400,
  'not-found': 404,
  forbidden: 403,
  conflict: 409,
  limited: 429,
  'not-configured': 503,
  unavailable: 503,
  remote: 502,
};

/** A domain error as the answer it becomes; undefined for anything that is not one. */
export function domainHttpError(e: unknown): HttpError | undefined {
  if (!(e instanceof GatewayError)) return undefined;
  const headers = e.retryAfterS !== undefined ? { 'Retry-After': String(e.retryAfterS) } : undefined;
  return new HttpError(STATUS_OF_KIND[e.kind], e.message, { code: e.code, cause: e, ...(headers ? { headers } : {}) });
}

/** Anything thrown on the gateway's side, as an HttpError. */
export function gatewayHttpError(e: unknown): HttpError {
  return domainHttpError(e) ?? toHttpError(e);
}
