/**
 * The gateway's response headers (seed: "Request and response headers", "Cost telemetry headers").
 *  - X-Gateway-Version on every response (set in the component's `before`).
 *  - X-Gateway-Decision on every completion response: `strategy=<name>; provider=<id>; latency_ms=<n>`.
 *  - Non-streaming successes: Response-Cost (10 decimals), Tokens-In/Out, Model, Provider, Latency-Ms,
 *    Cache-Hit, Request-Id, and Fallback-Attempts only when > 0.
 *  - Streams: the headers go out before usage is known, so they carry Decision (latency to the first
 *    event), Model, Provider, Request-Id and Fallback-Attempts, never cost or token counts.
 *  - X-Gateway-Session-Id echoes the caller's session id; never invented.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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

/** Header-safe text: control characters dropped, non-ASCII percent-encoded. */
export function headerSafe(v: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = v.replace(/[\u0000-\u001f\u007f]/g, '');
  return /^[\x20-\x7e]*$/.test(clean) ? clean : encodeURI(clean);
}

/** The caller's session id: X-Gateway-Session-Id, else X-Session-Id, else x_session_id. */
export function sessionIdOf(req: IncomingMessage): string | undefined {
  for (const name of ['x-gateway-session-id', 'x-session-id', 'x_session_id']) {
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

export function setTelemetryHeaders(res: ServerResponse, t: Telemetry): void {
  res.setHeader(H.decision, headerSafe(decisionValue(t.decision)));
  res.setHeader(H.requestId, headerSafe(t.requestId));
  if (t.sessionId !== undefined) res.setHeader(H.sessionId, headerSafe(t.sessionId));
  if (t.provider !== undefined) res.setHeader(H.provider, headerSafe(t.provider));
  if (t.model !== undefined) res.setHeader(H.model, headerSafe(t.model));
  if (t.fallbackAttempts > 0) res.setHeader(H.fallbackAttempts, String(t.fallbackAttempts));
  if (t.usage) {
    res.setHeader(H.cost, formatCost(t.usage.cost));
    res.setHeader(H.tokensIn, String(t.usage.tokensIn));
    res.setHeader(H.tokensOut, String(t.usage.tokensOut));
    res.setHeader(H.latency, String(Math.max(0, Math.round(t.usage.latencyMs))));
    res.setHeader(H.cacheHit, t.usage.cacheHit ? 'true' : 'false');
  }
}
