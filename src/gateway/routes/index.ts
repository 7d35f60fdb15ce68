/**
 * The gateway's router: inference routes (auth K: API key when REQUIRE_API_KEY) and management
 * routes (auth M). Each route carries `auth` meta read by the middleware below; errors are rendered
 * in the wire format the path belongs to.
 */
import type { RequestContext } from '../../http/context.js';
import type { HttpError } from '../../http/errors.js';
import { sendJson } from '../../http/respond.js';
import { Router, type Route } from '../../http/router.js';
import { INTERNAL_PRINCIPAL, type Principal } from '../auth.js';
import { fileRoutes } from '../files/routes.js';
import { batchRoutes } from '../batches/routes.js';
import { webFetchRoutes } from '../webfetch/routes.js';
import { searchRoutes } from '../search/routes.js';
import { webhookRoutes } from '../webhooks/routes.js';
import { memoryRoutes } from '../memory/routes.js';
import { skillRoutes } from '../skills/routes.js';
import { agentSkillRoutes } from '../agent-skills/routes.js';
import { mcpRoutes } from '../agents/mcp/routes.js';
import { settingsRoutes } from '../ops/settings-routes.js';
import { proxyRoutes } from '../proxies/routes.js';
import { registeredKeyRoutes } from '../registered-keys/routes.js';
import { evalRoutes } from '../evals/routes.js';
import { localToolRoutes } from '../local-tools/routes.js';
import { tunnelRoutes } from '../tunnels/routes.js';
import { pluginRoutes } from '../plugins/routes.js';
import { assessRoutes } from '../assess/routes.js';
import { agentTaskRoutes } from '../agents/tasks/routes.js';
import { syncRoutes } from '../sync/routes.js';
import { oauthRoutes } from '../oauth/routes.js';
import { providerNodeRoutes } from './management/provider-nodes.js';
import { systemRoutes } from '../ops/system-routes.js';
import { complianceRoutes } from '../ops/compliance-routes.js';
import { monitoringRoutes } from '../ops/monitoring-routes.js';
import { gatewayHttpError } from './errors.js';
import { a2aRoutes } from '../agents/a2a/routes.js';
import { wsBridgeRoutes } from '../agents/ws-bridge/routes.js';
import { guardrailRoutes } from '../guardrails/routes.js';
import { compressionRoutes } from '../compression/routes.js';
import { AgentSkillStore } from '../agent-skills/store.js';
import { buildHandle } from '../handle-impl.js';
import type { ClientFormat } from '../canonical.js';
import type { GatewayServices } from '../services.js';
import { renderError as renderWireError } from '../translate/index.js';
import { inferenceRoutes } from './inference/index.js';
import { authRoutes } from './management/auth-routes.js';
import { comboRoutes } from './management/combos.js';
import { keyRoutes } from './management/keys.js';
import { modelRoutes } from './management/models.js';
import { providerRoutes } from './management/providers.js';
import { usageRoutes } from './management/usage.js';
import { analyticsRoutes } from './management/analytics.js';
import { cacheRoutes } from './management/cache.js';
import { limitRoutes } from './management/limits.js';
import { resilienceRoutes } from './management/resilience.js';

/** `management-or-key`: management auth (socket, login cookie, management key) or any inference API key. */
export type AuthKind = 'inference' | 'management' | 'management-or-key' | 'public';

/** The client wire format whose error shape a path uses. */
export function formatOfPath(path: string): ClientFormat {
  if (path.startsWith('/v1/messages')) return 'anthropic';
  if (path.startsWith('/v1beta/')) return 'gemini';
  if (path === '/api/chat' || path === '/api/tags' || path.startsWith('/v1/api/')) return 'ollama';
  if (path.startsWith('/api/v1/editor/')) {
    const rest = path.replace(/^\/api\/v1\/editor\/[^/]+/, '');
    if (rest.startsWith('/api/')) return 'ollama';
    if (rest.startsWith('/responses')) return 'openai-responses';
    return 'openai';
  }
  if (path.startsWith('/v1/responses')) return 'openai-responses';
  return 'openai';
}

export function renderGatewayError(ctx: RequestContext, err: HttpError): void {
  const { status, body, headers } = renderWireError(formatOfPath(ctx.url.pathname), err);
  sendJson(ctx.res, status, body, headers);
}

/**
 * A management change, recorded in the audit log: who, what, when, the resource before (read through
 * its own GET route, when it has one) and the answer after, whatever the outcome.
 */
