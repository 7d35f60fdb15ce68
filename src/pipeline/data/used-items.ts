import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import { nowIso } from '../time.js';

/** Keys of research items already turned into posts, so a later run skips them. */
export class UsedItemsRepo {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** The subset of `keys` already used. */
  used(keys: string[]): Set<string> {
    const out = new Set<string>();
    const st = this.store.prepare('SELECT 1 FROM used_items WHERE key = ?');
    for (const k of keys) if (st.get(k)) out.add(k);
    return out;
  }

  markUsed(keys: string[], batchId: string): void {
    const now = nowIso(this.clock);
    const st = this.store.prepare('INSERT OR IGNORE INTO used_items (key, batch_id, used_at) VALUES (?, ?, ?)');
    for (const k of keys) st.run(k, batchId, now);
  }
}
