import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
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
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async add(type: string, message: string, entityType?: string, entityId?: string | number): Promise<void> {
    await this.sql.run(
      'INSERT INTO activity (type, message, entity_type, entity_id, created_at) VALUES (?, ?, ?, ?, ?)',
      type,
      message,
      entityType ?? null,
      entityId === undefined ? null : String(entityId),
      nowIso(this.clock),
    );
  }

  recent(limit: number): Promise<Activity[]> {
    return this.sql.all<Activity>('SELECT * FROM activity ORDER BY id DESC LIMIT ?', limit);
  }
}
