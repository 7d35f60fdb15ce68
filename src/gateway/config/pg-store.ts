/**
 * The gateway's configuration in the database several daemons share (ctl.yaml `storage.postgres`):
 * providers with their accounts, custom models, aliases, combos, model-combo mappings, API keys,
 * pricing and settings, and the records other capabilities keep with it (budgets, token limits,
 * webhooks, login sessions). As the gateway's database handle (../store.ts) it opens the other
 * shared stores the gateway asks for; what no shared store covers (OAuth tokens, caches, audit and
 * the like) stays in the daemon's own SQLite file.
 *
 * Each record is one row of `gw_config (kind, id, data)`. The gateway reads its configuration
 * synchronously (the catalog is built from it), so this store holds every row in memory, loaded at
 * start and kept current through notifications: a write changes memory at once, is committed in
 * the next event-loop turn (many writes, one transaction), and announced to the other daemons,
 * which read the rows named and rebuild their catalogs. `settled()` resolves once what was written
 * so far is committed; management routes await it (through GatewayState.commit) before answering,
 * so a 2xx is in PostgreSQL. A commit that fails takes its writes back out of memory (each op keeps
 * what the row held before), rejects with 503, and memory is reloaded from the database once it
 * answers again.
 */
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import type { SharedPostgres } from '../../store/postgres.js';
import type { Store } from '../../store/index.js';
import { GatewayStore } from '../store.js';
import { gatewayPgMigrations, type SchemaStep } from '../schema.js';
import { withAccountKey, type ProviderModelRecord } from './store.js';
import { storedAccount } from '../oauth/account-key.js';
import type { PgRequestLog } from '../request-log/shared-log.js';
import { PgSessions } from '../sessions/pg-store.js';
import type { SessionData } from '../sessions/store.js';
import type { CatalogChange } from '../catalog.js';
import type { ApiKeyRecord, ComboConfig, ComboMapping, ModelSpec, PriceEntry, ProviderAccount, ProviderConfig } from '../types.js';

/** The configuration's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const CONFIG_PG_SCHEMA: SchemaStep[] = [
  {
    version: 1,
    up: `
      CREATE TABLE gw_config (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        data TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (kind, id)
      );
    `,
  },
];

type Kind = 'provider' | 'model' | 'alias' | 'combo' | 'mapping' | 'key' | 'key_used' | 'price' | 'setting' | RecordKind;

/**
 * Kinds other stores of the gateway keep here through `putRecord` (budgets and token limits,
 * webhook subscriptions, login sessions: limits/shared-store.ts, webhooks/shared-store.ts,
 * sessions/pg-store.ts).
 */
export type RecordKind = 'budget' | 'token_limit' | 'webhook' | 'session';

/** Kinds other daemons are told about (a key's last use is not worth a notification). */
const ANNOUNCED = new Set<Kind>(['provider', 'model', 'alias', 'combo', 'mapping', 'key', 'price', 'setting', 'session', 'budget', 'token_limit', 'webhook']);

interface Op {
  kind: Kind;
  id: string;
  /** JSON text, or null for a deletion. */
  data: string | null;
  /** What memory held for the row before the batch's first write to it (ABSENT: nothing). */
  before: unknown;
}

const ABSENT = Symbol('absent');

const CHANNEL = 'ctl_gw_config';
const MAX_PAYLOAD = 7000;

interface Announcement {
  from: string;
  changes?: [Kind, string][];
  all?: true;
}

/** What other daemons changed, as the gateway needs it: catalog sections, setting keys, other records. */
export interface RemoteChange {
  catalog: CatalogChange;
  settings: string[];
  records: RecordKind[];
}

interface StoredAlias {
  model: string;
  createdAt: number;
}

const modelId = (provider: string, model: string) => JSON.stringify([provider, model]);

export class SharedConfigStore extends GatewayStore {
  private rows = new Map<Kind, Map<string, unknown>>();
  private queue = new Map<string, Op>();
  /** A refused batch had later writes to its rows queued behind it: the next batch is refused too. */
  private refuseNext = false;
  private next?: Promise<void>;
  private inflight?: Promise<void>;
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe?: () => void;
  /** Called after other daemons' changes were applied to memory. */
  onRemoteChange: (c: RemoteChange) => void = () => {};

  /**
   * Follow other daemons' changes from now on, and rebuild once at once: changes announced between
   * the first read and this call are in memory but were fed to nobody.
   */
  follow(handler: (c: RemoteChange) => void): void {
    this.onRemoteChange = handler;
    this.rebuildAll();
  }

