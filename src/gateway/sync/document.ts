/**
 * The gateway's configuration as one JSON document for sync: what the API manages (providers with
 * their accounts and models, combos, aliases, mappings, prices), never what gateway.yaml defines.
 * Provider API keys are included only when asked (`includeSecrets`); without them an import keeps the
 * keys the local accounts already have. Import merges: what the document has is created or replaced,
 * local extras stay.
 */
import type { ComboConfig, ComboMapping, PriceEntry, ProviderConfig } from '../types.js';
import type { GatewayState } from '../state.js';

export const SYNC_FORMAT = 'ctl-gateway-config/1';

export interface SyncDocument {
  format: typeof SYNC_FORMAT;
  exportedAt: string;
  secrets: boolean;
  providers: (Omit<ProviderConfig, 'source' | 'createdAt' | 'updatedAt' | 'accounts'> & { accounts: { id: string; name: string; enabled: boolean; priority: number; apiKey?: string }[] })[];
  combos: Omit<ComboConfig, 'source' | 'createdAt' | 'updatedAt'>[];
  aliases: Record<string, string>;
  mappings: ComboMapping[];
  pricing: Omit<PriceEntry, 'source'>[];
}

export function exportConfig(state: GatewayState, includeSecrets: boolean, now: number): SyncDocument {
  const db = state.db;
  return {
    format: SYNC_FORMAT,
    exportedAt: new Date(now).toISOString(),
    secrets: includeSecrets,
    providers: db.listProviders().map(({ source: _s, createdAt: _c, updatedAt: _u, accounts, ...p }) => ({
      ...p,
      accounts: accounts.map((a) => ({ id: a.id, name: a.name, enabled: a.enabled, priority: a.priority, ...(includeSecrets && a.apiKey ? { apiKey: a.apiKey } : {}) })),
    })),
    combos: db.listCombos().map(({ source: _s, createdAt: _c, updatedAt: _u, ...rest }) => rest),
    aliases: Object.fromEntries(db.listAliases()),
    mappings: db.listMappings(),
    pricing: db.listPricing().map(({ source: _s, ...p }) => p),
  };
}

/** Check a document's shape; throws an Error naming the first problem. */
export function checkDocument(v: unknown): SyncDocument {
  const d = v as Partial<SyncDocument> | null;
  if (!d || typeof d !== 'object') throw new Error('not a JSON object');
  if (d.format !== SYNC_FORMAT) throw new Error(`format is ${JSON.stringify(d.format)}, not ${SYNC_FORMAT}`);
  for (const k of ['providers', 'combos', 'mappings', 'pricing'] as const) if (!Array.isArray(d[k])) throw new Error(`${k} must be a list`);
  if (typeof d.aliases !== 'object' || d.aliases === null || Array.isArray(d.aliases)) throw new Error('aliases must be a mapping');
  for (const [i, p] of d.providers!.entries()) {
    if (typeof p?.id !== 'string' || typeof p.kind !== 'string' || !Array.isArray(p.accounts) || !Array.isArray(p.models)) throw new Error(`providers[${i}] is not a provider`);
  }
  for (const [i, c] of d.combos!.entries()) if (typeof c?.name !== 'string' || !Array.isArray(c.targets)) throw new Error(`combos[${i}] is not a combo`);
  return d as SyncDocument;
}

/** Merge a document into the database (one transaction); answers what changed. Providers gateway.yaml defines are left alone. */
export async function importConfig(state: GatewayState, d: SyncDocument, now: number): Promise<{ providers: number; combos: number; aliases: number; mappings: number; prices: number; skipped: string[] }> {
  const db = state.db;
  const fileProviders = new Set([...state.catalog.providers.values()].filter((p) => p.config.source === 'file').map((p) => p.config.id));
  const fileCombos = new Set([...state.catalog.combos.values()].filter((c) => c.source === 'file').map((c) => c.name));
  const local = new Map(db.listProviders().map((p) => [p.id, p]));
  const localCombos = new Map(db.listCombos().map((c) => [c.name, c]));
  const skipped: string[] = [];
  const out = { providers: 0, combos: 0, aliases: 0, mappings: 0, prices: 0, skipped };
  db.transaction(() => {
    for (const p of d.providers) {
      if (fileProviders.has(p.id)) {
        skipped.push(`provider ${p.id} (defined in gateway.yaml)`);
        continue;
      }
      const prev = local.get(p.id);
      const accounts = p.accounts.map((a) => ({ id: a.id, name: a.name, enabled: a.enabled, priority: a.priority, apiKey: a.apiKey ?? prev?.accounts.find((x) => x.id === a.id)?.apiKey ?? '' }));
      db.saveProvider({ ...p, accounts, source: 'api', createdAt: prev?.createdAt ?? now, updatedAt: now });
      db.replaceModels(p.id, p.models, now);
      out.providers++;
    }
    for (const c of d.combos) {
      if (fileCombos.has(c.name)) {
        skipped.push(`combo ${c.name} (defined in gateway.yaml)`);
        continue;
      }
      const prev = localCombos.get(c.name);
      db.saveCombo({ ...c, id: prev?.id ?? c.id, source: 'api', createdAt: prev?.createdAt ?? now, updatedAt: now });
      out.combos++;
    }
    for (const [alias, model] of Object.entries(d.aliases)) {
      db.saveAlias(alias, model, now);
      out.aliases++;
    }
    for (const m of d.mappings) {
      db.saveMapping(m);
      out.mappings++;
    }
    for (const p of d.pricing) {
      db.savePrice({ ...p, source: 'api' }, now);
      out.prices++;
    }
  });
  await state.commit({ providers: d.providers.map((p) => p.id), combos: true, aliases: true, mappings: true, pricing: true });
  return out;
}
