import type { SettingsRepo } from './data/settings.js';

export interface ModelSetting {
  model_id: string | null;
  /** `database` when set through the API, else `env` (PIPELINE_MODEL, possibly unset). */
  source: 'database' | 'env';
}

const KEY = 'model_id';

/** The drafting model: the database value, else PIPELINE_MODEL. */
export class ModelSettings {
  constructor(
    private readonly settings: SettingsRepo,
    private readonly envModel: string | null,
  ) {}

  current(): ModelSetting {
    const db = this.settings.get(KEY);
    if (db !== undefined) return { model_id: db, source: 'database' };
    return { model_id: this.envModel, source: 'env' };
  }

  set(modelId: string): void {
    this.settings.set(KEY, modelId);
  }

  /** Forget the database value (fall back to the environment). */
  clear(): boolean {
    return this.settings.delete(KEY);
  }
}