  private constructor(
    local: Store,
    private readonly db: SharedPostgres,
    private readonly daemonId: string,
    private readonly log: Logger,
    private readonly clock: () => number,
  ) {
    super(local);
  }

  /** Login sessions are records here (sessions/pg-store.ts): a login through one daemon works on every daemon. */
  protected override openSessions(): SessionData {
    return new PgSessions(this);
  }

  /** The cluster's request log. */
  override get requestLog(): PgRequestLog {
    return super.requestLog!;
  }

  static async open(local: Store, db: SharedPostgres, daemonId: string, log: Logger, clock: () => number): Promise<SharedConfigStore> {
    await db.migrate('gateway', gatewayPgMigrations());
    const s = new SharedConfigStore(local, db, daemonId, log, clock);
    // Listen first, then read: a change another daemon commits while this one starts is either in
    // what it reads or announced to it (and an announcement during the read makes it read again).
    s.unsubscribe = await db.subscribe(
      CHANNEL,
      (payload) => void s.announced(JSON.parse(payload) as Announcement),
      () => void s.reload(),
    );
    await s.loadAll();
    await s.openShared(db, daemonId, log);
    return s;
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.requestLog.close();
  }

  // ----- memory and the write queue -----------------------------------------------------------

  private table<T>(kind: Kind): Map<string, T> {
    let t = this.rows.get(kind);
    if (!t) this.rows.set(kind, (t = new Map()));
    return t as Map<string, T>;
  }

  /**
   * Providers (by id; a custom model counts for its provider) and setting keys memory held at some
   * moment since the last full rebuild. A full rebuild names them all, not only what memory holds
   * now: a provider or setting that is gone (a refused write taken back, a row another daemon
   * deleted while this one did not listen) is dropped by the catalog and the settings too, where
   * naming only the rows left kept it in force for good.
   */
  private heldProviders = new Set<string>();
  private heldSettings = new Set<string>();

  private held(kind: Kind, id: string): void {
    if (kind === 'provider') this.heldProviders.add(id);
    else if (kind === 'model') this.heldProviders.add((JSON.parse(id) as [string, string])[0]);
    else if (kind === 'setting') this.heldSettings.add(id);
  }

  /** Reads under way; an announcement applied meanwhile may be older than what they return. */
  private loading = 0;
  private stale = false;

  /** Every row, replacing memory; read again while announcements arrived during the read (they may be newer). */
  private async loadAll(): Promise<void> {
    for (let round = 0; ; round++) {
      this.stale = false;
      this.loading++;
      try {
        const all = await this.db.query<{ kind: Kind; id: string; data: string }>('SELECT kind, id, data FROM gw_config');
        const rows = new Map<Kind, Map<string, unknown>>();
        for (const r of all) {
          let t = rows.get(r.kind);
          if (!t) rows.set(r.kind, (t = new Map()));
          t.set(r.id, JSON.parse(r.data));
          this.held(r.kind, r.id);
        }
        this.rows = rows;
      } finally {
        this.loading--;
      }
      if (!this.stale || round >= 10) return;
    }
  }

  /** Everything again from the database (after a failed commit or a lost notification connection). */
  private async reload(): Promise<void> {
    try {
      await this.loadAll();
      this.rebuildAll();
    } catch (e) {
      this.log.error({ err: (e as Error).message }, 'gateway: reloading the shared configuration failed; it is reloaded when the database is back');
    }
  }

  /** Tell every consumer that anything may have changed (after memory was replaced or restored). */
  private rebuildAll(): void {
    const providers = new Set(this.listProviderIds());
    for (const m of this.table<ProviderModelRecord>('model').values()) providers.add(m.provider);
    const settings = new Set(this.table('setting').keys());
    const named = { providers: [...new Set([...this.heldProviders, ...providers])], settings: [...new Set([...this.heldSettings, ...settings])] };
    this.heldProviders = providers;
    this.heldSettings = settings;
    this.onRemoteChange({
      catalog: { providers: named.providers, aliases: true, combos: true, mappings: true, keys: true, pricing: true },
      settings: named.settings,
      records: ['budget', 'token_limit', 'webhook'],
    });
  }

  private put(kind: Kind, id: string, value: unknown): void {
    const t = this.table(kind);
    const before = t.has(id) ? t.get(id) : ABSENT;
    t.set(id, value);
    this.held(kind, id);
    this.enqueue({ kind, id, data: JSON.stringify(value), before });
  }

