/**
 * One error type for every API. Handlers throw HttpError (or let the kit throw it);
 * each component renders it in its own wire format (see ComponentInstance.renderError).
 */
import { StorageUnavailable } from '../store/unavailable.js';

export class HttpError extends Error {
  readonly status: number;
  /** Optional machine code some APIs carry (Alertmanager's 602, the node envelope's 1001, ...). */
  readonly code?: string | number;
  /** Optional extra headers to send with the error (Allow, Retry-After, ...). */
  readonly headers?: Record<string, string>;
  /** Optional API-specific payload a renderer may use. */
  readonly details?: unknown;

  constructor(
    status: number,
    message: string,
    opts: { code?: string | number; headers?: Record<string, string>; details?: unknown; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'HttpError';
    this.status = status;
    this.code = opts.code;
    this.headers = opts.headers;
    this.details = opts.details;
  }
}

export const badRequest = (message: string, opts?: ConstructorParameters<typeof HttpError>[2]) =>
  new HttpError(400, message, opts);
export const unauthorized = (message = 'unauthorized') => new HttpError(401, message);
export const forbidden = (message = 'not authorized') => new HttpError(403, message);
export const notFound = (message = 'not found') => new HttpError(404, message);
export const conflict = (message: string) => new HttpError(409, message);
export const payloadTooLarge = (message = 'request body too large') => new HttpError(413, message);
export const unsupportedMediaType = (message: string) => new HttpError(415, message);
export const unavailable = (message = 'unavailable') => new HttpError(503, message);

/**
 * Normalise anything thrown into an HttpError: shared storage that cannot be reached is 503 (at
 * once, in every API's own format); unknown errors become 500 with a generic message.
 */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof StorageUnavailable) return new HttpError(503, err.message, { cause: err });
  return new HttpError(500, err instanceof Error ? err.message : String(err), { cause: err });
}
