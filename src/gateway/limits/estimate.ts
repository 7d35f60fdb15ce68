/**
 * What a chat request may cost, before it is sent: the budget reservation of a cluster (storage.redis)
 * holds this much until the real cost is known. Input tokens are guessed from the size of the
 * messages (four characters a token), output tokens are the request's max_tokens or
 * DEFAULT_OUTPUT_TOKENS, and the dearest target of a combo counts. A target without a price costs
 * nothing, as its requests do.
 */
import type { CanonicalRequest } from '../canonical.js';
import type { Resolution } from '../routing/resolve.js';
import type { PriceTable } from '../pricing.js';

export const DEFAULT_OUTPUT_TOKENS = 1024;

export function estimateCostUsd(pricing: PriceTable, resolution: Resolution, request: Pick<CanonicalRequest, 'messages' | 'maxTokens' | 'system'>): number {
  let chars = 0;
  for (const m of request.messages) chars += JSON.stringify(m.content ?? '').length;
  if (request.system) chars += JSON.stringify(request.system).length;
  const tokensIn = Math.ceil(chars / 4);
  const tokensOut = request.maxTokens ?? DEFAULT_OUTPUT_TOKENS;
  let most = 0;
  for (const t of resolution.targets) {
    const p = pricing.lookup(t.provider.config.id, t.modelId);
    if (!p) continue;
    most = Math.max(most, (tokensIn * (p.input ?? 0) + tokensOut * (p.output ?? 0)) / 1e6);
  }
  return most;
}
