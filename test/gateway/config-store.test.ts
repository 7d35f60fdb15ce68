/**
 * The gateway's configuration store, the same suite on its own SQLite file and on the shared
 * PostgreSQL store (a private server): upserts keep what the SQLite upserts keep, deletions cascade
 * alike, lists come in the same order, and a second daemon's store sees the first one's writes.
 */
import { usableAccount } from '../../src/gateway/oauth/account-key.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Store } from '../../src/store/index.js';
import { GatewayStore } from '../../src/gateway/store.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { SharedConfigStore, type RemoteChange } from '../../src/gateway/config/pg-store.js';
import { SharedPostgres } from '../../src/store/postgres.js';
import type { ApiKeyRecord, ComboConfig, ProviderConfig } from '../../src/gateway/types.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';

const quiet = pino({ level: 'silent' });
const T = 1_700_000_000_000;

interface Backend {
  name: string;
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
  fresh(): Promise<GatewayStore>;
  /** Another daemon's view of the same data (SQLite: the same store reopened). */
  other(): Promise<GatewayStore>;
}

let dir: string;
let n = 0;
const localStore = () => new Store(join(dir, `gw-${n++}.db`), GATEWAY_MIGRATIONS);

function sqlite(): Backend {
  let current: GatewayStore;
  return {
    name: 'sqlite',
    fresh: async () => (current = new GatewayStore(localStore())),
    other: async () => new GatewayStore(current.store),
  };
}

function postgres(): Backend {
  let server: PostgresServer;
  let url: string;
  const dbs: SharedPostgres[] = [];
  const open = async (id: string) => {
    const db = await SharedPostgres.connect(url, quiet);
    dbs.push(db);
    return SharedConfigStore.open(localStore(), db, id, quiet, () => T);
  };
  return {
    name: 'postgres',
    setup: async () => {
      server = await PostgresServer.start();
      url = await server.createDatabase('gwstore');
    },
    teardown: async () => {
      for (const db of dbs) await db.close();
      await server?.destroy();
    },
    fresh: async () => {
      const s = await open('one');
      await (s as unknown as { db: SharedPostgres }).db.query('TRUNCATE gw_config');
      return SharedConfigStore.open(localStore(), dbs[dbs.length - 1]!, 'one', quiet, () => T);
    },
    other: () => open('two'),
  };
}

const provider = (id: string, over: Partial<ProviderConfig> = {}): ProviderConfig => ({
  id,
  kind: 'openai',
  name: id,
  baseUrl: `http://127.0.0.1:9/${id}`,
  enabled: true,
  priority: 0,
  headers: {},
  accounts: [{ id: `${id}-a1`, name: 'one', apiKey: 'sk-1', enabled: true, priority: 0 }],
  models: [],
  source: 'api',
  createdAt: T,
  updatedAt: T,
  ...over,
});

const combo = (id: string, name: string, over: Partial<ComboConfig> = {}): ComboConfig => ({
  id,
  name,
  strategy: 'priority',
  targets: ['p/m'],
  enabled: true,
  source: 'api',
  createdAt: T,
  updatedAt: T,
  ...over,
});

const key = (id: string, over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  name: id,
  hash: `hash-${id}`,
  prefix: `sk-${id}`,
  models: ['*'],
  scopes: ['inference'],
  enabled: true,
  createdAt: T,
  source: 'api',
  ...over,
});

const backends = [sqlite(), ...(PG_BIN ? [postgres()] : [])];
if (!PG_BIN) console.log(PG_SKIP_REASON);

beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), 'ctl-gwstore-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(backends)('gateway configuration store on $name', (backend) => {
  let s: GatewayStore;
  beforeAll(() => backend.setup?.(), 30_000);
  afterAll(() => backend.teardown?.());
  beforeEach(async () => {
    s = await backend.fresh();
  });

  it('providers: ordered by priority then id; accounts replaced; creation time kept; deletion takes the models', async () => {
    s.saveProvider(provider('b', { priority: 1 }));
    s.saveProvider(provider('a', { priority: 1 }));
    s.saveProvider(provider('z', { priority: 0 }));
    expect(s.listProviders().map((p) => p.id)).toEqual(['z', 'a', 'b']);
    s.saveProvider(provider('a', { priority: 1, name: 'renamed', createdAt: T + 5, updatedAt: T + 5, accounts: [{ id: 'a-a2', name: 'two', apiKey: 'sk-2', enabled: true, priority: 0 }] }));
    const a = s.listProviders(['a'])[0]!;
    expect(a).toMatchObject({ name: 'renamed', createdAt: T, updatedAt: T + 5 });
    expect(a.accounts.map((x) => x.id)).toEqual(['a-a2']);
    s.addAccounts('a', [{ id: 'a-a3', name: 'three', apiKey: 'sk-3', enabled: true, priority: 1 }], T + 6);
    expect(s.listProviders(['a'])[0]!.accounts.map((x) => x.id)).toEqual(['a-a2', 'a-a3']);
    s.deleteAccount('a-a2');
    expect(s.listProviders(['a'])[0]!.accounts.map((x) => x.id)).toEqual(['a-a3']);
    s.saveModel('a', { id: 'm1', type: 'chat' }, T);
    s.saveModel('a', { id: 'm0', type: 'chat' }, T + 1);
    s.saveModel('b', { id: 'x', type: 'embedding' }, T);
    expect(s.listModels(['a']).map((m) => m.spec.id)).toEqual(['m1', 'm0']);
    s.saveModel('a', { id: 'm1', type: 'chat', contextWindow: 9 } as never, T + 9);
    expect(s.getModel('a', 'm1')).toMatchObject({ createdAt: T, updatedAt: T + 9 });
    s.replaceModels('a', [{ id: 'n1', type: 'chat' }], T + 10);
    expect(s.listModels(['a']).map((m) => m.spec.id)).toEqual(['n1']);
    expect(s.deleteProvider('a')).toBe(true);
    expect(s.deleteProvider('a')).toBe(false);
    expect(s.providerExists('a')).toBe(false);
    expect(s.listModels().map((m) => m.provider)).toEqual(['b']);
    await s.settled();
  });

  it('an OAuth account gets the token this daemon holds as its key (none: left out of routing); the token is never stored', async () => {
    s.saveProvider(provider('o', { accounts: [
      { id: 'oauth:o:held', name: 'held', apiKey: '', enabled: true, priority: 0 },
      { id: 'oauth:o:elsewhere', name: 'elsewhere', apiKey: '', enabled: true, priority: 1 },
      { id: 'plain', name: 'plain', apiKey: 'sk-plain', enabled: true, priority: 2 },
    ] }));
    s.accountKey = (id) => (id.startsWith('oauth:') ? (id === 'oauth:o:held' ? 'at-1' : '') : undefined);
    const listed = s.listProviders(['o'])[0]!;
    expect(listed.accounts.map((a) => [a.id, a.apiKey, usableAccount(a)])).toEqual([
      ['oauth:o:held', 'at-1', true],
      ['oauth:o:elsewhere', '', false],
      ['plain', 'sk-plain', true],
    ]);
    // A provider update writes back what it listed: the token stays out of the stored accounts.
    s.saveProvider({ ...listed, updatedAt: T + 1 });
    s.accountKey = undefined;
    expect(s.listProviders(['o'])[0]!.accounts.map((a) => [a.id, a.apiKey, a.enabled])).toEqual([
      ['oauth:o:held', '', true],
      ['oauth:o:elsewhere', '', true],
      ['plain', 'sk-plain', true],
    ]);
    await s.settled();
  });

  it('combos by name, a combo\'s mappings go with it, mappings by priority', async () => {
    s.saveCombo(combo('c2', 'beta'));
    s.saveCombo(combo('c1', 'alpha', { description: 'd', maxAttempts: 2 }));
    expect(s.listCombos().map((c) => c.name)).toEqual(['alpha', 'beta']);
    s.saveMapping({ id: 'm1', pattern: 'gpt-*', comboId: 'c1', priority: 1, enabled: true, source: 'api', createdAt: T, updatedAt: T });
    s.saveMapping({ id: 'm2', pattern: 'x-*', comboId: 'c2', priority: 5, enabled: true, source: 'api', createdAt: T, updatedAt: T });
    expect(s.listMappings().map((m) => m.id)).toEqual(['m2', 'm1']);
    expect(s.deleteCombo('c1')).toBe(true);
    expect(s.listMappings().map((m) => m.id)).toEqual(['m2']);
    s.saveAlias('fast', 'p/m', T);
    s.saveAlias('cheap', 'p/n', T);
    expect([...s.listAliases()]).toEqual([
      ['cheap', 'p/n'],
      ['fast', 'p/m'],
    ]);
    expect(s.deleteAlias('fast')).toBe(true);
    await s.settled();
  });

  it('keys: an update keeps the hash, prefix, creation and last use; last use is recorded', async () => {
    s.saveKey(key('k2', { createdAt: T + 1 }));
    s.saveKey(key('k1'));
    s.touchKeys(new Map([['k1', T + 100]]));
    s.saveKey(key('k1', { name: 'renamed', hash: 'other', prefix: 'other', createdAt: T + 50 }));
    const [k1, k2] = s.listKeys();
    expect(k1).toMatchObject({ id: 'k1', name: 'renamed', hash: 'hash-k1', prefix: 'sk-k1', createdAt: T, lastUsedAt: T + 100 });
    expect(k2!.id).toBe('k2');
    expect(s.deleteKey('k2')).toBe(true);
    expect(s.listKeys().map((k) => k.id)).toEqual(['k1']);
    await s.settled();
  });

  it('pricing and settings', async () => {
    s.savePrice({ model: 'p/b', input: 1, output: 2, source: 'api' }, T);
    s.savePrice({ model: 'p/a', input: 3, source: 'api' }, T);
    expect(s.listPricing().map((p) => [p.model, p.input])).toEqual([
      ['p/a', 3],
      ['p/b', 1],
    ]);
    expect(s.deletePrice('p/a')).toBe(true);
    expect(s.getSetting('x')).toBeUndefined();
    s.setSetting('x', '{"a":1}');
    expect(s.getSetting('x')).toBe('{"a":1}');
    await s.settled();
  });

  it('what one daemon committed, another reads', async () => {
    s.saveProvider(provider('shared'));
    s.saveKey(key('kk'));
    s.saveCombo(combo('cc', 'shared-combo'));
    s.setSetting('general', '{"a2aEnabled":true}');
    await s.settled();
    const o = await backend.other();
    expect(o.listProviders().map((p) => p.id)).toEqual(['shared']);
    expect(o.listKeys().map((k) => k.id)).toEqual(['kk']);
    expect(o.listCombos().map((c) => c.name)).toEqual(['shared-combo']);
    expect(o.getSetting('general')).toBe('{"a2aEnabled":true}');
  });
});

