/**
 * Budgets and token limits on the request path: one check before routing (429 when a key's window
 * is spent) and one update when the request is recorded. Keys without budgets or limits cost two Map
 * lookups.
 */
import type { Principal } from '../auth.js';
import type { Resolution } from '../routing/resolve.js';
import type { GatewayServices } from '../services.js';
import type { RequestLogEntry } from '../store.js';

export interface LimitCheck {
  /** `X-Gateway-Budget-Warning` value, when a warning threshold was crossed. */
  budgetWarning?: string;
  /** Tokens left under the most restrictive matching limit. */
  tokensLeft?: number;
}

const NONE: LimitCheck = {};

/** Throws 429 (budget_exceeded, token_limit_exceeded) when the calling key may not spend more. */
export function checkLimits(svc: GatewayServices, principal: Principal, resolution: Resolution): LimitCheck {
  const key = principal.key;
  if (!key || (svc.budgets.size === 0 && svc.tokenLimits.size === 0)) return NONE;
  const now = svc.clock.now();
  const budgetWarning = svc.budgets.check(key.id, now);
  const t = resolution.targets.length === 1 && !resolution.combo ? resolution.targets[0]! : undefined;
  const tokensLeft = svc.tokenLimits.checkRequest(
    key.id,
    resolution.requested,
    t ? { provider: t.provider.config.id, ref: t.ref, modelId: t.modelId } : undefined,
    now,
  );
  if (budgetWarning === undefined && tokensLeft === undefined) return NONE;
  return { ...(budgetWarning !== undefined ? { budgetWarning } : {}), ...(tokensLeft !== undefined ? { tokensLeft } : {}) };
}

/** A recorded request's spend and tokens go to its key's budget and limit windows. */
export function accountUsage(svc: GatewayServices, e: RequestLogEntry): void {
  if (e.apiKeyId === undefined || e.cache === 'hit' || e.cache === 'replay') return;
  if (svc.budgets.size === 0 && svc.tokenLimits.size === 0) return;
  const now = svc.clock.now();
  svc.budgets.onUsage(e.apiKeyId, e.cost, e.ts, now);
  svc.tokenLimits.onUsage(
    {
      apiKeyId: e.apiKeyId,
      ...(e.requestedModel !== undefined ? { requestedModel: e.requestedModel } : {}),
      ...(e.provider !== undefined ? { provider: e.provider } : {}),
      ...(e.model !== undefined ? { model: e.model } : {}),
      tokens: e.tokensIn + e.tokensOut,
      ts: e.ts,
    },
    now,
  );
}
