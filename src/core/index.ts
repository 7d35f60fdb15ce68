import type { ComponentDefinition, ComponentInstance } from '../http/index.js';
import type { DaemonControl } from './daemon-control.js';
import { sendEnvelopeError } from './envelope.js';
import { coreRoutes } from './routes.js';
import { daemonMetrics } from './metrics.js';

export type * from './daemon-control.js';

/** API extensions this Core API offers (reported by GET /core/1.0). */
export const CORE_EXTENSIONS = ['daemon_config_v1', 'ratelimit_v1'];

/** The Core API: daemon configuration over the control socket (Host `core` and any unknown host). */
export const coreComponent: ComponentDefinition = {
  name: 'core',
  defaultAddress: null,
  create(ctx): ComponentInstance {
    const daemon = () => {
      const d = ctx.handleOf<DaemonControl>('daemon');
      if (!d) throw new Error('daemon control handle missing');
      return d;
    };
    const router = coreRoutes(daemon, CORE_EXTENSIONS);
    daemonMetrics(daemon).route(router);
    return {
      router,
      renderError: (c, err) => sendEnvelopeError(c.res, err),
    };
  },
};
