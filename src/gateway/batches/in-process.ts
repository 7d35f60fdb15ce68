/**
 * In-process requests to the gateway's own routes (batch lines): light-my-request builds a real
 * request and response pair and hands it to the same dispatcher the listeners use, so a line goes
 * through exactly what an HTTP request does (validation, routing, errors in the route's wire format),
 * with its principal set by the caller instead of read from headers.
 */
import inject from 'light-my-request';
import type { Logger } from 'pino';
import type { ComponentInstance } from '../../http/component.js';
import { ClientIpResolver } from '../../http/client-ip.js';
import { createDispatcher } from '../../http/dispatch.js';
import { INTERNAL_PRINCIPAL } from '../auth.js';
import type { LineCall } from './service.js';

export function inProcessCaller(instance: ComponentInstance, log: Logger): LineCall {
  const ips = new ClientIpResolver();
  const dispatch = createDispatcher({ target: () => instance, listener: 'batch', viaSocket: false, ips: () => ips, log });
  return async (principal, url, body, requestId) => {
    const res = await inject(
      (req, res) => {
        (req as unknown as Record<symbol, unknown>)[INTERNAL_PRINCIPAL] = principal;
        dispatch(req, res);
      },
      { method: 'POST', url, headers: { 'content-type': 'application/json', 'x-request-id': requestId }, payload: JSON.stringify(body), remoteAddress: '127.0.0.1' },
    );
    return { status: res.statusCode, headers: res.headers, body: res.payload };
  };
}
