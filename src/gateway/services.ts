/** Everything the gateway's routes and its in-process handle share, created once per component. */
import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import type { Egress } from '../egress/index.js';
import type { GatewayAuth } from './auth.js';
import type { RoutingMetrics } from './routing/metrics.js';
import type { ResiliencePolicy } from './routing/policy.js';
import type { StrategyContext } from './routing/strategies.js';
import type { GatewayState } from './state.js';
import type { UsageRecorder } from './usage.js';

export interface GatewayServices {
  state: GatewayState;
  auth: GatewayAuth;
  usage: UsageRecorder;
  metrics: RoutingMetrics;
  /** Availability and outcome hook of the attempt loop (replaceable: resilience, issue 6). */
  policy: ResiliencePolicy;
  strategy: StrategyContext;
  clock: Clock;
  egress: Egress;
  log: Logger;
  version: string;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}
