/**
 * GET /api/assess: the latest assessment of every configured chat model, and the recent runs;
 * POST /api/assess {scope: {type: all} | {type: provider, providerId} | {type: model, modelId}, trigger?}:
 * probe and categorise now, answer the run (management auth).
 */
import { Type } from '@sinclair/typebox';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { ok, readPlainObject, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import type { AssessScope } from './service.js';

const validateRun = compile(
  Type.Object(
    {
      scope: Type.Optional(
        Type.Union([
          Type.Object({ type: Type.Literal('all') }, { additionalProperties: false }),
          Type.Object({ type: Type.Literal('provider'), providerId: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
          Type.Object({ type: Type.Literal('model'), modelId: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
        ]),
      ),
      trigger: Type.Optional(Type.String({ maxLength: 100 })),
    },
    { additionalProperties: false },
  ),
);

export function assessRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  m(
    r.get('/api/assess', (ctx) => {
      const configured = new Set<string>();
      for (const rt of svc.state.catalog.providers.values()) for (const id of rt.models.keys()) configured.add(`${rt.config.id}/${id}`);
      const latest = Object.values(svc.assessor.latest()).filter((a) => configured.has(a.model));
      ok(ctx, { assessments: latest.sort((a, b) => a.model.localeCompare(b.model)), runs: svc.assessor.runs() });
    }),
  );
  m(
    r.post('/api/assess', async (ctx) => {
      const b = validated(validateRun, await readPlainObject(ctx, true));
      const run = await svc.assessor.run((b.scope ?? { type: 'all' }) as AssessScope, b.trigger ?? 'manual', svc.internal);
      ok(ctx, run);
    }),
  );
}
