/**
 * Options of the `rules` and `sla-aware` combo strategies, checked where a combo is defined
 * (gateway.yaml or the API):
 *  rules  [{when: {minPromptTokens?, maxPromptTokens?, hasTools?, hasImages?, stream?, apiKeyIds?},
 *          prefer: [target refs]}]: the first rule whose every condition holds puts its targets first
 *  sla    {maxLatencyMs (5000), maxErrorRate (0.2)}: targets within it go first
 */
import type { CanonicalRequest } from '../canonical.js';
import { estimateTokens } from '../translate/tokens.js';

export interface RuleCondition {
  minPromptTokens?: number;
  maxPromptTokens?: number;
  hasTools?: boolean;
  hasImages?: boolean;
  stream?: boolean;
  apiKeyIds?: string[];
}

export interface ComboRule {
  when: RuleCondition;
  prefer: string[];
}

export interface ComboSla {
  maxLatencyMs: number;
  maxErrorRate: number;
}

export const DEFAULT_SLA: ComboSla = { maxLatencyMs: 5000, maxErrorRate: 0.2 };

/** What rules look at, computed once per request and only when a combo has rules. */
export interface RequestFeatures {
  promptTokens: number;
  hasTools: boolean;
  hasImages: boolean;
  stream: boolean;
  apiKeyId?: string;
}

export function featuresOf(req: CanonicalRequest, apiKeyId: string | undefined): RequestFeatures {
  return {
    promptTokens: estimateTokens(req),
    hasTools: (req.tools?.length ?? 0) > 0,
    hasImages: req.messages.some((m) => m.content.some((p) => p.type === 'image')),
    stream: req.stream,
    ...(apiKeyId !== undefined ? { apiKeyId } : {}),
  };
}

export function ruleMatches(w: RuleCondition, f: RequestFeatures): boolean {
  if (w.minPromptTokens !== undefined && f.promptTokens < w.minPromptTokens) return false;
  if (w.maxPromptTokens !== undefined && f.promptTokens > w.maxPromptTokens) return false;
  if (w.hasTools !== undefined && f.hasTools !== w.hasTools) return false;
  if (w.hasImages !== undefined && f.hasImages !== w.hasImages) return false;
  if (w.stream !== undefined && f.stream !== w.stream) return false;
  if (w.apiKeyIds !== undefined && (f.apiKeyId === undefined || !w.apiKeyIds.includes(f.apiKeyId))) return false;
  return true;
}

const CONDITIONS = new Set(['minPromptTokens', 'maxPromptTokens', 'hasTools', 'hasImages', 'stream', 'apiKeyIds']);

/** Check `rules` and `sla` against the combo's target refs; throws an Error naming what is wrong. */
export function parseComboOptions(raw: { rules?: unknown; sla?: unknown }, targets: readonly string[], where: string): { rules?: ComboRule[]; sla?: ComboSla } {
  const out: { rules?: ComboRule[]; sla?: ComboSla } = {};
  if (raw.rules !== undefined) {
    if (!Array.isArray(raw.rules) || raw.rules.length > 100) throw new Error(`${where}: rules must be a list (at most 100)`);
    out.rules = raw.rules.map((r, i) => {
      const at = `${where}: rules[${i}]`;
      if (typeof r !== 'object' || r === null) throw new Error(`${at} must be {when, prefer}`);
      const { when = {}, prefer } = r as { when?: Record<string, unknown>; prefer?: unknown };
      if (typeof when !== 'object' || when === null) throw new Error(`${at}.when must be a mapping`);
      for (const k of Object.keys(when)) if (!CONDITIONS.has(k)) throw new Error(`${at}.when: unknown condition ${k} (${[...CONDITIONS].join(', ')})`);
      for (const k of ['minPromptTokens', 'maxPromptTokens']) if (when[k] !== undefined && !(Number.isInteger(when[k]) && (when[k] as number) >= 0)) throw new Error(`${at}.when.${k} must be a whole number`);
      for (const k of ['hasTools', 'hasImages', 'stream']) if (when[k] !== undefined && typeof when[k] !== 'boolean') throw new Error(`${at}.when.${k} must be true or false`);
      if (when.apiKeyIds !== undefined && !(Array.isArray(when.apiKeyIds) && when.apiKeyIds.every((x) => typeof x === 'string'))) throw new Error(`${at}.when.apiKeyIds must be a list of key ids`);
      if (!Array.isArray(prefer) || prefer.length === 0 || !prefer.every((p) => typeof p === 'string')) throw new Error(`${at}.prefer must list target models`);
      for (const p of prefer as string[]) if (!targets.includes(p)) throw new Error(`${at}.prefer: ${p} is not one of the combo's targets`);
      return { when: when as RuleCondition, prefer: prefer as string[] };
    });
  }
  if (raw.sla !== undefined) {
    const s = raw.sla as Record<string, unknown>;
    if (typeof s !== 'object' || s === null) throw new Error(`${where}: sla must be {maxLatencyMs?, maxErrorRate?}`);
    for (const k of Object.keys(s)) if (k !== 'maxLatencyMs' && k !== 'maxErrorRate') throw new Error(`${where}: sla: unknown field ${k}`);
    if (s.maxLatencyMs !== undefined && !(typeof s.maxLatencyMs === 'number' && s.maxLatencyMs > 0)) throw new Error(`${where}: sla.maxLatencyMs must be a positive number`);
    if (s.maxErrorRate !== undefined && !(typeof s.maxErrorRate === 'number' && s.maxErrorRate >= 0 && s.maxErrorRate <= 1)) throw new Error(`${where}: sla.maxErrorRate must be between 0 and 1`);
    out.sla = { maxLatencyMs: (s.maxLatencyMs as number | undefined) ?? DEFAULT_SLA.maxLatencyMs, maxErrorRate: (s.maxErrorRate as number | undefined) ?? DEFAULT_SLA.maxErrorRate };
  }
  return out;
}
