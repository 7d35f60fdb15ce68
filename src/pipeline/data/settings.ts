import type { Clock } from '../../http/clock.js';
import type { Sql } from '../../store/sql.js';
import { nowIso } from '../time.js';

/** Small key/value settings persisted in the database (the model id). */
export class SettingsRepo {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.sql.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', key))?.value;
  }

  async set(key: string, value: string): Promise<void> {
    await this.sql.run(
      'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      key,
      value,
      nowIso(this.clock),
    );
  }

  async delete(key: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM settings WHERE key = ?', key)) > 0;
  }
}
