/**
 * What a chat request may use, before it is sent: cluster reservations (storage.redis) hold this
 * much until the real use is known. Input tokens are the prompt estimate of translate/tokens.ts
 * (about four characters a token), output tokens the request's max_tokens or DEFAULT_OUTPUT_TOKENS;
 * for cost the dearest target of a combo counts. A target without a price costs nothing, as its
 * requests do.
 */
import type { CanonicalRequest } from '../canonical.js';
import type { Resolution } from '../routing/resolve.js';
import type { PriceTable } from '../pricing.js';
import { estimateTokens } from '../translate/tokens.js';

export const DEFAULT_OUTPUT_TOKENS = 1024;

export interface UseEstimate {
  tokens: number;
  usd: number;
}

export function estimateUse(pricing: PriceTable, resolution: Resolution, request: CanonicalRequest): UseEstimate {
  const tokensIn = estimateTokens(request);
  const tokensOut = request.maxTokens ?? DEFAULT_OUTPUT_TOKENS;
  let usd = 0;
  for (const t of resolution.targets) {
    const p = pricing.lookup(t.provider.config.id, t.modelId);
    if (!p) continue;
    usd = Math.max(usd, (tokensIn * (p.input ?? 0) + tokensOut * (p.output ?? 0)) / 1e6);
  }
  return { tokens: tokensIn + tokensOut, usd };
}