describe.skipIf(!PG_BIN)('a write the shared database refused', () => {
  let server: PostgresServer;
  let db: SharedPostgres;
  let s: SharedConfigStore;
  beforeAll(async () => {
    server = await PostgresServer.start();
    db = await SharedPostgres.connect(await server.createDatabase('refused'), quiet);
    s = await SharedConfigStore.open(localStore(), db, 'one', quiet, () => T);
  }, 30_000);
  afterAll(async () => {
    await db?.close();
    await server?.destroy();
  });

  it('is taken back, and the rebuild names what was taken back: the catalog and the settings drop it too', async () => {
    s.saveProvider(provider('kept'));
    s.setSetting('resilience', '{}');
    await s.settled();
    const changes: RemoteChange[] = [];
    s.follow((c) => changes.push(c));
    await server.stop();
    let last: RemoteChange;
    try {
      s.saveProvider(provider('refused'));
      s.setSetting('general', '{"systemPrompt":{"prompt":"refused"}}');
      await expect(s.settled()).rejects.toThrow(/did not take the change/);
      expect(s.listProviderIds()).toEqual(['kept']);
      expect(s.getSetting('general')).toBeUndefined();
      // The rebuild after taking them back (before the server is started again and reloaded).
      last = changes.at(-1)!;
    } finally {
      await server.start();
    }
    // Naming only what memory still holds left a refused provider in the catalog, and a refused
    // first write of a settings section in force, for good.
    expect([...(last.catalog.providers ?? [])].sort()).toEqual(['kept', 'refused']);
    expect([...last.settings].sort()).toEqual(['general', 'resilience']);
  });

  it('a write queued behind a refused one to the same record is refused too: it was built on the refused state', async () => {
    // The server is back after the case above: wait until a write lands again.
    for (let i = 0; ; i++) {
      s.setSetting('cache', '{"v":0}');
      try {
        await s.settled();
        break;
      } catch (e) {
        if (i > 50) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    // The first commit is held, then refused; the one behind it reaches the real server.
    const db = (s as unknown as { db: SharedPostgres }).db;
    const real = db.transaction.bind(db);
    let refuse!: () => void;
    const held = new Promise<void>((r) => (refuse = r));
    db.transaction = (async () => {
      await held;
      throw new Error('server gone');
    }) as typeof db.transaction;
    try {
      s.setSetting('cache', '{"v":1}');
      const first = s.settled();
      first.catch(() => {});
      while (!(s as unknown as { inflight?: Promise<void> }).inflight) await new Promise((r) => setImmediate(r));
      db.transaction = real;
      // A second request writes the section again, on top of the first (not yet refused).
      s.setSetting('cache', '{"v":1,"w":2}');
      const second = s.settled();
      second.catch(() => {});
      refuse();
      await expect(first).rejects.toThrow(/did not take the change/);
      // Before: the second commit put the refused {"v":1} in force in the database.
      await expect(second).rejects.toThrow(/did not take the change/);
      expect(s.getSetting('cache')).toBe('{"v":0}');
      const rows = await db.query<{ data: string }>("SELECT data FROM gw_config WHERE kind = 'setting' AND id = 'cache'");
      expect(rows.map((r) => JSON.parse(r.data) as string)).toEqual(['{"v":0}']);
    } finally {
      db.transaction = real;
    }
  }, 30_000);
});
