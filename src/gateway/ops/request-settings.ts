/**
 * General settings that shape a chat request: the global system prompt (before or after the
 * client's own) and the thinking budget (requests that ask for reasoning get a fixed budget, or a
 * capped one).
 */
import type { CanonicalRequest } from '../canonical.js';
import type { GeneralSettings } from './settings.js';

export function applyGeneral(s: GeneralSettings, req: CanonicalRequest): CanonicalRequest {
  let out = req;
  const sp = s.systemPrompt;
  if (sp.enabled && sp.prompt.trim()) {
    const system = !req.system ? sp.prompt : sp.position === 'prepend' ? `${sp.prompt}\n\n${req.system}` : `${req.system}\n\n${sp.prompt}`;
    out = { ...out, system };
  }
  const tb = s.thinkingBudget;
  const t = req.thinking;
  if (tb.mode !== 'passthrough' && t && t.enabled) {
    const budgetTokens = tb.mode === 'fixed' ? tb.tokens : Math.min(t.budgetTokens ?? tb.tokens, tb.tokens);
    out = { ...out, thinking: { ...t, budgetTokens } };
  }
  return out;
}
