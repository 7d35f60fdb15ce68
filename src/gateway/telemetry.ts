/**
 * The gateway's response headers (seed: "Request and response headers", "Cost telemetry headers").
 *  - X-Gateway-Version on every response (set in the component's `before`, or first by the handler of
 *    a route tagged VERSION_BY_HANDLER: see `versionBefore`).
 *  - X-Gateway-Decision on every completion response: `strategy=<name>; provider=<id>; latency_ms=<n>`.
 *  - Non-streaming successes: Response-Cost (10 decimals), Tokens-In/Out, Model, Provider, Latency-Ms,
 *    Cache-Hit, Request-Id, and Fallback-Attempts only when > 0.
 *  - Streams: the headers go out before usage is known, so they carry Decision (latency to the first
 *    event), Model, Provider, Request-Id and Fallback-Attempts, never cost or token counts.
 *  - X-Gateway-Session-Id echoes the caller's session id; never invented.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestContext } from '../http/context.js';
import type { Router } from '../http/router.js';
import { formatCost } from './pricing.js';

export const H = {
  version: 'X-Gateway-Version',
  decision: 'X-Gateway-Decision',
  cost: 'X-Gateway-Response-Cost',
  tokensIn: 'X-Gateway-Tokens-In',
  tokensOut: 'X-Gateway-Tokens-Out',
  model: 'X-Gateway-Model',
  provider: 'X-Gateway-Provider',
  latency: 'X-Gateway-Latency-Ms',
  cacheHit: 'X-Gateway-Cache-Hit',
  fallbackAttempts: 'X-Gateway-Fallback-Attempts',
  requestId: 'X-Gateway-Request-Id',
  sessionId: 'X-Gateway-Session-Id',
  cache: 'X-Gateway-Cache',
  costSaved: 'X-Gateway-Cost-Saved',
  idempotent: 'X-Gateway-Idempotent',
  budgetWarning: 'X-Gateway-Budget-Warning',
  tokenLimitRemaining: 'X-Gateway-Token-Limit-Remaining',
  progress: 'X-Gateway-Progress',
  compression: 'X-Gateway-Compression',
} as const;

/**
 * X-Gateway-Version is set in the component's `before` on every request, except on the routes tagged
 * VERSION_BY_HANDLER (the completion routes): their handler puts it first among the headers it
 * writes, so a JSON answer goes out with one writeHead (Node's fast path, which any earlier setHeader
 * disables). Every other way out of those requests (errors, streams, stored answers) sets it with
 * `ensureVersion` before its own headers, so the header and its place stay as they were.
 * `before` runs before routing, so the tagged routes are known by their paths (`versionPaths`).
 */
export const VERSION_BY_HANDLER = 'versionByHandler';
const VERSION_PENDING = 'gatewayVersionPending';

/** The paths of the POST routes tagged VERSION_BY_HANDLER; such a route must have a fixed path. */
export function versionPaths(router: Router): ReadonlySet<string> {
  const paths = new Set<string>();
  for (const r of router.routes()) {
    if (r.meta[VERSION_BY_HANDLER] !== true) continue;
    if (r.method !== 'POST' || /[:*]/.test(r.pattern)) {
      throw new Error(`${r.method} ${r.pattern}: only POST routes with a fixed path can write X-Gateway-Version in their handler`);
    }
    paths.add(r.pattern);
  }
  return paths;
}

/** The component's `before`: set the version header now, or leave it to the handler of a tagged route. */
export function versionBefore(ctx: RequestContext, version: string, byHandler: ReadonlySet<string>): void {
  if (ctx.req.method === 'POST' && ctx.path !== undefined && byHandler.has(ctx.path)) ctx.state[VERSION_PENDING] = true;
  else ctx.res.setHeader(H.version, version);
}

/** Whether this request's handler still has to write X-Gateway-Version. */
export function versionPending(ctx: RequestContext): boolean {
  return ctx.state[VERSION_PENDING] === true;
}

