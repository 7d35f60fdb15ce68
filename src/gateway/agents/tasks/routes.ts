/**
 * Cloud agent tasks (management auth on every method; 401 without it):
 *   GET    /api/v1/agents/tasks              `provider`, `status`, `limit` (1-500, 50)
 *   POST   /api/v1/agents/tasks              {providerId, prompt, source, options?}: 201 with the task
 *   DELETE /api/v1/agents/tasks?id=
 *   GET    /api/v1/agents/tasks/{id}         refreshed from the upstream when it has an upstream id
 *   POST   /api/v1/agents/tasks/{id}         {action: approve} | {action: message, message} | {action: cancel}
 *   DELETE /api/v1/agents/tasks/{id}
 */
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../../http/context.js';
import { badRequest } from '../../../http/errors.js';
import type { Router } from '../../../http/router.js';
import { compile } from '../../../http/schema.js';
import { ok, readPlainObject, validated } from '../../routes/common.js';
import type { GatewayServices } from '../../services.js';
import { TASK_STATUSES, type AgentTask } from './service.js';

const validateCreate = compile(
  Type.Object(
    { providerId: Type.String({ minLength: 1, maxLength: 100 }), prompt: Type.String({ minLength: 1, maxLength: 200_000 }), source: Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Record(Type.String(), Type.Unknown())]), options: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
    { additionalProperties: false },
  ),
);
const validateAction = compile(
  Type.Union([
    Type.Object({ action: Type.Literal('approve') }, { additionalProperties: false }),
    Type.Object({ action: Type.Literal('message'), message: Type.String({ minLength: 1, maxLength: 100_000 }) }, { additionalProperties: false }),
    Type.Object({ action: Type.Literal('cancel') }, { additionalProperties: false }),
  ]),
);

const iso = (ms: number) => new Date(ms).toISOString();
const view = (t: AgentTask & { refreshError?: string }) => ({ ...t, createdAt: iso(t.createdAt), updatedAt: iso(t.updatedAt) });

export function agentTaskRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const tasks = svc.agentTasks;
  m(
    r.get('/api/v1/agents/tasks', (ctx) => {
      const raw = ctx.query.get('limit');
      const limit = raw === null || raw === '' ? 50 : Number(raw);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw badRequest('limit must be a whole number from 1 to 500');
      const status = ctx.query.get('status') || undefined;
      if (status && !(TASK_STATUSES as readonly string[]).includes(status)) throw badRequest(`status must be one of ${TASK_STATUSES.join(', ')}`);
      const list = tasks.list({ provider: ctx.query.get('provider') || undefined, status }, limit);
      ok(ctx, { tasks: list.map(view), total: list.length, limit });
    }),
  );
  m(
    r.post('/api/v1/agents/tasks', async (ctx) => {
      const b = validated(validateCreate, await readPlainObject(ctx));
      const { task, failure } = await tasks.create(b.providerId, b.prompt, b.source, b.options);
      if (failure) throw failure;
      ok(ctx, { task: view(task) }, 201);
    }),
  );
  const remove = async (ctx: RequestContext, id: string | null | undefined) => {
    if (!id) throw badRequest('id is required');
    const r2 = await tasks.remove(id);
    ok(ctx, { id, deleted: true, ...r2 });
  };
  m(r.delete('/api/v1/agents/tasks', (ctx) => remove(ctx, ctx.query.get('id'))));
  m(r.get('/api/v1/agents/tasks/:id', async (ctx) => ok(ctx, { task: view(await tasks.refreshed(ctx.params.id!)) })));
  m(
    r.post('/api/v1/agents/tasks/:id', async (ctx) => {
      const b = validated(validateAction, await readPlainObject(ctx));
      ok(ctx, { task: view(await tasks.act(ctx.params.id!, b.action, 'message' in b ? b.message : undefined)) });
    }),
  );
  m(r.delete('/api/v1/agents/tasks/:id', (ctx) => remove(ctx, ctx.params.id)));
}