  private del(kind: Kind, id: string): boolean {
    const t = this.table(kind);
    const before = t.has(id) ? t.get(id) : ABSENT;
    const had = t.delete(id);
    if (had) this.enqueue({ kind, id, data: null, before });
    return had;
  }

  private enqueue(op: Op): void {
    const key = `${op.kind}\u0000${op.id}`;
    // A second write to the row in the same batch keeps the state before the first.
    const earlier = this.queue.get(key);
    if (earlier) op.before = earlier.before;
    this.queue.set(key, op);
    if (this.next) return;
    const run = this.chain
      .then(() => new Promise<void>((r) => setImmediate(r)))
      .then(() => {
        this.next = undefined;
        const f = this.flush();
        this.inflight = f;
        return f.finally(() => {
          if (this.inflight === f) this.inflight = undefined;
        });
      });
    this.next = run;
    this.chain = run.catch(() => {});
  }

  /** Resolves when every write made so far is committed; rejects (503) when that commit failed. */
  override settled(): Promise<void> {
    return this.next ?? this.inflight ?? Promise.resolve();
  }

  private async flush(): Promise<void> {
    const ops = [...this.queue.values()];
    this.queue.clear();
    if (ops.length === 0) return;
    const puts = ops.filter((o) => o.data !== null);
    const dels = ops.filter((o) => o.data === null);
    const announced = ops.filter((o) => ANNOUNCED.has(o.kind)).map((o) => [o.kind, o.id] as [Kind, string]);
    let payload = JSON.stringify({ from: this.daemonId, changes: announced } satisfies Announcement);
    if (payload.length > MAX_PAYLOAD) payload = JSON.stringify({ from: this.daemonId, all: true } satisfies Announcement);
    const now = this.clock();
    try {
      if (this.refuseNext) {
        this.refuseNext = false;
        throw new Error('an earlier write to the same record was refused');
      }
      await this.db.transaction(async (q) => {
        if (puts.length > 0) {
          await q.query(
            `INSERT INTO gw_config (kind, id, data, updated_at)
             SELECT k, i, d, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS u(k, i, d)
             ON CONFLICT (kind, id) DO UPDATE SET data = EXCLUDED.data, updated_at = EXCLUDED.updated_at`,
            [puts.map((o) => o.kind), puts.map((o) => o.id), puts.map((o) => o.data), now],
          );
        }
        if (dels.length > 0) {
          await q.query('DELETE FROM gw_config g USING unnest($1::text[], $2::text[]) AS u(k, i) WHERE g.kind = u.k AND g.id = u.i', [dels.map((o) => o.kind), dels.map((o) => o.id)]);
        }
        if (announced.length > 0) await q.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
      });
    } catch (e) {
      this.log.error({ err: (e as Error).message, writes: ops.length }, 'gateway: committing configuration to the shared database failed; reloading it');
      // Take the refused writes back out of memory now (the reload cannot while the database is
      // away), newest first, unless a later write to the same row is already queued.
      for (const o of [...ops].reverse()) {
        const later = this.queue.get(`${o.kind}\u0000${o.id}`);
        if (later) {
          // What it replaces never landed, and it was built on the refused state (a settings
          // section or a provider is written whole): it must not commit what was refused.
          later.before = o.before;
          this.refuseNext = true;
          continue;
        }
        this.held(o.kind, o.id);
        if (o.before === ABSENT) this.table(o.kind).delete(o.id);
        else this.table(o.kind).set(o.id, o.before);
      }
      this.rebuildAll();
      void this.reload();
      throw new GatewayError('unavailable', `the shared database did not take the change: ${(e as Error).message}`, { code: 'storage_unavailable', cause: e });
    }
  }

