/**
 * Budgets and token limits kept with the shared configuration (records of SharedConfigStore), so a
 * budget set through one daemon binds the key on every daemon. The spend and token sums read from
 * the cluster's request log; with storage.redis the windows themselves are counted in Redis
 * (redis-windows.ts).
 */
import type { Store } from '../../store/index.js';
import { LimitsStore, type BudgetConfig, type ScopeType, type TokenLimit } from './store.js';
import type { SharedConfigStore } from '../config/pg-store.js';

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class SharedLimitsStore extends LimitsStore {
  constructor(
    local: Store,
    private readonly shared: SharedConfigStore,
  ) {
    super(local);
  }

  override listBudgets(): BudgetConfig[] {
    return this.shared.records<BudgetConfig>('budget').sort((a, b) => byString(a.apiKeyId, b.apiKeyId));
  }

  override saveBudget(b: BudgetConfig): void {
    const prev = this.shared.records<BudgetConfig>('budget').find((x) => x.apiKeyId === b.apiKeyId);
    this.shared.putRecord('budget', b.apiKeyId, { ...b, createdAt: prev?.createdAt ?? b.createdAt });
  }

  override deleteBudget(apiKeyId: string): boolean {
    return this.shared.deleteRecord('budget', apiKeyId);
  }

  override listLimits(): TokenLimit[] {
    return this.shared
      .records<TokenLimit>('token_limit')
      .sort((a, b) => byString(a.apiKeyId, b.apiKeyId) || a.createdAt - b.createdAt || byString(a.id, b.id));
  }

  override saveLimit(l: TokenLimit): void {
    const prev = this.shared.records<TokenLimit>('token_limit').find((x) => x.id === l.id);
    this.shared.putRecord('token_limit', l.id, { ...l, createdAt: prev?.createdAt ?? l.createdAt });
  }

  override deleteLimit(id: string): boolean {
    return this.shared.deleteRecord('token_limit', id);
  }

  /** The request log is the cluster's (in PostgreSQL): a window starts at 0 and `spendLater` adds the sum. */
  override spend(): number {
    return 0;
  }

  override spendLater(apiKeyId: string, since: number, until: number): Promise<number> {
    return this.shared.requestLog.spend(apiKeyId, since, until);
  }

  override tokens(): number {
    return 0;
  }

  override tokensLater(apiKeyId: string, scope: ScopeType, value: string | undefined, since: number, until: number): Promise<number> {
    return this.shared.requestLog.tokens(apiKeyId, scope, value, since, until);
  }
}
