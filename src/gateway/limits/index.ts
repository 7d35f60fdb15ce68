/**
 * Budgets and token limits on the request path: one check before routing (429 when a key's window
 * is spent) and one update when the request is recorded. Keys without budgets or limits cost two Map
 * lookups.
 */
import type { Principal } from '../auth.js';
import type { Resolution } from '../routing/resolve.js';
import type { GatewayServices } from '../services.js';
import type { RequestLogEntry } from '../request-log/store.js';

export interface LimitCheck {
  /** `X-Gateway-Budget-Warning` value, when a warning threshold was crossed. */
  budgetWarning?: string;
  /** Tokens left under the most restrictive matching limit. */
  tokensLeft?: number;
}

const NONE: LimitCheck = {};

/** A request's cluster budget reservation: its id and estimated cost (limits/estimate.ts). */
export interface Reserve {
  requestId: string;
  /** Dollars and tokens the request may use (limits/estimate.ts). */
  usd: number;
  tokens: number;
}

/**
 * Throws 429 (budget_exceeded, token_limit_exceeded) when the calling key may not spend more. The
 * budget check reserves `reserve.usd` (token limits `reserve.tokens`) in the key's windows, for the
 * cluster with shared windows (storage.redis), turned into the real use when the request is recorded.
 */
/** What checking a request's limits reads and writes. */
export type LimitDeps = Pick<GatewayServices, 'rpm' | 'clock' | 'budgets' | 'tokenLimits' | 'webhooks'>;

export async function checkLimits(svc: LimitDeps, principal: Principal, resolution: Resolution, reserve?: Reserve): Promise<LimitCheck> {
  const key = principal.key;
  if (key?.rpm !== undefined) await svc.rpm.admit(key.id, key.rpm, svc.clock.now());
  if (!key || (svc.budgets.size === 0 && svc.tokenLimits.size === 0)) return NONE;
  const now = svc.clock.now();
  let budgetWarning: string | undefined;
  let tokensLeft: number | undefined;
  try {
    budgetWarning = await svc.budgets.admit(key.id, now, reserve?.usd ?? 0, reserve?.requestId ?? '');
    const t = resolution.targets.length === 1 && !resolution.combo ? resolution.targets[0]! : undefined;
    const single = t ? { provider: t.provider.config.id, ref: t.ref, modelId: t.modelId } : undefined;
    tokensLeft = await svc.tokenLimits.admitRequest(key.id, resolution.requested, single, now, reserve?.tokens ?? 0, reserve?.requestId ?? '');
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'budget_exceeded') svc.webhooks.emit('budget.exceeded', { apiKeyId: key.id, keyName: key.name, model: resolution.requested, message: (e as Error).message });
    else if (code === 'token_limit_exceeded') svc.webhooks.emit('quota.exhausted', { apiKeyId: key.id, keyName: key.name, model: resolution.requested, message: (e as Error).message });
    throw e;
  }
  if (budgetWarning !== undefined) warnOnce(svc, key.id, key.name, budgetWarning, now);
  if (budgetWarning === undefined && tokensLeft === undefined) return NONE;
  return { ...(budgetWarning !== undefined ? { budgetWarning } : {}), ...(tokensLeft !== undefined ? { tokensLeft } : {}) };
}

/** budget.warning at most once an hour per key and warning (every request past the threshold carries the header). */
const warned = new Map<string, number>();
function warnOnce(svc: LimitDeps, keyId: string, keyName: string, warning: string, now: number): void {
  const k = `${keyId}\u0000${warning}`;
  if ((warned.get(k) ?? -Infinity) > now - 3_600_000) return;
  if (warned.size > 10_000) warned.clear();
  warned.set(k, now);
  svc.webhooks.emit('budget.warning', { apiKeyId: keyId, keyName, warning });
}

/** A recorded request's spend and tokens go to its key's budget and limit windows. */
export function accountUsage(svc: Pick<GatewayServices, 'clock' | 'budgets' | 'tokenLimits'>, e: RequestLogEntry): void {
  if (e.apiKeyId === undefined || e.cache === 'hit' || e.cache === 'replay') {
    // A reservation is given back whatever happened to the request.
    if (e.apiKeyId !== undefined) svc.budgets.onUsage(e.apiKeyId, 0, e.ts, svc.clock.now(), e.requestId);
    if (e.apiKeyId !== undefined) svc.tokenLimits.onUsage({ apiKeyId: e.apiKeyId, tokens: 0, ts: e.ts }, svc.clock.now(), e.requestId);
    return;
  }
  const now = svc.clock.now();
  svc.budgets.onUsage(e.apiKeyId, e.cost, e.ts, now, e.requestId);
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
    e.requestId,
  );
}
