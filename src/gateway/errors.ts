/**
 * The gateway's domain error: what a service means when it refuses or fails, without HTTP. A closed
 * set of kinds, each documented where it is declared (as UpstreamErrorKind is); the API edge chooses
 * the status (routes/errors.ts), so a service stays callable from jobs, tests and the in-process
 * handle without HTTP meaning.
 *
 * Not kinds, on purpose: who the caller is (401, decided by src/gateway/auth.ts at the edge), a body
 * too large to read (413, the transport's limit) and a caller that went away (499): these belong to
 * the request as it arrives, not to what a service decides. Failures of an upstream model provider
 * are UpstreamError (providers/errors.ts), which the attempt loop classifies for fallback.
 */
export type GatewayErrorKind =
  /** The request, or a document it names (a manifest, a schema), is malformed or refers to nothing valid. */
  | 'invalid'
  /** What the request names does not exist (for this caller). */
  | 'not-found'
  /** The caller is known, but a rule forbids this to them (a policy, a key's model allowance). */
  | 'forbidden'
  /** It exists, but its state forbids the request (a skill that is off, a task already finished). */
  | 'conflict'
  /** A quota, rate or budget is used up for now (the caller's own, or one a remote source holds the gateway to); retryAfterS says when to come back. */
  | 'limited'
  /** A feature the request needs is not configured (or is switched off) by the operator. */
  | 'not-configured'
  /** A part of the gateway it depends on cannot answer now (a worker lane, shared storage). */
  | 'unavailable'
  /** A remote source the request fetches from or acts through (a registry, an OAuth server) failed or answered nonsense. */
  | 'remote';

export interface GatewayErrorOptions {
  /** A stable machine code for clients (`skill_not_found`, `invalid_manifest`…); absent where the API never sent one. */
  code?: string;
  /** For 'limited': whole seconds until the caller may try again. */
  retryAfterS?: number;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly kind: GatewayErrorKind;
  readonly code?: string;
  readonly retryAfterS?: number;

  constructor(kind: GatewayErrorKind, message: string, opts: GatewayErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'GatewayError';
    this.kind = kind;
    this.code = opts.code;
    this.retryAfterS = opts.retryAfterS;
  }
}

/** A 'limited' error's wait from a window's end: whole seconds, at least one. */
export function secondsUntil(end: number, now: number): number {
  return Math.max(1, Math.ceil((end - now) / 1000));
}
