/**
 * A2A (agent to agent):
 *   POST /a2a                        JSON-RPC 2.0: message/send, message/stream (SSE), tasks/get, tasks/cancel
 *   GET  /.well-known/agent.json     the agent card (public, cached for an hour)
 *   GET  /api/a2a/status, GET /api/a2a/tasks (state, skill, limit ≤ 200, offset),
 *   GET  /api/a2a/tasks/{id}, POST /api/a2a/tasks/{id}/cancel
 * /a2a and the REST helpers authenticate like the /v1 routes: once the gateway has API keys (or
 * REQUIRE_API_KEY is true) they take a Bearer API key, and `GATEWAY_API_KEY`, when set, is required
 * (or an API key); open otherwise. Each task records who created it, and a caller sees (lists,
 * reads, cancels) its own tasks only; the control socket sees every task. Everything but the card
 * needs a2aEnabled (503 otherwise).
 */
import { timingSafeEqual } from 'node:crypto';
import type { RequestContext } from '../../../http/context.js';
import { readBody, parseJsonBody } from '../../../http/body.js';
import { HttpError, notFound, badRequest } from '../../../http/errors.js';
import { sendJson } from '../../../http/respond.js';
import type { Router } from '../../../http/router.js';
import { intQuery, ok } from '../../routes/common.js';
import type { GatewayServices } from '../../services.js';
import type { A2aService } from './service.js';
import { A2A_SKILLS } from './skills.js';
import { TASK_STATES, type A2aMessage, type TaskRecord, type TaskScope, type TaskState } from './store.js';

/** Who calls: whose tasks it sees, and the owner its new tasks get. */
interface Caller {
  scope: TaskScope;
  owner: string | null;
}

const GATEWAY_KEY_OWNER = 'env:GATEWAY_API_KEY';

const A2A_BODY_LIMIT = 1 << 20;
type Id = string | number | null;

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly httpStatus = 200,
  ) {
    super(message);
  }
}

const rpcResult = (id: Id, result: unknown) => ({ jsonrpc: '2.0', id, result });
const rpcError = (id: Id, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });

export function taskView(t: TaskRecord): Record<string, unknown> {
  return {
    id: t.id,
    skill: t.skill,
    state: t.state,
    messages: t.messages,
    artifacts: t.artifacts,
    metadata: t.metadata,
    error: t.error ?? null,
    createdAt: new Date(t.createdAt).toISOString(),
    updatedAt: new Date(t.updatedAt).toISOString(),
  };
}

function sendResult(t: TaskRecord): Record<string, unknown> {
  const { artifacts, metadata, ...task } = taskView(t);
  return { task, artifacts, metadata };
}

function bearerMatches(ctx: RequestContext, want: string): boolean {
  const h = ctx.req.headers.authorization;
  const got = typeof h === 'string' && /^Bearer\s+/i.test(h) ? h.replace(/^Bearer\s+/i, '').trim() : '';
  const a = Buffer.from(got);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

function parseParams(params: unknown): { skill: string; messages: A2aMessage[]; metadata: Record<string, unknown> } {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) throw new RpcError(-32602, 'params must be an object {skill, messages}');
  const p = params as Record<string, unknown>;
  if (typeof p.skill !== 'string' || !p.skill) throw new RpcError(-32602, `params.skill is required (one of ${A2A_SKILLS.map((s) => s.id).join(', ')})`);
  if (!Array.isArray(p.messages) || p.messages.length === 0 || p.messages.length > 200) throw new RpcError(-32602, 'params.messages must be a list of 1 to 200 {role, content}');
  const messages = p.messages.map((m, i) => {
    const x = m as Record<string, unknown> | null;
    if (!x || typeof x.role !== 'string' || typeof x.content !== 'string') throw new RpcError(-32602, `params.messages[${i}] must be {role, content} with strings`);
    return { role: x.role, content: x.content };
  });
  const metadata = p.metadata && typeof p.metadata === 'object' && !Array.isArray(p.metadata) ? (p.metadata as Record<string, unknown>) : {};
  return { skill: p.skill, messages, metadata };
}

