import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import { nowIso } from '../time.js';

export interface Activity {
  id: number;
  type: string;
  message: string;
  entity_type: string | null;
  entity_id: string | null;
  created_at: string;
}

/** The recent-activity log ("post 12 approved", "pipeline run … drafted 5 posts", ...). */
export class ActivityRepo {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  add(type: string, message: string, entityType?: string, entityId?: string | number): void {
    this.store
      .prepare('INSERT INTO activity (type, message, entity_type, entity_id, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(type, message, entityType ?? null, entityId === undefined ? null : String(entityId), nowIso(this.clock));
  }

  recent(limit: number): Activity[] {
    return this.store.prepare('SELECT * FROM activity ORDER BY id DESC LIMIT ?').all(limit) as Activity[];
  }
}
