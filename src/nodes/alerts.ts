/**
 * The node monitor's alerts in ctl's alert manager: after each poll cycle, every account's node
 * that is offline (getmynodes `Err` 1), out of the network (`_OUT_`, `Err` 3) or stuck (answering,
 * with a height that has not moved for `poll.stuck-after` polls) fires `NodeOffline`,
 * `NodeOutOfNetwork` or `NodeStuck` with its `ip`, `name`, `node_id` and `account` (the account
 * hash's first 8 characters); a node that recovers resolves it. The state comes from the store, so
 * addresses not polled in a cycle keep what they had.
 */
import type { InternalAlert, InternalAlerts } from '../http/component.js';
import { OFFLINE, OUT } from './node-object.js';
import type { NodesData } from './data.js';
import type { StateRow } from './store.js';

export class NodeAlerts {
  /** Per address: the last height seen and for how many polls in a row it has not moved. */
  private readonly heights = new Map<string, { height: number; same: number }>();

  constructor(
    private readonly store: NodesData,
    private readonly alerts: InternalAlerts,
    private readonly stuckAfter: number,
  ) {}

  /**
   * Another daemon polls now: this one's node alerts are resolved (with several daemons the
   * cluster's state of each follows the poller's reports; kept firing here, they would never end).
   */
  withdraw(): void {
    if (!this.alerts.enabled) return;
    this.heights.clear();
    for (const name of ['NodeOffline', 'NodeOutOfNetwork', 'NodeStuck']) this.alerts.reconcile(name, []);
  }

  /** After a cycle: `polled` are the states it wrote. */
  async afterCycle(polled: readonly StateRow[]): Promise<void> {
    if (!this.alerts.enabled) return;
    for (const r of polled) {
      const answered = r.status !== null && r.status !== OFFLINE && r.sync_state !== null;
      const h = this.heights.get(r.ip);
      if (!answered) this.heights.delete(r.ip);
      else if (h && h.height === r.height) h.same++;
      else this.heights.set(r.ip, { height: r.height, same: 0 });
    }
    const offline: InternalAlert[] = [];
    const out: InternalAlert[] = [];
    const stuck: InternalAlert[] = [];
    for (const n of await this.store.ownedNodes()) {
      const labels = { ip: n.ip, name: n.name, node_id: String(n.id), account: n.hash.slice(0, 8) };
      const who = n.name ? `${n.name} (${n.ip})` : n.ip;
      const alert = (summary: string): InternalAlert => ({ alertname: '', labels, annotations: { summary }, path: '/api/getmynodes' });
      if (n.status === OFFLINE) offline.push(alert(`node ${who} does not answer`));
      else if (n.status === OUT) out.push(alert(`node ${who} is out of the network`));
      else if ((this.heights.get(n.ip)?.same ?? 0) >= this.stuckAfter) stuck.push(alert(`node ${who} has been at height ${this.heights.get(n.ip)!.height} for ${this.heights.get(n.ip)!.same} polls`));
    }
    this.alerts.reconcile('NodeOffline', offline);
    this.alerts.reconcile('NodeOutOfNetwork', out);
    this.alerts.reconcile('NodeStuck', stuck);
  }
}
