import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ManualClock } from '../../src/http/clock.js';
import { MemoryPersistence, MIGRATIONS, SqlitePersistence, type StoredSilence } from '../../src/alertmanager/persist.js';
import { SilenceNotFound, SilenceStore, apiSilenceState, silenceState, validateMatchers, type SilenceBackend } from '../../src/alertmanager/silences.js';
import { SharedSilences } from '../../src/alertmanager/shared/silences.js';
import { SHARED_MIGRATIONS } from '../../src/alertmanager/shared/migrations.js';
import { Store } from '../../src/store/index.js';
import { SharedPostgres } from '../../src/store/postgres.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const H = 3_600_000;
const m = (name: string, value: string, isRegex = false, isEqual = true) => ({ name, value, isRegex, isEqual });

/** One place silences are kept; the same suite runs against each. */
interface Backend {
  name: string;
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
  /** A fresh, empty backend for one test. */
  fresh(): Promise<SilenceBackend>;
  /** The same data opened again (a restart). */
  reopen(): Promise<SilenceBackend>;
  /** What is stored now. */
  stored(): Promise<StoredSilence[]>;
}

const quiet = pino({ level: 'silent' });

function memoryBackend(): Backend {
  let persist: MemoryPersistence;
  return {
    name: 'memory',
    fresh: async () => (persist = new MemoryPersistence()),
    reopen: async () => persist,
    stored: async () => persist.loadSilences(),
  };
}

function sqliteBackend(): Backend {
  let dir: string;
  let store: Store | undefined;
  let n = 0;
  return {
    name: 'sqlite',
    setup: async () => void (dir = mkdtempSync(join(tmpdir(), 'ctl-silences-'))),
    teardown: async () => {
      store?.close();
      rmSync(dir, { recursive: true, force: true });
    },
    fresh: async () => {
      store?.close();
      store = new Store(join(dir, `am-${n++}.db`), MIGRATIONS);
      return new SqlitePersistence(store);
    },
    reopen: async () => new SqlitePersistence(store!),
    stored: async () => (store!.prepare('SELECT data FROM silences').all() as { data: string }[]).map((r) => JSON.parse(r.data)),
  };
}

function postgresBackend(): Backend {
  let server: PostgresServer;
  let db: SharedPostgres;
  return {
    name: 'postgres',
    setup: async () => {
      server = await PostgresServer.start();
      db = await SharedPostgres.connect(server.url(), quiet);
      await db.migrate('alertmanager', SHARED_MIGRATIONS);
    },
    teardown: async () => {
      await db?.close();
      await server?.destroy();
    },
    fresh: async () => {
      await db.query('TRUNCATE am_silences');
      return SharedSilences.open(db, quiet);
    },
    reopen: () => SharedSilences.open(db, quiet),
    stored: async () => (await SharedSilences.open(db, quiet)).loadSilences(),
  };
}

const backends = [memoryBackend(), sqliteBackend(), ...(PG_BIN ? [postgresBackend()] : [])];
if (!PG_BIN) console.log(PG_SKIP_REASON);

