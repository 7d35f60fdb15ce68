import type { SettingsRepo } from './data/settings.js';

export interface ModelSetting {
  model_id: string | null;
  /** `database` when set through the API, else `env` (PIPELINE_MODEL, possibly unset). */
  source: 'database' | 'env';
}

/** The settings key of the drafting model (routes change it inside their transactions). */
export const MODEL_KEY = 'model_id';

/** The drafting model: the database value, else PIPELINE_MODEL. */
export class ModelSettings {
  constructor(
    private readonly settings: SettingsRepo,
    private readonly envModel: string | null,
  ) {}

  async current(): Promise<ModelSetting> {
    const db = await this.settings.get(MODEL_KEY);
    if (db !== undefined) return { model_id: db, source: 'database' };
    return { model_id: this.envModel, source: 'env' };
  }

  set(modelId: string): Promise<void> {
    return this.settings.set(MODEL_KEY, modelId);
  }

  /** Forget the database value (fall back to the environment). */
  clear(): Promise<boolean> {
    return this.settings.delete(MODEL_KEY);
  }
}
