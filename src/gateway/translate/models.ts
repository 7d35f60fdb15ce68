/** Model listings in each client format's shape (OpenAI list, Anthropic list, Gemini models, Ollama tags). */
import type { ClientFormat } from '../canonical.js';
import type { ModelListEntry } from './types.js';

export function renderModelList(format: ClientFormat, models: ModelListEntry[]): unknown {
  switch (format) {
    case 'openai':
    case 'openai-responses':
      return {
        object: 'list',
        data: models.map((m) => {
          const row: Record<string, unknown> = { id: m.id, object: 'model', created: m.created ?? 0, owned_by: m.ownedBy ?? 'gateway' };
          if (m.type && m.type !== 'chat') row.type = m.type;
          if (m.contextLength) row.context_length = m.contextLength;
          return row;
        }),
      };
    case 'anthropic':
      return {
        data: models.map((m) => ({
          type: 'model',
          id: m.id,
          display_name: m.displayName ?? m.id,
          created_at: new Date((m.created ?? 0) * 1000).toISOString(),
        })),
        has_more: false,
        first_id: models[0]?.id ?? null,
        last_id: models[models.length - 1]?.id ?? null,
      };
    case 'gemini':
      return {
        models: models.map((m) => ({
          name: `models/${m.id}`,
          baseModelId: m.id,
          version: '001',
          displayName: m.displayName ?? m.id,
          description: '',
          inputTokenLimit: m.contextLength ?? 0,
          outputTokenLimit: m.maxOutputTokens ?? 0,
          supportedGenerationMethods:
            m.type === 'embedding' ? ['embedContent', 'batchEmbedContents'] : ['generateContent', 'streamGenerateContent', 'countTokens'],
          thinking: m.thinking ?? false,
        })),
      };
    case 'ollama':
      return {
        models: models.map((m) => ({
          name: m.id,
          model: m.id,
          modified_at: new Date((m.created ?? 0) * 1000).toISOString(),
          size: 0,
          digest: '',
          details: { parent_model: '', format: 'remote', family: m.ownedBy ?? 'gateway', families: null, parameter_size: '', quantization_level: '' },
        })),
      };
  }
}
