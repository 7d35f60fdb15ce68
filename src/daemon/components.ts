import { Router, sendJson, type ComponentDefinition, type HttpError, type RequestContext } from '../http/index.js';
import { coreComponent } from '../core/index.js';

/**
 * A server whose component has no routes in this build: still mounted (socket + listener) so the
 * listener model is whole, and every path answers 404 in that API's own error format.
 */
function mountedOnly(name: string, defaultAddress: string, render: (ctx: RequestContext, err: HttpError) => unknown): ComponentDefinition {
  return {
    name,
    defaultAddress,
    create: () => ({ router: new Router(), renderError: (ctx, err) => sendJson(ctx.res, err.status, render(ctx, err)) }),
  };
}

const SERVERS: ComponentDefinition[] = [
  mountedOnly('alertmanager', '127.0.0.1:9093', (_c, e) => ({ code: e.status, message: e.message })),
  mountedOnly('gateway', '127.0.0.1:20128', (_c, e) => ({ error: { message: e.message, type: 'invalid_request_error', code: e.code ?? null } })),
  mountedOnly('pipeline', '127.0.0.1:8000', (_c, e) => ({ detail: e.message })),
  mountedOnly('nodes', '127.0.0.1:8081', (_c, e) => ({ Method: '', Code: e.status, Error: true, ErrMessage: e.message, Value: null })),
];

/** Every component the daemon runs. The Core API comes first; it owns `/core` and unknown hosts. */
export const COMPONENTS: ComponentDefinition[] = [coreComponent, ...SERVERS];
