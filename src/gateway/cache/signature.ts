/**
 * The response cache's key: SHA-256 over everything in a request that changes the answer, namespaced
 * per API key. Unlike OmniRoute's key (model, role/content, temperature, top_p), tools, tool_choice,
 * response_format, max tokens, stop, seed, penalties, reasoning settings and unmodelled extension
 * fields are all in it: two requests that differ only in their tools never share an entry. What does
 * not change the answer is left out: `stream` (a cached answer is replayed as a stream), whether the
 * client wants the usage chunk, the end-user id, and the client's wire format (the canonical answer is
 * rendered in whatever format asks).
 */
import { createHash } from 'node:crypto';
import type { CanonicalRequest } from '../canonical.js';

/** JSON with object keys sorted, so equal requests hash equally whatever order their fields came in. */
export function stableStringify(v: unknown): string {
  if (v === null || typeof v !== 'object') return v === undefined ? 'null' : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(o[k])}`).join(',')}}`;
}

/** Extension fields that never change the answer. */
const NEUTRAL_EXTRA = new Set(['stream_options', 'user', 'metadata', 'store', 'service_tier', 'safety_identifier', 'prompt_cache_key']);

function answerExtra(extra: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!extra) return undefined;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(extra)) {
    if (NEUTRAL_EXTRA.has(k) || v === undefined) continue;
    (out ??= {})[k] = v;
  }
  return out;
}

/** Hex SHA-256 of the answer-relevant fields of `req` under `namespace` (the API key id, or `-`). */
export function requestSignature(req: CanonicalRequest, namespace: string): string {
  const extra = answerExtra(req.extra);
  const fields = {
    v: 1,
    ns: namespace,
    model: req.model,
    system: req.system,
    messages: req.messages,
    tools: req.tools,
    toolChoice: req.toolChoice,
    parallelToolCalls: req.parallelToolCalls,
    maxTokens: req.maxTokens,
    temperature: req.temperature,
    topP: req.topP,
    topK: req.topK,
    stop: req.stop,
    seed: req.seed,
    frequencyPenalty: req.frequencyPenalty,
    presencePenalty: req.presencePenalty,
    responseFormat: req.responseFormat,
    thinking: req.thinking,
    extra,
    // Extension fields reach the upstream only when the client and provider formats match.
    ...(extra ? { format: req.sourceFormat } : {}),
  };
  return createHash('sha256').update(stableStringify(fields)).digest('hex');
}

/** Deterministic requests (temperature exactly 0, or a seed) are the ones whose answer may be reused. */
export function isDeterministic(req: CanonicalRequest): boolean {
  return req.temperature === 0 || req.seed !== undefined;
}