async function audited(svc: GatewayServices, ctx: RequestContext, next: () => Promise<void>): Promise<void> {
  const path = ctx.url.pathname;
  let before: unknown;
  if (ctx.req.method !== 'POST' && !(ctx.req as { [INTERNAL_PRINCIPAL]?: unknown })[INTERNAL_PRINCIPAL]) {
    const r = await svc.internal({ method: 'GET', url: path, trusted: true }).catch(() => undefined);
    if (r && r.status === 200) {
      try {
        before = JSON.parse(r.body) as unknown;
      } catch {
        // not JSON: no before
      }
    }
  }
  const record = (status: number, after: unknown) =>
    svc.audit.append({ ts: svc.clock.now(), actor: svc.auth.actorOf(ctx), method: ctx.req.method ?? 'POST', path, status, before, after: after ?? ctx.state.body });
  try {
    await next();
  } catch (e) {
    const err = gatewayHttpError(e);
    record(err.status, { error: err.message, request: ctx.state.body });
    throw e;
  }
  record(ctx.res.statusCode, ctx.state.answer);
}

export function gatewayRouter(svc: GatewayServices): Router {
  const r = new Router({ ignoreTrailingSlash: true });
  // Not async: the handler's promise is passed on as it is (one promise and frame less per request).
  r.use((ctx, route, next) => {
    const kind = (route.meta.auth as AuthKind | undefined) ?? 'management';
    if (kind === 'management') {
      // require-login off opens management on the TCP listener (the seed's dashboard switch).
      if (svc.runtime.general.value.requireLogin) svc.auth.management(ctx);
      const m = ctx.req.method;
      if (m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS') return audited(svc, ctx, next);
    }
    else if (kind === 'inference') ctx.state.principal = (ctx.req as { [INTERNAL_PRINCIPAL]?: Principal })[INTERNAL_PRINCIPAL] ?? svc.auth.inference(ctx);
    else if (kind === 'management-or-key' && svc.runtime.general.value.requireLogin && !svc.auth.managementPasses(ctx)) ctx.state.principal = svc.auth.inference(ctx);
    return next();
  });
  inferenceRoutes(r, svc);
  const k = (route: Route) => route.tag('auth', 'inference');
  fileRoutes(r, svc.files, k);
  batchRoutes(r, svc.batches, svc.files, k);
  searchRoutes(r, { config: () => svc.state.fileConfig.search, service: svc.search }, k);
  webhookRoutes(r, svc.webhooks, svc.egress, svc.clock);
  memoryRoutes(r, { store: svc.memory, config: () => svc.state.fileConfig.memory, now: () => svc.clock.now(), keyExists: (id) => svc.state.catalog.keysById.has(id) });
  skillRoutes(r, svc.skills, (id) => svc.state.catalog.keysById.has(id));
  agentSkillRoutes(r, new AgentSkillStore(svc.state.db.store), buildHandle(svc), () => svc.clock.now());
  mcpRoutes(r, svc, svc.mcp);
  a2aRoutes(r, svc, svc.a2a);
  wsBridgeRoutes(r, svc, k);
  guardrailRoutes(r, () => svc.state.fileConfig.guardrails);
  compressionRoutes(r, svc.compression, () => svc.clock.now());
  settingsRoutes(r, svc, () => svc.mcp.configChanged());
  proxyRoutes(r, svc);
  registeredKeyRoutes(r, svc);
  evalRoutes(r, svc);
  localToolRoutes(r, svc);
  tunnelRoutes(r, svc, svc.tunnelTarget);
  pluginRoutes(r, svc);
  assessRoutes(r, svc);
  agentTaskRoutes(r, svc);
  syncRoutes(r, svc, svc.sync);
  oauthRoutes(r, svc);
  systemRoutes(r, svc, svc.backups, svc.system);
  monitoringRoutes(r, svc);
  complianceRoutes(r, svc.policies, svc.audit, (id) => svc.state.catalog.keysById.has(id), () => svc.clock.now());
  webFetchRoutes(r, { config: () => svc.state.fileConfig.webFetch, pool: svc.webFetch, egress: svc.egress }, k);
  authRoutes(r, svc);
  providerRoutes(r, svc);
  providerNodeRoutes(r, svc);
  modelRoutes(r, svc);
  comboRoutes(r, svc);
  keyRoutes(r, svc);
  usageRoutes(r, svc);
  limitRoutes(r, svc);
  analyticsRoutes(r, svc);
  resilienceRoutes(r, svc);
  cacheRoutes(r, svc);
  return r;
}