/** The handler wrote (or is writing now) the version header itself. */
export function versionWritten(ctx: RequestContext): void {
  ctx.state[VERSION_PENDING] = false;
}

/** Set X-Gateway-Version now if the handler has not yet (before any other header of that answer). */
export function ensureVersion(ctx: RequestContext, version: string): void {
  if (ctx.state[VERSION_PENDING] !== true) return;
  ctx.state[VERSION_PENDING] = false;
  if (!ctx.res.headersSent) ctx.res.setHeader(H.version, version);
}

/** Header-safe text: control characters dropped, non-ASCII percent-encoded. */
export function headerSafe(v: string): string {
  if (printableAscii(v)) return v; // the usual case, without the two regular expressions
  // eslint-disable-next-line no-control-regex
  const clean = v.replace(/[\u0000-\u001f\u007f]/g, '');
  return /^[\x20-\x7e]*$/.test(clean) ? clean : encodeURI(clean);
}

function printableAscii(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

const SESSION_HEADERS = ['x-gateway-session-id', 'x-session-id', 'x_session_id'] as const;

/** The caller's session id: X-Gateway-Session-Id, else X-Session-Id, else x_session_id. */
export function sessionIdOf(req: IncomingMessage): string | undefined {
  for (const name of SESSION_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string' && v.trim()) return v.trim().slice(0, 256);
  }
  return undefined;
}

export interface Decision {
  strategy: string;
  provider?: string;
  latencyMs: number;
}

export function decisionValue(d: Decision): string {
  return `strategy=${d.strategy}; provider=${d.provider ?? 'none'}; latency_ms=${Math.max(0, Math.round(d.latencyMs))}`;
}

export interface Telemetry {
  decision: Decision;
  requestId: string;
  sessionId?: string;
  provider?: string;
  model?: string;
  fallbackAttempts: number;
  /** Set on non-streaming successes only. */
  usage?: { tokensIn: number; tokensOut: number; cost: number; latencyMs: number; cacheHit: boolean };
}

/**
 * The telemetry headers as name, value pairs appended to `out`, in the order they go on the wire. A
 * flat list is what `writeHead` takes fastest (no property walk, no own-property checks).
 */
export function telemetryPairs(t: Telemetry, out: (string | number)[]): (string | number)[] {
  const d = t.decision;
  const decision = decisionValue(d);
  // Only the strategy and provider can bring in unsafe characters: check those short strings, not the whole value.
  const safe = printableAscii(d.strategy) && (d.provider === undefined || printableAscii(d.provider));
  out.push(H.decision, safe ? decision : headerSafe(decision), H.requestId, headerSafe(t.requestId));
  if (t.sessionId !== undefined) out.push(H.sessionId, headerSafe(t.sessionId));
  if (t.provider !== undefined) out.push(H.provider, headerSafe(t.provider));
  if (t.model !== undefined) out.push(H.model, headerSafe(t.model));
  if (t.fallbackAttempts > 0) out.push(H.fallbackAttempts, String(t.fallbackAttempts));
  const u = t.usage;
  if (u) {
    out.push(
      H.cost,
      formatCost(u.cost),
      H.tokensIn,
      String(u.tokensIn),
      H.tokensOut,
      String(u.tokensOut),
      H.latency,
      String(Math.max(0, Math.round(u.latencyMs))),
      H.cacheHit,
      u.cacheHit ? 'true' : 'false',
    );
  }
  return out;
}

export function setTelemetryHeaders(res: ServerResponse, t: Telemetry): void {
  setPairs(res, telemetryPairs(t, []));
}

/** setHeader for each name, value pair. */
export function setPairs(res: ServerResponse, pairs: (string | number)[]): void {
  for (let i = 0; i < pairs.length; i += 2) res.setHeader(pairs[i] as string, pairs[i + 1]!);
}
