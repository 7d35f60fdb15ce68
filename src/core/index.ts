import type { ComponentDefinition, ComponentInstance } from '../http/index.js';
import type { DaemonControl } from './daemon-control.js';
import { sendEnvelopeError } from './envelope.js';
import { coreRoutes } from './routes.js';
import { daemonMetrics } from './metrics.js';
import { join } from 'node:path';
import { parseDuration } from '../http/duration.js';
import { ClusterService } from './cluster/service.js';
import { ClusterStore, CORE_MIGRATIONS } from './cluster/store.js';

export type * from './daemon-control.js';

/** API extensions this Core API offers (reported by GET /core/1.0). */
export const CORE_EXTENSIONS = ['daemon_config_v1', 'ratelimit_v1', 'cluster_v1'];

/** ctl.yaml `core.heartbeat-interval`: how often members tell each other they are there (default 10s). */
function heartbeatMs(config: Record<string, unknown>): number {
  const v = config['heartbeat-interval'];
  if (v === undefined) return 10_000;
  const ms = parseDuration(v);
  if (ms === null || ms < 100) throw new Error(`core.heartbeat-interval: ${JSON.stringify(v)} is not a duration of at least 100ms`);
  return ms;
}

/** The Core API: daemon configuration over the control socket (Host `core` and any unknown host). */
export const coreComponent: ComponentDefinition = {
  name: 'core',
  defaultAddress: null,
  configKeys: { 'heartbeat-interval': true },
  create(ctx): ComponentInstance {
    const daemon = () => {
      const d = ctx.handleOf<DaemonControl>('daemon');
      if (!d) throw new Error('daemon control handle missing');
      return d;
    };
    const cluster = new ClusterService({
      store: new ClusterStore(ctx.openStore(CORE_MIGRATIONS)),
      daemon,
      egress: ctx.egress,
      certificatesDir: join(ctx.stateDir, 'certificates'),
      clock: ctx.clock,
      log: ctx.log,
      heartbeatMs: heartbeatMs(ctx.config),
    });
    const router = coreRoutes(daemon, CORE_EXTENSIONS, cluster);
    daemonMetrics(daemon).route(router);
    return {
      router,
      renderError: (c, err) => sendEnvelopeError(c.res, err),
      start: () => cluster.start(),
      stop: () => cluster.stop(),
    };
  },
};
