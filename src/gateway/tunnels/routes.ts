/**
 * Tunnels (management auth): GET /api/tunnels/{tunnel-a|tunnel-b} (installed, version, running, public
 * URL, restarts, last exit); POST with `{action: "enable", target?}` or `{action: "disable"}`. The
 * target is the gateway address the tunnel forwards to: the body's, else ctl.yaml
 * `gateway.tunnels.target`, else the address the request came to. GET /.well-known/ctl-tunnel-probe/NONCE
 * (no auth) is where a probe through a tunnel's public address arrives.
 */
import { Type } from '@sinclair/typebox';
import { badRequest, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { ok, readPlainObject, requestOrigin, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import { PROBE_ROUTE } from './supervisor.js';

const validateAction = compile(
  Type.Object({ action: Type.Union([Type.Literal('enable'), Type.Literal('disable')]), target: Type.Optional(Type.String({ pattern: '^https?://[^/]+/?$', maxLength: 512 })) }, { additionalProperties: false }),
);

export function tunnelRoutes(r: Router, svc: GatewayServices, configuredTarget: string | undefined): void {
  // The probe a tunnel's public address is checked with (no auth: it comes from the internet through
  // the tunnel). Only the nonce of a probe under way answers; any other is a 404 like an unknown path.
  r.get(PROBE_ROUTE, (ctx) => {
    if (!svc.tunnels.arrived(ctx.params.nonce!)) throw notFound();
    ok(ctx, { probe: 'ctl' });
  }).tag('auth', 'public');
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  m(r.get('/api/tunnels/:id', async (ctx) => ok(ctx, await svc.tunnels.status(ctx.params.id!))));
  m(
    r.post('/api/tunnels/:id', async (ctx) => {
      const id = ctx.params.id!;
      svc.tunnels.kindOf(id);
      const b = validated(validateAction, await readPlainObject(ctx));
      if (b.action === 'disable') await svc.tunnels.disable(id);
      else {
        const target = b.target ?? configuredTarget ?? requestOrigin(ctx) ?? undefined;
        if (!target) throw badRequest('target is required over the control socket (the gateway address the tunnel forwards to), or set ctl.yaml gateway.tunnels.target');
        await svc.tunnels.enable(id, target.replace(/\/+$/, ''));
      }
      ok(ctx, await svc.tunnels.status(id));
    }),
  );
}
