/**
 * The gateway's general settings (management auth). PUT and PATCH change only the fields given; an
 * unknown field is a 400; what the API saved wins over gateway.yaml `settings:`.
 *   GET/PUT/PATCH /api/settings                     every general setting
 *   GET/PUT /api/settings/require-login             {requireLogin}
 *   GET/PUT /api/settings/ip-filter                 {enabled, allow, deny}
 *   GET/PUT /api/settings/thinking-budget           {mode, tokens}
 *   GET/PUT /api/settings/system-prompt             {enabled, prompt, position}
 *   POST    /api/settings/purge-request-history     {olderThan?}: request-log rows (and their compression rows) deleted
 */
import { badRequest } from '../../http/errors.js';
import type { RequestContext } from '../../http/context.js';
import type { Router } from '../../http/router.js';
import { ok, readPlainObject } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import type { GeneralSettings } from './settings.js';

export function settingsRoutes(r: Router, svc: GatewayServices, changed: () => void): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const general = () => svc.runtime.general;
  const update = async (ctx: RequestContext) => {
    const next = await general().save(await readPlainObject(ctx));
    changed();
    ok(ctx, { ...next });
  };
  m(r.get('/api/settings', (ctx) => ok(ctx, { ...general().value })));
  m(r.put('/api/settings', update));
  m(r.patch('/api/settings', update));

  const parts: [string, keyof GeneralSettings][] = [
    ['ip-filter', 'ipFilter'],
    ['thinking-budget', 'thinkingBudget'],
    ['system-prompt', 'systemPrompt'],
  ];
  for (const [path, key] of parts) {
    m(r.get(`/api/settings/${path}`, (ctx) => ok(ctx, general().value[key])));
    m(r.put(`/api/settings/${path}`, async (ctx) => ok(ctx, (await general().save({ [key]: await readPlainObject(ctx) }))[key])));
  }
  m(r.get('/api/settings/require-login', (ctx) => ok(ctx, { requireLogin: general().value.requireLogin })));
  m(
    r.put('/api/settings/require-login', async (ctx) => {
      const b = await readPlainObject(ctx);
      if (typeof b.requireLogin !== 'boolean' || Object.keys(b).length !== 1) throw badRequest('send {"requireLogin": true|false}');
      ok(ctx, { requireLogin: (await general().save({ requireLogin: b.requireLogin })).requireLogin });
    }),
  );
  m(
    r.post('/api/settings/purge-request-history', async (ctx) => {
      const b = await readPlainObject(ctx, true);
      let before = Number.MAX_SAFE_INTEGER;
      if (b.olderThan !== undefined) {
        const t = typeof b.olderThan === 'number' ? b.olderThan : Date.parse(String(b.olderThan));
        if (!Number.isFinite(t)) throw badRequest('olderThan must be an ISO time or epoch milliseconds');
        before = t;
      }
      svc.usage.flush();
      ok(ctx, { success: true, ...(await svc.state.db.logs.purge(before)) });
    }),
  );
}