export function a2aRoutes(r: Router, svc: GatewayServices, a2a: A2aService): void {
  const open = (route: ReturnType<Router['get']>) => route.tag('auth', 'public');
  const enabled = () => svc.runtime.general.value.a2aEnabled;
  /**
   * The caller, or a 401 (HttpError): the control socket sees everything; GATEWAY_API_KEY is one
   * caller; otherwise the /v1 rules (a usable API key when keys are required) and the key's id is
   * the owner. With GATEWAY_API_KEY set, an anonymous caller is refused.
   */
  const caller = (ctx: RequestContext): Caller => {
    if (ctx.viaSocket) return { scope: { all: true }, owner: null };
    if (a2a.apiKey !== undefined && bearerMatches(ctx, a2a.apiKey)) return { scope: { all: false, owner: GATEWAY_KEY_OWNER }, owner: GATEWAY_KEY_OWNER };
    const principal = svc.auth.inference(ctx);
    const owner = principal.key?.id ?? null;
    if (owner === null && a2a.apiKey !== undefined) throw new HttpError(401, 'A2A needs Authorization: Bearer <API key or GATEWAY_API_KEY>', { code: 'unauthorized' });
    return { scope: { all: false, owner }, owner };
  };
  /** The REST helpers: the same gate as /a2a, with the gateway's error format. */
  const guard = (ctx: RequestContext): Caller => {
    if (!enabled()) throw new HttpError(503, 'A2A is disabled (PATCH /api/settings {"a2aEnabled": true}, or gateway.yaml settings.a2a_enabled)', { code: 'a2a_disabled' });
    return caller(ctx);
  };

  open(
    r.post('/a2a', async (ctx) => {
      let id: Id = null;
      try {
        if (!enabled()) throw new RpcError(-32000, 'A2A is disabled', 503);
        let who: Caller;
        try {
          who = caller(ctx);
        } catch (e) {
          if (e instanceof HttpError) throw new RpcError(-32600, `unauthorized: ${e.message}`, e.status);
          throw e;
        }
        let body: unknown;
        try {
          body = await parseJsonBody(await readBody(ctx, A2A_BODY_LIMIT));
        } catch (e) {
          if (e instanceof HttpError && e.status === 413) throw e;
          throw new RpcError(-32700, `parse error: ${(e as Error).message}`);
        }
        if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new RpcError(-32600, 'invalid request: send one JSON-RPC 2.0 request object');
        const req = body as Record<string, unknown>;
        if (typeof req.id === 'string' || typeof req.id === 'number') id = req.id;
        if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') throw new RpcError(-32600, 'invalid request: jsonrpc must be "2.0" and method a string');
        switch (req.method) {
          case 'message/send': {
            const p = parseParams(req.params);
            const skill = a2a.skill(p.skill);
            if (!skill) throw new RpcError(-32602, `unknown skill ${JSON.stringify(p.skill)} (one of ${A2A_SKILLS.map((s) => s.id).join(', ')})`);
            const { done } = a2a.start(skill, p.messages, p.metadata, who.owner);
            return sendJson(ctx.res, 200, rpcResult(id, sendResult(await done)));
          }
          case 'message/stream': {
            const p = parseParams(req.params);
            const skill = a2a.skill(p.skill);
            if (!skill) throw new RpcError(-32602, `unknown skill ${JSON.stringify(p.skill)}`);
            return streamTask(ctx, a2a, id, skill, p, who.owner);
          }
          case 'tasks/get':
          case 'tasks/cancel': {
            const p = req.params as Record<string, unknown> | undefined;
            const taskId = p && typeof p === 'object' ? (p.taskId ?? p.id) : undefined;
            if (typeof taskId !== 'string') throw new RpcError(-32602, 'params.taskId is required');
            const t = req.method === 'tasks/get' ? a2a.tasks.get(taskId, who.scope) : a2a.cancel(taskId, who.scope);
            if (!t) throw new RpcError(-32602, `task ${taskId} not found`);
            return sendJson(ctx.res, 200, rpcResult(id, taskView(t)));
          }
          default:
            throw new RpcError(-32601, `method not found: ${req.method} (message/send, message/stream, tasks/get, tasks/cancel)`);
        }
      } catch (e) {
        if (e instanceof RpcError) return sendJson(ctx.res, e.httpStatus, rpcError(id, e.code, e.message));
        if (e instanceof HttpError && e.status === 413) return sendJson(ctx.res, 413, rpcError(id, -32600, e.message));
        throw e;
      }
    }),
  );

  open(
    r.get('/.well-known/agent.json', (ctx) => {
      const host = ctx.req.headers.host ?? '127.0.0.1';
      sendJson(
        ctx.res,
        200,
        {
          name: 'ctl gateway',
          description: 'Model gateway agent: routes conversations across providers and reports quotas, costs, providers and health.',
          url: `http://${host}/a2a`,
          version: svc.version,
          protocolVersion: '0.2',
          capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
          authentication: { schemes: a2a.apiKey || svc.auth.requireApiKey ? ['bearer'] : [] },
          defaultInputModes: ['text'],
          defaultOutputModes: ['text', 'data'],
          skills: A2A_SKILLS.map((s) => ({ id: s.id, name: s.name, description: s.description, tags: s.tags })),
          enabled: enabled(),
        },
        { 'Cache-Control': 'public, max-age=3600' },
      );
    }),
  );
  open(
    r.get('/api/a2a/status', (ctx) => {
      const who = guard(ctx);
      ok(ctx, { enabled: true, auth: a2a.apiKey || svc.auth.requireApiKey ? 'bearer' : 'open', skills: A2A_SKILLS.map((s) => s.id), tasks: a2a.tasks.counts(who.scope) });
    }),
  );
  open(
    r.get('/api/a2a/tasks', (ctx) => {
      const who = guard(ctx);
      const state = ctx.query.get('state') || undefined;
      if (state !== undefined && !(TASK_STATES as readonly string[]).includes(state)) throw badRequest(`query parameter state must be one of ${TASK_STATES.join(', ')}`);
      const limit = intQuery(ctx, 'limit', 50, 1, 200);
      const offset = intQuery(ctx, 'offset', 0, 0, 1_000_000_000);
      const { rows, total } = a2a.tasks.list({ state: state as TaskState | undefined, skill: ctx.query.get('skill') || undefined, scope: who.scope }, offset, limit);
      ok(ctx, { tasks: rows.map(taskView), total, limit, offset });
    }),
  );
  open(
    r.get('/api/a2a/tasks/:id', (ctx) => {
      const who = guard(ctx);
      const t = a2a.tasks.get(ctx.params.id!, who.scope);
      if (!t) throw notFound(`task ${ctx.params.id} not found`);
      ok(ctx, taskView(t));
    }),
  );
  open(
    r.post('/api/a2a/tasks/:id/cancel', (ctx) => {
      const who = guard(ctx);
      const t = a2a.cancel(ctx.params.id!, who.scope);
      if (!t) throw notFound(`task ${ctx.params.id} not found`);
      ok(ctx, taskView(t));
    }),
  );
}

/** message/stream: SSE of JSON-RPC responses — each state change, then the artifacts, the last one `final`. */
async function streamTask(ctx: RequestContext, a2a: A2aService, id: Id, skill: NonNullable<ReturnType<A2aService['skill']>>, p: { messages: A2aMessage[]; metadata: Record<string, unknown> }, owner: string | null): Promise<void> {
  const res = ctx.res;
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  const send = (result: unknown) => {
    if (!res.writableEnded) res.write(`data: ${JSON.stringify(rpcResult(id, result))}\n\n`);
  };
  const { task, done } = a2a.start(skill, p.messages, p.metadata, owner);
  send({ kind: 'status', taskId: task.id, state: task.state, final: false });
  const stop = a2a.watch(task.id, (t) => {
    if (t.state === 'working') send({ kind: 'status', taskId: t.id, state: t.state, final: false });
  });
  res.on('close', stop);
  const end = await done;
  stop();
  for (const artifact of end.artifacts) send({ kind: 'artifact', taskId: end.id, artifact });
  send({ kind: 'status', taskId: end.id, state: end.state, final: true, ...(end.error ? { error: end.error } : {}), metadata: end.metadata });
  res.end();
}
