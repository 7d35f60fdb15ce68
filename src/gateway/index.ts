/**
 * The model gateway component (seed 001): inference routes in every client format, management API,
 * gateway.yaml, and the in-process chat handle the pipeline drafts through.
 */
import type { ComponentDefinition, ComponentInstance } from '../http/component.js';
import { GatewayAuth } from './auth.js';
import { buildHandle } from './handle-impl.js';
import { BasicPolicy } from './routing/policy.js';
import { RoutingMetrics } from './routing/metrics.js';
import { sleepWithSignal } from './routing/attempts.js';
import { gatewayRouter, renderGatewayError } from './routes/index.js';
import type { GatewayServices } from './services.js';
import { GatewayState } from './state.js';
import { GATEWAY_MIGRATIONS, GatewayStore } from './store.js';
import { H } from './telemetry.js';
import { UsageRecorder } from './usage.js';

export type { GatewayHandle, GatewayChatRequest, GatewayChatResult, GatewayChatMessage } from './handle.js';

/** How far back the request log seeds the per-combo counts (least-used, /api/combos/metrics). */
const METRICS_SEED_MS = 7 * 24 * 3600 * 1000;

/**
 * Settings from the environment, overridable in ctl.yaml `gateway:` (`require_api_key`,
 * `initial_password`): the environment names are the seed's.
 */
function effectiveEnv(env: NodeJS.ProcessEnv, config: Record<string, unknown>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  if (out.REQUIRE_API_KEY === undefined && config.require_api_key !== undefined) out.REQUIRE_API_KEY = String(config.require_api_key);
  if (out.INITIAL_PASSWORD === undefined && typeof config.initial_password === 'string') out.INITIAL_PASSWORD = config.initial_password;
  return out;
}

export function createGatewayServices(ctx: Parameters<ComponentDefinition['create']>[0]): GatewayServices {
  const env = effectiveEnv(ctx.env, ctx.config ?? {});
  const db = new GatewayStore(ctx.openStore(GATEWAY_MIGRATIONS));
  const state = new GatewayState(db, ctx.stateDir, env, ctx.clock);
  const auth = new GatewayAuth(db, () => state.catalog, ctx.clock, env);
  const usage = new UsageRecorder(db, ctx.log, auth.lastUsed);
  const metrics = new RoutingMetrics();
  try {
    metrics.seed(db.comboTargetCounts(ctx.clock.now() - METRICS_SEED_MS));
  } catch (e) {
    ctx.log.warn({ err: e }, 'gateway: could not seed combo metrics from the request log');
  }
  return {
    state,
    auth,
    usage,
    metrics,
    policy: new BasicPolicy(() => state.catalog.settings),
    strategy: { metrics, pricing: state.catalog.pricing, random: Math.random, counters: new Map() },
    clock: ctx.clock,
    egress: ctx.egress,
    log: ctx.log,
    version: ctx.version,
    sleep: sleepWithSignal,
  };
}

export const gatewayComponent: ComponentDefinition = {
  name: 'gateway',
  defaultAddress: '127.0.0.1:20128',
  create(ctx): ComponentInstance {
    const svc = createGatewayServices(ctx);
    // The strategy context reads prices of the current catalog.
    svc.state.onChange(() => {
      svc.strategy.pricing = svc.state.catalog.pricing;
    });
    for (const s of svc.state.catalog.shadowed) ctx.log.warn(`gateway: ${s} in the database is shadowed by gateway.yaml`);
    return {
      router: gatewayRouter(svc),
      renderError: renderGatewayError,
      before(c) {
        c.res.setHeader(H.version, svc.version);
      },
      handle: buildHandle(svc),
      reload() {
        svc.state.reloadFile();
        ctx.log.info({ file: svc.state.filePath }, 'gateway: configuration reloaded');
      },
      stop() {
        svc.usage.stop();
      },
    };
  },
};
