/**
 * The in-memory view the hot path reads: gateway.yaml merged with the database, rebuilt after every
 * management write and on reload. Requests never read the database for configuration.
 *
 * Precedence on id collisions: gateway.yaml wins for providers, combos, aliases, mappings and keys
 * (the database record is shadowed and reported); for pricing the API override wins over the file.
 */
import { RE2JS } from 're2js';
import type { GatewayFileConfig } from './config-file.js';
import { PriceTable } from './pricing.js';
import type { ProviderConnection } from './providers/index.js';
import type { GatewayStore } from './store.js';
import type {
  ApiKeyRecord,
  ComboConfig,
  ComboMapping,
  ModelSpec,
  ProviderConfig,
  RoutingSettings,
  Source,
} from './types.js';
import { globToRegexSource } from './validate.js';

export interface ProviderRuntime {
  config: ProviderConfig;
  /** What the provider layer receives. */
  conn: ProviderConnection;
  /** Declared models by upstream id. */
  models: Map<string, ModelSpec>;
}

export interface AliasEntry {
  alias: string;
  model: string;
  source: Source;
}

export interface CompiledMapping {
  mapping: ComboMapping;
  matches(model: string): boolean;
}

export class Catalog {
  readonly providers = new Map<string, ProviderRuntime>();
  readonly aliases = new Map<string, AliasEntry>();
  readonly combos = new Map<string, ComboConfig>();
  readonly combosById = new Map<string, ComboConfig>();
  readonly mappings: CompiledMapping[] = [];
  readonly keysByHash = new Map<string, ApiKeyRecord>();
  readonly keysById = new Map<string, ApiKeyRecord>();
  readonly pricing: PriceTable;
  readonly settings: RoutingSettings;
  /** Database records hidden by a gateway.yaml record with the same id (reported by the API). */
  readonly shadowed: string[] = [];
  /** Bare model id → providers that declare it, by provider priority. */
  readonly bareModels = new Map<string, string[]>();

  constructor(db: GatewayStore, file: GatewayFileConfig) {
    this.settings = file.settings;
    const customModels = db.listModels();

    const providers: ProviderConfig[] = [...file.providers];
    const fileIds = new Set(file.providers.map((p) => p.id));
    for (const p of db.listProviders()) {
      if (fileIds.has(p.id)) this.shadowed.push(`provider ${p.id}`);
      else providers.push(p);
    }
    providers.sort((a, b) => a.priority - b.priority || a.id.localeCompare(b.id));
    for (const p of providers) {
      const models = new Map<string, ModelSpec>();
      for (const m of p.models) models.set(m.id, m);
      for (const cm of customModels) if (cm.provider === p.id) models.set(cm.spec.id, cm.spec);
      const config: ProviderConfig = { ...p, models: [...models.values()] };
      this.providers.set(p.id, { config, conn: toConnection(config, this.settings), models });
      if (!p.enabled) continue;
      for (const id of models.keys()) {
        const list = this.bareModels.get(id);
        if (list) list.push(p.id);
        else this.bareModels.set(id, [p.id]);
      }
    }

    for (const [alias, model] of file.aliases) this.aliases.set(alias, { alias, model, source: 'file' });
    for (const [alias, model] of db.listAliases()) {
      if (this.aliases.has(alias)) this.shadowed.push(`alias ${alias}`);
      else this.aliases.set(alias, { alias, model, source: 'api' });
    }

    for (const c of [...file.combos, ...db.listCombos()]) {
      if (this.combos.has(c.name)) {
        this.shadowed.push(`combo ${c.name}`);
        continue;
      }
      this.combos.set(c.name, c);
      this.combosById.set(c.id, c);
    }

    const mappings = [...file.mappings, ...db.listMappings()];
    mappings.sort((a, b) => b.priority - a.priority || a.createdAt - b.createdAt);
    for (const m of mappings) {
      let re: RE2JS;
      try {
        re = RE2JS.compile(globToRegexSource(m.pattern));
      } catch {
        this.shadowed.push(`mapping ${m.id} (pattern ${JSON.stringify(m.pattern)} does not compile)`);
        continue;
      }
      this.mappings.push({ mapping: m, matches: (model) => re.matches(model) });
    }

    for (const k of [...file.keys, ...db.listKeys()]) {
      if (this.keysByHash.has(k.hash)) {
        this.shadowed.push(`key ${k.name}`);
        continue;
      }
      this.keysByHash.set(k.hash, k);
      this.keysById.set(k.id, k);
    }

    this.pricing = new PriceTable([file.pricing, db.listPricing()]);
  }

  /** A combo by name or id. */
  combo(nameOrId: string): ComboConfig | undefined {
    return this.combos.get(nameOrId) ?? this.combosById.get(nameOrId);
  }

  /** The combo a mapping points at (by id, or by name for gateway.yaml mappings naming API combos). */
  mappingCombo(m: ComboMapping): ComboConfig | undefined {
    return this.combo(m.comboId);
  }
}

export function toConnection(p: ProviderConfig, settings: RoutingSettings): ProviderConnection {
  return {
    id: p.id,
    kind: p.kind,
    baseUrl: p.baseUrl,
    headers: p.headers,
    models: p.models,
    ...(p.timeoutMs !== undefined ? { timeoutMs: p.timeoutMs, streamIdleTimeoutMs: p.timeoutMs } : {}),
    readinessTimeoutMs: settings.streamReadinessTimeoutMs,
  };
}
