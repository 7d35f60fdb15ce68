import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
import { nowIso } from '../time.js';

/** Keys of research items already turned into posts, so a later run skips them. */
export class UsedItemsRepo {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /** The subset of `keys` already used. */
  async used(keys: string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const k of keys) if (await this.sql.get('SELECT 1 FROM used_items WHERE key = ?', k)) out.add(k);
    return out;
  }

  async markUsed(keys: string[], batchId: string): Promise<void> {
    const now = nowIso(this.clock);
    for (const k of keys) await this.sql.run('INSERT INTO used_items (key, batch_id, used_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING', k, batchId, now);
  }
}