  /** Another daemon committed changes: read the rows it names and rebuild what they feed. */
  private async announced(a: Announcement): Promise<void> {
    if (a.from === this.daemonId) return;
    if (a.all) return this.reload();
    const changes = a.changes ?? [];
    if (changes.length === 0) return;
    if (this.loading > 0) this.stale = true;
    let rows: { kind: Kind; id: string; data: string | null }[];
    try {
      rows = await this.db.query(
        `SELECT u.k AS kind, u.i AS id, g.data FROM unnest($1::text[], $2::text[]) AS u(k, i)
         LEFT JOIN gw_config g ON g.kind = u.k AND g.id = u.i`,
        [changes.map((c) => c[0]), changes.map((c) => c[1])],
      );
    } catch (e) {
      this.log.error({ err: (e as Error).message }, 'gateway: reading changed shared configuration failed; reloading it when the database is back');
      return;
    }
    if (this.loading > 0) this.stale = true;
    const catalog: CatalogChange = {};
    const providers = new Set<string>();
    const settings: string[] = [];
    const records = new Set<RecordKind>();
    for (const r of rows) {
      if (r.data === null) this.table(r.kind).delete(r.id);
      else this.table(r.kind).set(r.id, JSON.parse(r.data));
      this.held(r.kind, r.id);
      switch (r.kind) {
        case 'provider':
          providers.add(r.id);
          break;
        case 'model':
          providers.add((JSON.parse(r.id) as [string, string])[0]);
          break;
        case 'alias':
          catalog.aliases = true;
          break;
        case 'combo':
          catalog.combos = true;
          catalog.mappings = true;
          break;
        case 'mapping':
          catalog.mappings = true;
          break;
        case 'key':
          catalog.keys = true;
          break;
        case 'price':
          catalog.pricing = true;
          break;
        case 'setting':
          settings.push(r.id);
          break;
        case 'budget':
        case 'token_limit':
        case 'webhook':
          records.add(r.kind);
          break;
      }
    }
    if (providers.size > 0) catalog.providers = [...providers];
    this.onRemoteChange({ catalog, settings, records: [...records] });
  }

  // ----- records of other gateway stores ------------------------------------------------------

  records<T>(kind: RecordKind): T[] {
    return [...this.table<T>(kind).values()];
  }

  /** The records of a kind with their ids. */
  recordEntries<T>(kind: RecordKind): [string, T][] {
    return [...this.table<T>(kind)];
  }

  record<T>(kind: RecordKind, id: string): T | undefined {
    return this.table<T>(kind).get(id);
  }

  putRecord(kind: RecordKind, id: string, value: unknown): void {
    this.put(kind, id, value);
  }

  deleteRecord(kind: RecordKind, id: string): boolean {
    return this.del(kind, id);
  }

  // ----- providers ---------------------------------------------------------------------------

