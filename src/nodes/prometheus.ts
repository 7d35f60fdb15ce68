/**
 * The node monitor's `GET /metrics`: monitored addresses by state, accounts, and the last poll
 * cycle (its duration and counts), read when Prometheus scrapes.
 */
import { ComponentMetrics, type Labeled } from '../http/metrics.js';
import type { CycleReport } from './poller.js';
import { OFFLINE, OUT, isErrorState } from './node-object.js';
import type { NodesData } from './data.js';

/** The state label of a stored status. */
function stateOf(status: string | null): string {
  if (status === null) return 'waiting';
  if (status === OFFLINE) return 'offline';
  if (status === OUT) return 'out';
  if (isErrorState(status)) return 'error';
  return 'online';
}

export class NodesMetrics {
  private cycles = 0;
  private last?: CycleReport;
  readonly endpoint: ComponentMetrics;

  constructor(store: NodesData) {
    this.endpoint = new ComponentMetrics((m) => {
      m.gauge('ctl_nodes_nodes', 'Monitored node addresses by state (online, offline, out, error, waiting).', ['state'], async () => {
        const counts: Record<string, number> = { online: 0, offline: 0, out: 0, error: 0, waiting: 0 };
        for (const r of await store.statusCounts()) counts[stateOf(r.status)] = (counts[stateOf(r.status)] ?? 0) + r.n;
        return Object.entries(counts).map(([state, n]) => [{ state }, n]) as Labeled;
      });
      m.gauge('ctl_nodes_accounts', 'Accounts (node lists).', [], async () => [[{}, await store.accountCount()]]);
      m.counter('ctl_nodes_poll_cycles_total', 'Poll cycles run.', [], () => [[{}, this.cycles]]);
      m.gauge('ctl_nodes_poll_duration_seconds', 'Duration of the last poll cycle.', [], () => (this.last ? [[{}, this.last.durationMs / 1000]] : []));
      m.gauge('ctl_nodes_poll_last_result', 'Addresses of the last poll cycle by result (online, offline, error).', ['result'], () =>
        this.last
          ? [
              [{ result: 'online' }, this.last.online],
              [{ result: 'offline' }, this.last.offline],
              [{ result: 'error' }, this.last.errors],
            ]
          : [],
      );
    });
  }

  onCycle(report: CycleReport): void {
    this.cycles++;
    this.last = report;
  }
}
