import { nodeObject } from './node-object.js';
import type { NodesData } from './data.js';

/**
 * getmynodes' `{"List":[...]}` per account, serialised once and kept until the account's nodes or
 * any poll result change (the store's list version). A dashboard refreshing every few seconds
 * between 2-minute poll cycles is answered from memory. Lists holding a node still waiting for its
 * first update are not kept (their LatestUpdate reads "now"). Bounded by total size (oldest out).
 */
export class NodeListCache {
  private readonly entries = new Map<number, { key: string; json: string }>();
  private bytes = 0;

  constructor(private readonly maxBytes = 64 << 20) {}

  /** The serialised `{List}` value, or null when the account has no nodes. */
  async get(store: NodesData, accountId: number, now: number): Promise<string | null> {
    const key = await store.listVersion(accountId);
    const hit = this.entries.get(accountId);
    if (hit && hit.key === key) return hit.json;
    const rows = await store.listNodes(accountId);
    if (rows.length === 0) {
      this.drop(accountId);
      return null;
    }
    const json = JSON.stringify({ List: rows.map((r) => nodeObject(r, now)) });
    this.drop(accountId);
    if (rows.every((r) => r.status !== null) && json.length <= this.maxBytes) {
      this.entries.set(accountId, { key, json });
      this.bytes += json.length;
      for (const [id, e] of this.entries) {
        if (this.bytes <= this.maxBytes) break;
        this.entries.delete(id);
        this.bytes -= e.json.length;
      }
    }
    return json;
  }

  private drop(accountId: number): void {
    const e = this.entries.get(accountId);
    if (e) {
      this.entries.delete(accountId);
      this.bytes -= e.json.length;
    }
  }
}