describe.each(backends)('silences on $name', (backend) => {
  let clock: ManualClock;
  let store: SilenceStore;
  beforeAll(() => backend.setup?.(), 30_000);
  afterAll(() => backend.teardown?.());
  beforeEach(async () => {
    clock = new ManualClock(T0);
    store = new SilenceStore(await backend.fresh(), clock);
  });

  const add = (over: Partial<Parameters<SilenceStore['set']>[0]> = {}) =>
    store.set({ matchers: [m('alertname', 'A')], startsAt: T0 - H, endsAt: T0 + H, createdBy: 'me', comment: 'c', ...over });

  describe('silence state', () => {
    it('API state switches to expired at endsAt; silencing still counts endsAt as active', async () => {
      const s = { id: 'x', matchers: [], startsAt: T0, endsAt: T0 + 10, updatedAt: T0, createdBy: '', comment: '' };
      expect(apiSilenceState(s, T0 - 1)).toBe('pending');
      expect(apiSilenceState(s, T0)).toBe('active');
      expect(apiSilenceState(s, T0 + 10)).toBe('expired');
      expect(silenceState(s, T0 + 10)).toBe('active');
      expect(silenceState(s, T0 + 11)).toBe('expired');
    });
  });

  describe('create', () => {
    it('clamps a past start to now and sets updatedAt', async () => {
      const id = await add();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const s = store.get(id)!;
      expect(s.startsAt).toBe(T0);
      expect(s.updatedAt).toBe(T0);
      expect((await backend.stored()).find((x) => x.id === id)).toEqual(s);
    });
    it('keeps a future start', async () => {
      const id = await add({ startsAt: T0 + H, endsAt: T0 + 2 * H });
      expect(store.get(id)!.startsAt).toBe(T0 + H);
    });
  });

  describe('update rules', () => {
    it('active: same matchers and same start second → in place', async () => {
      const id = await add();
      clock.advance(5000);
      const again = await add({ id, startsAt: T0 + 999, endsAt: T0 + 3 * H, comment: 'longer', createdBy: 'other' });
      expect(again).toBe(id);
      const s = store.get(id)!;
      expect(s).toMatchObject({ startsAt: T0 + 999, endsAt: T0 + 3 * H, comment: 'longer', createdBy: 'other', updatedAt: T0 + 5000 });
    });
    it('active: changed start → new id, old expired now', async () => {
      const id = await add();
      clock.advance(5000);
      const id2 = await add({ id, startsAt: T0 + 2000 });
      expect(id2).not.toBe(id);
      expect(store.get(id)).toMatchObject({ endsAt: T0 + 5000, updatedAt: T0 + 5000 });
      expect(store.get(id2)!.startsAt).toBe(T0 + 5000);
    });
    it('active: end moved into the past → rejected, and the old silence stays active', async () => {
      const id = await add();
      clock.advance(10_000);
      await expect(add({ id, startsAt: T0, endsAt: T0 + 5000 })).rejects.toThrow('silence invalid: end time must not be before start time');
      expect(apiSilenceState(store.get(id)!, clock.now())).toBe('active');
    });
    it('reordered or changed matchers → new id', async () => {
      const id = await add({ matchers: [m('a', '1'), m('b', '2')] });
      const id2 = await add({ id, matchers: [m('b', '2'), m('a', '1')], startsAt: T0 });
      expect(id2).not.toBe(id);
      expect(apiSilenceState(store.get(id)!, clock.now())).toBe('expired');
    });
    it('pending: start not before now → in place; a pending replacement expires with start=end=now', async () => {
      const id = await add({ startsAt: T0 + H, endsAt: T0 + 2 * H });
      expect(await add({ id, startsAt: T0 + 2 * H - 1, endsAt: T0 + 3 * H })).toBe(id);
      const id2 = await add({ id, matchers: [m('x', 'y')], startsAt: T0 + H, endsAt: T0 + 2 * H });
      expect(id2).not.toBe(id);
      expect(store.get(id)).toMatchObject({ startsAt: T0, endsAt: T0 });
    });
    it('expired: never updated; the old one is left alone', async () => {
      const id = await add();
      clock.advance(2 * H);
      const before = store.get(id);
      const id2 = await add({ id, startsAt: T0 + 2 * H, endsAt: T0 + 3 * H });
      expect(id2).not.toBe(id);
      expect(store.get(id)).toBe(before);
    });
    it('unknown id → not found (before matcher validation)', async () => {
      await expect(add({ id: 'nope', matchers: [m('a:b', 'x')] })).rejects.toThrow(SilenceNotFound);
    });
    it('an invalid replacement does not expire the old silence (0.28 fix)', async () => {
      const id = await add();
      await expect(add({ id, matchers: [m('a', '(x', true)] })).rejects.toThrow('silence invalid: invalid label matcher 0: invalid regular expression "(x": error parsing regexp: missing closing ): `(x`');
      expect(apiSilenceState(store.get(id)!, clock.now())).toBe('active');
    });
  });

  describe('expire and gc', () => {
    it('expires active and pending silences, idempotently', async () => {
      const a = await add();
      const p = await add({ startsAt: T0 + H, endsAt: T0 + 2 * H });
      clock.advance(1000);
      await store.expire(a);
      await store.expire(p);
      expect(store.get(a)).toMatchObject({ endsAt: T0 + 1000, updatedAt: T0 + 1000 });
      expect(store.get(p)).toMatchObject({ startsAt: T0 + 1000, endsAt: T0 + 1000 });
      clock.advance(1000);
      const before = store.get(a);
      await store.expire(a);
      expect(store.get(a)).toBe(before);
      await expect(store.expire('00000000-0000-4000-8000-000000000000')).rejects.toThrow(SilenceNotFound);
    });
    it('keeps expired silences for the retention, then drops them (also on disk)', async () => {
      const id = await add();
      clock.set(T0 + H + 120 * H - 1);
      expect(store.gc()).toBe(0);
      clock.advance(1);
      expect(store.gc()).toBe(1);
      expect(store.get(id)).toBeUndefined();
      await new Promise((r) => setTimeout(r, 50)); // a shared backend deletes in the background
      expect((await backend.stored()).some((x) => x.id === id)).toBe(false);
    });
    it('reloads from persistence', async () => {
      const id = await add();
      const again = new SilenceStore(await backend.reopen(), clock);
      expect(again.get(id)).toEqual(store.get(id));
    });
  });

  describe('matcher validation', () => {
    it.each([
      [[m('a', '')], 'silence invalid: at least one matcher must not match the empty string'],
      [[m('a', '.*', true)], 'silence invalid: at least one matcher must not match the empty string'],
      [[m('a', 'x?', true), m('b', '')], 'silence invalid: at least one matcher must not match the empty string'],
      [[m('a:b', 'x')], 'silence invalid: invalid label matcher 0: invalid label name "a:b"'],
      [[m('ok', 'x'), m('1abc', 'x')], 'silence invalid: invalid label matcher 1: invalid label name "1abc"'],
    ])('%j', (ms, msg) => {
      expect(() => validateMatchers(ms)).toThrow(msg);
    });
    it('a lone != matcher is accepted', async () => {
      expect(() => validateMatchers([m('env', 'prod', false, false)])).not.toThrow();
    });
  });

  describe('index', () => {
    it('matches only active silences and sorts ids', async () => {
      const a = await add({ matchers: [m('alertname', 'A')] });
      const b = await add({ matchers: [m('alertname', 'A'), m('env', 'p.*', true)] });
      await add({ matchers: [m('alertname', 'A')], startsAt: T0 + H, endsAt: T0 + 2 * H });
      const c = await add({ matchers: [m('env', 'prod', false, false)] });
      const idx = store.index(clock.now());
      expect(idx.silencedBy({ alertname: 'A', env: 'prod' })).toEqual([a, b].sort());
      expect(idx.silencedBy({ alertname: 'A' })).toEqual([a, c].sort());
      expect(idx.silencedBy({ alertname: 'B', env: 'dev' })).toEqual([c]);
    });
    it('a silence whose anchored matcher cannot be built (\\Qx) is kept but mutes nothing; the others still do', async () => {
      const q = await add({ matchers: [m('a', '\\Qx', true)] });
      const a = await add({ matchers: [m('alertname', 'A')] });
      expect(store.get(q)?.matchers[0]?.value).toBe('\\Qx');
      const idx = store.index(clock.now());
      expect(idx.silencedBy({ alertname: 'B', a: 'x' })).toEqual([]);
      expect(idx.silencedBy({ alertname: 'A', a: 'x' })).toEqual([a]);
    });
    it('is refreshed when a silence starts or ends', async () => {
      const p = await add({ startsAt: T0 + 1000, endsAt: T0 + 2000 });
      expect(store.index(T0).silencedBy({ alertname: 'A' })).toEqual([]);
      expect(store.index(T0 + 1000).silencedBy({ alertname: 'A' })).toEqual([p]);
      expect(store.index(T0 + 2000).silencedBy({ alertname: 'A' })).toEqual([p]);
      expect(store.index(T0 + 2001).silencedBy({ alertname: 'A' })).toEqual([]);
    });
  });
});
