/**
 * GET /v1/ws (inference auth): with `handshake=1`, whether the responses WebSocket bridge is ready
 * and example wire messages (a request and a cancel); 503 when no provider is configured.
 */
import type { Route, Router } from '../../../http/router.js';
import { badRequest } from '../../../http/errors.js';
import { ok } from '../../routes/common.js';
import type { GatewayServices } from '../../services.js';
import { bridgeProvider } from './bridge.js';

export function wsBridgeRoutes(r: Router, svc: GatewayServices, k: (route: Route) => Route): void {
  k(
    r.get('/v1/ws', (ctx) => {
      if (ctx.query.get('handshake') !== '1') throw badRequest('GET /v1/ws?handshake=1 checks the WebSocket bridge; open the socket on /v1/responses', { code: 'invalid_request' });
      const p = bridgeProvider(svc);
      const host = ctx.req.headers.host ?? '127.0.0.1:20128';
      ok(ctx, {
        ok: true,
        provider: p.id,
        url: `ws://${host}/v1/responses`,
        paths: ['/v1/responses', '/responses', '/api/v1/responses'],
        auth: 'Authorization: Bearer <API key> on the upgrade request',
        examples: {
          request: { type: 'response.create', model: p.models[0]?.id ?? 'gpt-4.1-mini', input: [{ role: 'user', content: 'Hello' }] },
          cancel: { type: 'response.cancel' },
        },
      });
    }),
  );
}
