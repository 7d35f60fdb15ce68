/**
 * GET/PUT/PATCH /api/settings (management auth): the gateway's switchable settings, today the agent
 * protocols' `mcpEnabled` and `a2aEnabled` (defaults < gateway.yaml settings < this API). PUT and
 * PATCH both change only the fields given; an unknown field is a 400.
 */
import type { Router } from '../../http/router.js';
import { ok, readPlainObject } from '../routes/common.js';
import type { GatewayServices } from '../services.js';

export function settingsRoutes(r: Router, svc: GatewayServices, changed: () => void): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  m(r.get('/api/settings', (ctx) => ok(ctx, { ...svc.runtime.agents.value })));
  const update = async (ctx: Parameters<Parameters<Router['get']>[1]>[0]) => {
    const next = svc.runtime.agents.patch(await readPlainObject(ctx));
    changed();
    ok(ctx, { ...next });
  };
  m(r.put('/api/settings', update));
  m(r.patch('/api/settings', update));
}
