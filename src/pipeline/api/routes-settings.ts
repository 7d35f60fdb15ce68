import { MODEL_KEY } from '../model-setting.js';
import type { Services } from '../services.js';
import type { ApiRegistry } from './registry.js';
import { ModelConfig, ModelSet, ModelSetResponse } from './schemas.js';

export function settingsRoutes(api: ApiRegistry, s: Services): void {
  api.add({
    method: 'GET',
    path: '/api/settings/model',
    tag: 'settings',
    summary: 'The drafting model: the database value (source "database"), else PIPELINE_MODEL (source "env")',
    response: ModelConfig,
    handler: () => s.model.current(),
  });
  api.add({
    method: 'PUT',
    path: '/api/settings/model',
    tag: 'settings',
    summary: 'Set the drafting model (any model id the gateway resolves); persisted in the database',
    body: ModelSet,
    response: ModelSetResponse,
    handler: async (_ctx, body: { model_id: string }) => {
      const modelId = body.model_id.trim();
      await s.tx(async (r) => {
        await r.settings.set(MODEL_KEY, modelId);
        await r.activity.add('model_set', `Model set to ${modelId}`, 'settings', 'model_id');
      });
      return { model_id: modelId, message: `Model updated to ${modelId}` };
    },
  });
  api.add({
    method: 'DELETE',
    path: '/api/settings/model',
    tag: 'settings',
    summary: 'Forget the database value and fall back to PIPELINE_MODEL',
    response: ModelConfig,
    handler: async () => {
      await s.tx(async (r) => {
        if (await r.settings.delete(MODEL_KEY)) await r.activity.add('model_cleared', 'Model setting cleared (PIPELINE_MODEL applies)', 'settings', 'model_id');
      });
      return s.model.current();
    },
  });
}
