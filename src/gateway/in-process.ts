/**
 * In-process requests to the gateway's own routes (batch lines, MCP tools, A2A skills):
 * light-my-request builds a real request and response pair and hands it to the same dispatcher the
 * listeners use, so a call goes through exactly what an HTTP request does (validation, routing,
 * limits, the usage log, errors in the route's wire format). Inference calls carry the principal the
 * caller sets; `trusted` calls pass management auth as the control socket does.
 */
import type { Logger } from 'pino';
import type { ComponentInstance } from '../http/component.js';
import { ClientIpResolver } from '../http/client-ip.js';
import { createDispatcher } from '../http/dispatch.js';
import { INTERNAL_PRINCIPAL, type Principal } from './auth.js';
import { lazyRequire } from '../http/lazy.js';

// Loaded with the first in-process call (a batch line, an MCP tool, an audited change), not at start.
const lightMyRequest = lazyRequire<typeof import('light-my-request')>('light-my-request');

export interface InProcessRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  body?: unknown;
  principal?: Principal;
  /** Management routes: answered as for the control socket. */
  trusted?: boolean;
  requestId?: string;
  headers?: Record<string, string>;
}

export interface InProcessResponse {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

export type InProcessCall = (r: InProcessRequest) => Promise<InProcessResponse>;

export function inProcess(instance: ComponentInstance, log: Logger, listener: string): InProcessCall {
  const ips = new ClientIpResolver();
  const plain = createDispatcher({ target: () => instance, listener, viaSocket: false, ips: () => ips, log });
  const trusted = createDispatcher({ target: () => instance, listener, viaSocket: true, ips: () => ips, log });
  return async (r) => {
    const dispatch = r.trusted ? trusted : plain;
    const res = await lightMyRequest().inject(
      (req, res) => {
        if (r.principal) (req as unknown as Record<symbol, unknown>)[INTERNAL_PRINCIPAL] = r.principal;
        dispatch(req, res);
      },
      {
        method: r.method,
        url: r.url,
        headers: { ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(r.requestId ? { 'x-request-id': r.requestId } : {}), ...r.headers },
        ...(r.body !== undefined ? { payload: JSON.stringify(r.body) } : {}),
        remoteAddress: '127.0.0.1',
      },
    );
    return { status: res.statusCode, headers: res.headers, body: res.payload };
  };
}

/** The error message of an in-process answer (the wire format's message, else the body). */
export function messageOf(r: InProcessResponse): string {
  try {
    const j = JSON.parse(r.body) as { error?: { message?: string } | string; message?: string; detail?: string };
    return (typeof j.error === 'string' ? j.error : j.error?.message) ?? j.message ?? j.detail ?? r.body;
  } catch {
    return r.body;
  }
}

/**
 * One chat completion through the gateway's own route for an internal caller (evals, assessment):
 * trusted, no response cache, no memory injection. A non-200 answer comes back with its message.
 */
export async function chatOnce(call: InProcessCall, body: Record<string, unknown>, requestId: string): Promise<{ status: number; text: string; cost: number; error?: string }> {
  const r = await call({ method: 'POST', url: '/v1/chat/completions', body, principal: { trusted: true }, requestId, headers: { 'x-gateway-no-cache': 'true', 'x-gateway-no-memory': 'true' } });
  if (r.status !== 200) return { status: r.status, text: '', cost: 0, error: messageOf(r).slice(0, 300) };
  let content: unknown;
  try {
    content = (JSON.parse(r.body) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    content = undefined;
  }
  const cost = Number(r.headers['x-gateway-response-cost']);
  return { status: 200, text: typeof content === 'string' ? content : '', cost: Number.isFinite(cost) ? cost : 0 };
}
