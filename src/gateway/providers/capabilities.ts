/**
 * Capabilities guessed from a model id, per provider kind, for models the operator did not describe.
 * Operators override any field with a model spec (gateway.yaml `models:` entries).
 */
import type { EmbeddingModality } from '../canonical.js';
import type { ModelCapabilities } from './types.js';

const TEXT: EmbeddingModality[] = ['text'];
const TEXT_IMAGE: EmbeddingModality[] = ['text', 'image'];

function base(overrides: Partial<ModelCapabilities>): ModelCapabilities {
  return { chat: true, embeddings: false, image: false, thinking: false, thinkingDisable: false, modalities: TEXT, embeddingModalities: [], ...overrides };
}

const EMBEDDING_ID = /embed|embedding|bge-|nomic|mxbai|minilm|e5-|gte-/i;

export function openaiCapabilities(id: string): ModelCapabilities {
  if (EMBEDDING_ID.test(id)) return base({ chat: false, embeddings: true });
  if (/^(dall-e|gpt-image)|stable-diffusion|flux/i.test(id)) return base({ chat: false, image: true });
  const reasoning = /(^|\/)(o\d|gpt-5|gpt-oss)|reasoner|deepseek-r1|qwq|qwen3|magistral/i.test(id);
  // Models that take "reasoning off": gpt-5.1+ (effort none), qwen3 hybrid models.
  const canDisable = /gpt-5\.[1-9]|qwen3/i.test(id);
  const vision = /4o|gpt-4\.1|gpt-4-turbo|gpt-5|(^|\/)o[34]|vision|-vl|vl-|llava|gemma-?3|pixtral|claude|gemini/i.test(id);
  return base({ thinking: reasoning, thinkingDisable: reasoning && canDisable, modalities: vision ? TEXT_IMAGE : TEXT });
}

export function anthropicCapabilities(id: string): ModelCapabilities {
  // Extended thinking: Claude 3.7 and every Claude 4 family model; all accept `thinking: {type: disabled}`.
  const thinking = /claude-(3-7|3\.7|sonnet-4|opus-4|haiku-4|4)/i.test(id);
  return base({ thinking, thinkingDisable: thinking, modalities: ['text', 'image', 'document'] });
}

export function geminiCapabilities(id: string): ModelCapabilities {
  if (EMBEDDING_ID.test(id)) return base({ chat: false, embeddings: true });
  if (/imagen|image-generation/i.test(id)) return base({ chat: false, image: true });
  const thinking = /gemini-(2\.5|3)/i.test(id);
  // 2.5 Flash and Flash-Lite take thinkingBudget 0; 2.5 Pro and Gemini 3 cannot switch thinking off.
  const canDisable = /gemini-2\.5-flash/i.test(id);
  return base({ thinking, thinkingDisable: thinking && canDisable, modalities: ['text', 'image', 'audio', 'video', 'document'] });
}

export function ollamaCapabilities(id: string): ModelCapabilities {
  if (EMBEDDING_ID.test(id)) return base({ chat: false, embeddings: true });
  const thinking = /qwen3|deepseek-r1|gpt-oss|magistral|qwq/i.test(id);
  const canDisable = /qwen3|deepseek-r1/i.test(id);
  const vision = /llava|vision|gemma3|qwen2\.5vl|qwen-?vl|minicpm-v|moondream|llama4/i.test(id);
  return base({ thinking, thinkingDisable: thinking && canDisable, modalities: vision ? TEXT_IMAGE : TEXT });
}

/** The family prefix of a model id (`claude-sonnet-4` → `claude`, `qwen3:8b` → `qwen`). */
export function modelFamily(modelId: string): string {
  const last = modelId.split('/').pop() ?? modelId;
  return /^[a-z]+/i.exec(last)?.[0]?.toLowerCase() || 'model';
}

/** Seed: the no-thinking variant id `<family>-gateway-no-thinking/<provider>/<model>`. */
export const NO_THINKING_MARKER = '-gateway-no-thinking/';

export function noThinkingModelId(provider: string, modelId: string): string {
  return `${modelFamily(modelId)}${NO_THINKING_MARKER}${provider}/${modelId}`;
}

/** `claude-gateway-no-thinking/anthropic/claude-sonnet-4` → `anthropic/claude-sonnet-4`; undefined for other ids. */
export function stripNoThinking(id: string): string | undefined {
  const i = id.indexOf(NO_THINKING_MARKER);
  if (i <= 0) return undefined;
  const prefix = id.slice(0, i);
  if (!/^[a-z]+$/i.test(prefix)) return undefined;
  const rest = id.slice(i + NO_THINKING_MARKER.length);
  return rest.includes('/') ? rest : undefined;
}
