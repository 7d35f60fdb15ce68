/**
 * The gateway's domain error: what a service means when it refuses or fails, without HTTP. A closed
 * set of kinds, each documented where it is declared (as UpstreamErrorKind is); the API edge chooses
 * the status (routes/errors.ts), so a service stays callable from jobs, tests and the in-process
 * handle without HTTP meaning.
 */
export type GatewayErrorKind =
  /** The request, or a document it names (a manifest, a schema), is malformed or refers to nothing valid. */
  | 'invalid'
  /** What the request names does not exist (for this caller). */
  | 'not-found'
  /** It exists, but its state forbids the request (a skill that is off). */
  | 'conflict'
  /** A feature the request needs is not configured by the operator. */
  | 'not-configured'
  /** A part of the gateway it depends on cannot answer now (a worker lane, shared storage). */
  | 'unavailable'
  /** A remote source the request fetches from (a registry, a URL) failed or answered nonsense. */
  | 'remote';

export class GatewayError extends Error {
  readonly kind: GatewayErrorKind;
  /** A stable machine code for clients (`skill_not_found`, `invalid_manifest`…). */
  readonly code: string;

  constructor(kind: GatewayErrorKind, message: string, opts: { code: string; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'GatewayError';
    this.kind = kind;
    this.code = opts.code;
  }
}
