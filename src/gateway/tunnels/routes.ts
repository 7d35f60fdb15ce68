/**
 * Tunnels (management auth): GET /api/tunnels/{tunnel-a|tunnel-b} (installed, version, running, public
 * URL, restarts, last exit); POST with `{action: "enable", target?}` or `{action: "disable"}`. The
 * target is the gateway address the tunnel forwards to: the body's, else ctl.yaml
 * `gateway.tunnels.target`, else the address the request came to.
 */
import { Type } from '@sinclair/typebox';
import { badRequest } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { ok, readPlainObject, requestOrigin, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';

const validateAction = compile(
  Type.Object({ action: Type.Union([Type.Literal('enable'), Type.Literal('disable')]), target: Type.Optional(Type.String({ pattern: '^https?://[^/]+/?$', maxLength: 512 })) }, { additionalProperties: false }),
);

export function tunnelRoutes(r: Router, svc: GatewayServices, configuredTarget: string | undefined): void {
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
