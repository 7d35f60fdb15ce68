/**
 * The gateway's response headers (seed: "Request and response headers", "Cost telemetry headers").
 *  - X-Gateway-Version on every response (set in the component's `before`, or first by the completion
 *    handler: see `versionBefore`).
 *  - X-Gateway-Decision on every completion response: `strategy=<name>; provider=<id>; latency_ms=<n>`.
 *  - Non-streaming successes: Response-Cost (10 decimals), Tokens-In/Out, Model, Provider, Latency-Ms,
 *    Cache-Hit, Request-Id, and Fallback-Attempts only when > 0.
 *  - Streams: the headers go out before usage is known, so they carry Decision (latency to the first
 *    event), Model, Provider, Request-Id and Fallback-Attempts, never cost or token counts.
 *  - X-Gateway-Session-Id echoes the caller's session id; never invented.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestContext } from '../http/context.js';
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
} as const;

/**
 * X-Gateway-Version is set in the component's `before` on every request, except on the completion
 * paths below: their handler puts it first among the headers it writes, so a JSON answer goes out
 * with one writeHead of a plain object (Node's fast path, which any earlier setHeader disables).
 * Every other way out of those requests (errors, streams, stored answers) sets it with
 * `ensureVersion` before its own headers, so the header and its place stay as they were.
 */
const VERSION_BY_HANDLER = new Set(['/v1/chat/completions', '/v1/responses', '/v1/messages', '/api/chat', '/v1/api/chat']);
const VERSION_PENDING = 'gatewayVersionPending';

/** The component's `before`: set the version header now, or leave it to the completion handler. */
export function versionBefore(ctx: RequestContext, version: string): void {
  if (ctx.req.method === 'POST' && ctx.path !== undefined && VERSION_BY_HANDLER.has(ctx.path)) ctx.state[VERSION_PENDING] = true;
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

/** The telemetry headers as name → value, added to `out` in the order they go on the wire. */
export function telemetryHeaders(t: Telemetry, out: Record<string, string | number> = {}): Record<string, string | number> {
  out[H.decision] = headerSafe(decisionValue(t.decision));
  out[H.requestId] = headerSafe(t.requestId);
  if (t.sessionId !== undefined) out[H.sessionId] = headerSafe(t.sessionId);
  if (t.provider !== undefined) out[H.provider] = headerSafe(t.provider);
  if (t.model !== undefined) out[H.model] = headerSafe(t.model);
  if (t.fallbackAttempts > 0) out[H.fallbackAttempts] = String(t.fallbackAttempts);
  if (t.usage) {
    out[H.cost] = formatCost(t.usage.cost);
    out[H.tokensIn] = String(t.usage.tokensIn);
    out[H.tokensOut] = String(t.usage.tokensOut);
    out[H.latency] = String(Math.max(0, Math.round(t.usage.latencyMs)));
    out[H.cacheHit] = t.usage.cacheHit ? 'true' : 'false';
  }
  return out;
}

export function setTelemetryHeaders(res: ServerResponse, t: Telemetry): void {
  const h = telemetryHeaders(t);
  for (const name in h) res.setHeader(name, h[name]!);
}
