/**
 * The daemon's `GET /metrics` (the Core API's listener and `http://core/metrics` on the socket):
 * each server's listener, each component's health, uptime, rate-limiter hits by route and
 * result, and the process metrics (CPU, memory, event-loop lag, handles).
 */
import { ComponentMetrics, type Labeled } from '../http/metrics.js';
import type { DaemonControl } from './daemon-control.js';

export function daemonMetrics(daemon: () => DaemonControl): ComponentMetrics {
  return new ComponentMetrics((m) => {
    m.gauge('ctl_daemon_info', 'The daemon, with its name and version (always 1).', ['name', 'version'], () => {
      const i = daemon().info();
      return [[{ name: i.name, version: i.version }, 1]];
    });
    m.gauge('ctl_daemon_uptime_seconds', 'Seconds since the daemon started.', [], () => [[{}, daemon().info().uptime_seconds]]);
    m.gauge('ctl_server_up', 'Each server: 1 when it serves (on its TCP listener or the socket only), 0 when stopped or failed.', ['server', 'state'], () =>
      Object.values(daemon().info().servers).map((s) => [{ server: s.name, state: s.state }, s.state === 'listening' || s.state === 'socket-only' ? 1 : 0]) as Labeled,
    );
    m.gauge('ctl_component_up', 'Each component: 1 running, 0 down (its configuration file could not be loaded).', ['component'], () =>
      Object.values(daemon().info().servers).map((s) => [{ component: s.name }, s.component === 'running' ? 1 : 0]) as Labeled,
    );
    m.counter('ctl_ratelimit_hits_total', 'Requests on rate-limited routes by server, route and result (allowed, blocked).', ['server', 'route', 'result'], () => daemon().ratelimit?.tally.values() ?? []);
  });
}