  override listProviders(ids?: readonly string[]): ProviderConfig[] {
    const only = ids ? new Set(ids) : undefined;
    const out: ProviderConfig[] = [];
    for (const [id, p] of this.table<ProviderConfig>('provider')) {
      if (only && !only.has(id)) continue;
      const accounts = [...p.accounts]
        .sort((a, b) => a.priority - b.priority)
        .map((a) => withAccountKey(this.accountKey, a));
      out.push({ ...p, accounts, models: [], source: 'api' });
    }
    return out.sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  override listProviderIds(): string[] {
    return [...this.table('provider').keys()];
  }

  override providerExists(id: string): boolean {
    return this.table('provider').has(id);
  }

  override saveProvider(p: ProviderConfig): void {
    const prev = this.table<ProviderConfig>('provider').get(p.id);
    const { models: _models, ...rest } = p;
    this.put('provider', p.id, { ...rest, accounts: p.accounts.map((a) => ({ ...storedAccount(a) })), createdAt: prev?.createdAt ?? p.createdAt });
  }

  override addAccounts(providerId: string, accounts: ProviderAccount[], now: number): void {
    const prev = this.table<ProviderConfig>('provider').get(providerId);
    if (!prev) return;
    const byId = new Map(prev.accounts.map((a) => [a.id, a]));
    for (const a of accounts) byId.set(a.id, { ...storedAccount(a) });
    this.put('provider', providerId, { ...prev, accounts: [...byId.values()], updatedAt: now });
  }

  override deleteAccount(id: string): void {
    for (const [pid, p] of this.table<ProviderConfig>('provider')) {
      if (p.accounts.some((a) => a.id === id)) this.put('provider', pid, { ...p, accounts: p.accounts.filter((a) => a.id !== id) });
    }
  }

  override deleteProvider(id: string): boolean {
    const had = this.del('provider', id);
    for (const [mid, m] of this.table<ProviderModelRecord>('model')) if (m.provider === id) this.del('model', mid);
    return had;
  }

  // ----- models ------------------------------------------------------------------------------

  override listModels(ids?: readonly string[]): ProviderModelRecord[] {
    const only = ids ? new Set(ids) : undefined;
    return [...this.table<ProviderModelRecord>('model').values()]
      .filter((m) => !only || only.has(m.provider))
      .sort((a, b) => (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : a.createdAt - b.createdAt || (a.spec.id < b.spec.id ? -1 : 1)));
  }

  override getModel(provider: string, model: string): ProviderModelRecord | undefined {
    return this.table<ProviderModelRecord>('model').get(modelId(provider, model));
  }

  override saveModel(provider: string, spec: ModelSpec, now: number): void {
    const id = modelId(provider, spec.id);
    const prev = this.table<ProviderModelRecord>('model').get(id);
    this.put('model', id, { provider, spec, createdAt: prev?.createdAt ?? now, updatedAt: now });
  }

  override replaceModels(provider: string, specs: ModelSpec[], now: number): void {
    for (const [id, m] of this.table<ProviderModelRecord>('model')) if (m.provider === provider) this.del('model', id);
    for (const s of specs) this.saveModel(provider, s, now);
  }

  override deleteModel(provider: string, model: string): boolean {
    return this.del('model', modelId(provider, model));
  }

  // ----- aliases, combos, mappings -------------------------------------------------------------

  override listAliases(): Map<string, string> {
    const entries = [...this.table<StoredAlias>('alias')].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return new Map(entries.map(([alias, v]) => [alias, v.model]));
  }

  override saveAlias(alias: string, model: string, now: number): void {
    const prev = this.table<StoredAlias>('alias').get(alias);
    this.put('alias', alias, { model, createdAt: prev?.createdAt ?? now });
  }

  override deleteAlias(alias: string): boolean {
    return this.del('alias', alias);
  }

  override listCombos(): ComboConfig[] {
    return [...this.table<ComboConfig>('combo').values()].map((c) => ({ ...c, source: 'api' as const })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  override saveCombo(c: ComboConfig): void {
    const combos = this.table<ComboConfig>('combo');
    // The name is unique, as the SQLite table's UNIQUE constraint has it.
    for (const other of combos.values()) if (other.id !== c.id && other.name === c.name) throw new GatewayError('conflict', `a combo named ${JSON.stringify(c.name)} already exists`);
    const prev = combos.get(c.id);
    this.put('combo', c.id, { ...c, createdAt: prev?.createdAt ?? c.createdAt });
  }

  override deleteCombo(id: string): boolean {
    const had = this.del('combo', id);
    for (const [mid, m] of this.table<ComboMapping>('mapping')) if (m.comboId === id) this.del('mapping', mid);
    return had;
  }

  override listMappings(): ComboMapping[] {
    return [...this.table<ComboMapping>('mapping').values()]
      .map((m) => ({ ...m, source: 'api' as const }))
      .sort((a, b) => b.priority - a.priority || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  override saveMapping(m: ComboMapping): void {
    const prev = this.table<ComboMapping>('mapping').get(m.id);
    this.put('mapping', m.id, { ...m, createdAt: prev?.createdAt ?? m.createdAt });
  }

  override deleteMapping(id: string): boolean {
    return this.del('mapping', id);
  }

  // ----- keys, pricing, settings ---------------------------------------------------------------

  override listKeys(): ApiKeyRecord[] {
    const used = this.table<number>('key_used');
    return [...this.table<ApiKeyRecord>('key').values()]
      .map((k) => {
        const last = Math.max(k.lastUsedAt ?? 0, used.get(k.id) ?? 0);
        return { ...k, ...(last > 0 ? { lastUsedAt: last } : {}), source: 'api' as const };
      })
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  override saveKey(k: ApiKeyRecord): void {
    const prev = this.table<ApiKeyRecord>('key').get(k.id);
    // As the SQLite upsert: the secret's hash, prefix, creation, last use and account stay.
    const next: ApiKeyRecord = prev
      ? { ...k, hash: prev.hash, prefix: prev.prefix, createdAt: prev.createdAt, ...(prev.lastUsedAt !== undefined ? { lastUsedAt: prev.lastUsedAt } : {}), ...(prev.accountId !== undefined ? { accountId: prev.accountId } : {}) }
      : { ...k };
    this.put('key', k.id, next);
  }

  override deleteKey(id: string): boolean {
    this.del('key_used', id);
    return this.del('key', id);
  }

  override touchKeys(lastUsed: Map<string, number>): void {
    for (const [id, ts] of lastUsed) if (this.table('key').has(id)) this.put('key_used', id, ts);
  }

  override listPricing(): PriceEntry[] {
    return [...this.table<PriceEntry>('price').values()].map((p) => ({ ...p, source: 'api' as const })).sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  }

  override savePrice(p: PriceEntry, _now: number): void {
    this.put('price', p.model, { ...p });
  }

  override deletePrice(model: string): boolean {
    return this.del('price', model);
  }

  override getSetting(key: string): string | undefined {
    return this.table<string>('setting').get(key);
  }

  override setSetting(key: string, value: string): void {
    this.put('setting', key, value);
  }
}
