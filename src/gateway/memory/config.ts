/**
 * gateway.yaml `memory:`: whether stored memories are added to chat requests, and how much.
 *
 *   memory:
 *     inject: true        # add relevant memories to chat requests (x-gateway-no-memory: true skips it)
 *     max_tokens: 2000    # budget of the added text (about 4 characters a token)
 *     max_items: 20
 */
import { Type } from '@sinclair/typebox';
import { compile, describeErrors } from '../../http/schema.js';

export interface MemoryConfig {
  inject: boolean;
  maxTokens: number;
  maxItems: number;
}

export const DEFAULT_MEMORY: MemoryConfig = { inject: true, maxTokens: 2000, maxItems: 20 };

const validate = compile(
  Type.Object(
    {
      inject: Type.Optional(Type.Boolean()),
      max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 32_000 })),
      max_items: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    },
    { additionalProperties: false },
  ),
);

export function parseMemory(raw: unknown): MemoryConfig {
  if (raw === undefined || raw === null) return DEFAULT_MEMORY;
  if (!validate(raw)) throw new Error(describeErrors(validate.errors, 'memory'));
  const m = raw as { inject?: boolean; max_tokens?: number; max_items?: number };
  return { inject: m.inject ?? DEFAULT_MEMORY.inject, maxTokens: m.max_tokens ?? DEFAULT_MEMORY.maxTokens, maxItems: m.max_items ?? DEFAULT_MEMORY.maxItems };
}
