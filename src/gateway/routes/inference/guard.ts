/**
 * Guardrails at the inference routes: the request is checked before anything else happens; a block
 * is recorded in the request log (with the guardrail) and answered as a 400 in the route's format.
 */
import type { RequestContext } from '../../../http/context.js';
import type { CanonicalRequest } from '../../canonical.js';
import { failRequest, type FinishInfo, type RecordDeps } from '../../completion.js';
import { GuardrailBlocked, guardBody, guardRequest } from '../../guardrails/engine.js';
import type { GatewayServices } from '../../services.js';
import { ensureVersion } from '../../telemetry.js';

/** What guarding a request uses: the guardrails' configuration, the log, and what records a block. */
export type GuardDeps = RecordDeps & Pick<GatewayServices, 'log' | 'version'>;

function blocked(svc: GuardDeps, ctx: RequestContext, e: unknown, info: FinishInfo['input'], startedAt: number): never {
  ensureVersion(ctx, svc.version);
  throw failRequest(svc, ctx.res, e, { input: e instanceof GuardrailBlocked ? { ...info, guardrails: [`${e.guardrail}:block`] } : info, startedAt });
}

/** A chat request, guarded (possibly redacted); the hits go on `info`. */
export async function guardChat(svc: GuardDeps, ctx: RequestContext, req: CanonicalRequest, info: FinishInfo['input'], startedAt: number): Promise<CanonicalRequest> {
  try {
    const g = await guardRequest(svc.state.fileConfig.guardrails, ctx.req.headers, req, svc.log, ctx.requestId);
    if (g.hits.length > 0) info.guardrails = g.hits;
    return g.request;
  } catch (e) {
    return blocked(svc, ctx, e, info, startedAt);
  }
}

/** A JSON operation's body, guarded (its prompt fields possibly redacted); the hits go on `info`. */
export async function guardJson(svc: GuardDeps, ctx: RequestContext, body: Record<string, unknown>, info: FinishInfo['input'], startedAt: number): Promise<Record<string, unknown>> {
  try {
    const g = await guardBody(svc.state.fileConfig.guardrails, ctx.req.headers, body, svc.log, ctx.requestId);
    if (g.hits.length > 0) info.guardrails = g.hits;
    return g.body;
  } catch (e) {
    return blocked(svc, ctx, e, info, startedAt);
  }
}
