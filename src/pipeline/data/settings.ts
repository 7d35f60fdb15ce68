import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import { nowIso } from '../time.js';

/** Small key/value settings persisted in the database (the model id). */
export class SettingsRepo {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  get(key: string): string | undefined {
    return (this.store.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  }

  set(key: string, value: string): void {
    this.store
      .prepare('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at')
      .run(key, value, nowIso(this.clock));
  }

  delete(key: string): boolean {
    return this.store.prepare('DELETE FROM settings WHERE key = ?').run(key).changes > 0;
  }
}
