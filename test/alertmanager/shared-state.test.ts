/**
 * The alert manager's cluster state on a real PostgreSQL (a private server the test starts):
 * silences followed by every "daemon" (here: several stores in one process, each with its own
 * connections), the notification log's claims, and what happens when the server goes away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { systemClock } from '../../src/http/clock.js';
import { SilenceStore } from '../../src/alertmanager/silences.js';
import { SharedSilences } from '../../src/alertmanager/shared/silences.js';
import { SharedNotificationLog } from '../../src/alertmanager/shared/nflog.js';
import { SHARED_MIGRATIONS } from '../../src/alertmanager/shared/migrations.js';
import { SharedPostgres, StorageUnavailable } from '../../src/store/postgres.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';

const quiet = pino({ level: 'silent' });
const H = 3_600_000;
const matchers = [{ name: 'alertname', value: 'Disk', isRegex: false, isEqual: true }];


interface Member {
  db: SharedPostgres;
  silences: SilenceStore;
  backend: SharedSilences;
}

describe.skipIf(!PG_BIN)('alert manager state shared through PostgreSQL', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let server: PostgresServer;
  let url: string;
  const open: SharedPostgres[] = [];

  const connect = async () => {
    const db = await SharedPostgres.connect(url, quiet);
    open.push(db);
    await db.migrate('alertmanager', SHARED_MIGRATIONS);
    return db;
  };
  const member = async (): Promise<Member> => {
    const db = await connect();
    const backend = await SharedSilences.open(db, quiet);
    const silences = new SilenceStore(backend, systemClock);
    await backend.follow(silences);
    return { db, silences, backend };
  };

  beforeAll(async () => {
    server = await PostgresServer.start();
    url = await server.createDatabase('am_shared');
  }, 30_000);
  afterAll(async () => {
    for (const db of open) await db.close();
    await server?.destroy();
  });

  it('migrates once when several daemons start together', async () => {
    const dbs = await Promise.all([1, 2, 3].map(() => SharedPostgres.connect(url, quiet)));
    open.push(...dbs);
    await Promise.all(dbs.map((db) => db.migrate('alertmanager', SHARED_MIGRATIONS)));
    const rows = await dbs[0]!.query<{ version: number }>("SELECT version FROM ctl_migrations WHERE component = 'alertmanager'");
    expect(rows).toEqual([{ version: SHARED_MIGRATIONS.length }]);
  });

  it('a silence set through one daemon is in force on the others within a second; expiring it too', async () => {
    const [a, b, c] = [await member(), await member(), await member()];
    const now = Date.now();
    const id = await a.silences.set({ matchers, startsAt: now, endsAt: now + H, createdBy: 'a', comment: 'maintenance' });
    await until('b and c to hold the silence', () => b.silences.get(id) !== undefined && c.silences.get(id) !== undefined, 1000);
    expect(b.silences.index(Date.now()).silencedBy({ alertname: 'Disk' })).toEqual([id]);
    await c.silences.expire(id);
    await until('a to see it expired', () => (a.silences.get(id)?.endsAt ?? Infinity) <= Date.now(), 1000);
    expect(a.silences.index(Date.now() + 1).silencedBy({ alertname: 'Disk' })).toEqual([]);
    // A daemon started later loads it from the database.
    const d = await member();
    expect(d.silences.get(id)?.comment).toBe('maintenance');
  });

  it('a daemon starting holds a silence another daemon set between its first read and its subscription', async () => {
    const a = await member();
    const db = await connect();
    // The start-up order of the alert manager: read (open), build the store, then follow.
    const backend = await SharedSilences.open(db, quiet);
    const silences = new SilenceStore(backend, systemClock);
    const now = Date.now();
    const id = await a.silences.set({ matchers, startsAt: now, endsAt: now + H, createdBy: 'a', comment: 'set during the start' });
    await backend.follow(silences);
    // A restarted daemon used to miss such a silence for good (nothing announces it again).
    expect(silences.get(id)?.comment).toBe('set during the start');
  });

  it('the later update wins, on the server and in every daemon', async () => {
    const [a, b] = [await member(), await member()];
    const now = Date.now();
    const id = await a.silences.set({ matchers, startsAt: now, endsAt: now + H, createdBy: 'a', comment: 'one' });
    await until('b to hold it', () => b.silences.get(id) !== undefined);
    const older = { ...a.silences.get(id)!, comment: 'stale', updatedAt: now - 10_000 };
    await b.backend.writeSilences([older], []);
    await new Promise((r) => setTimeout(r, 200));
    expect(a.silences.get(id)?.comment).toBe('one');
    expect((await a.backend.stored()).find((s) => s.id === id)?.comment).toBe('one');
  });

  it('changes made while a daemon was not listening are picked up when its listener reconnects', async () => {
    const a = await member();
    // Cut every notification connection, then write a row no notification announces.
    await a.db.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ctl-listen'");
    const now = Date.now();
    const s = { id: 'written-behind-the-back', matchers, startsAt: now, endsAt: now + H, updatedAt: now, createdBy: 'x', comment: 'missed' };
    const raw = await connect();
    await raw.query('INSERT INTO am_silences (id, data, updated_at) VALUES ($1, $2, $3)', [s.id, JSON.stringify(s), s.updatedAt]);
    await until('a to reload after reconnecting', () => a.silences.get(s.id)?.comment === 'missed', 5000);
  });

  it('each notification is claimed by one daemon; a dead holder gives it up when its hold runs out', async () => {
    const db1 = await connect();
    const db2 = await connect();
    const one = new SharedNotificationLog(db1, 'daemon-1', 120 * H, quiet);
    const two = new SharedNotificationLog(db2, 'daemon-2', 120 * H, quiet);
    const key = `{}:{alertname="Disk"}\u0000web\u0000webhook\u00000`;
    const now = Date.now();
    const [t1, t2] = await Promise.all([one.begin(key, now, 60_000), two.begin(key, now, 60_000)]);
    // Exactly one of two simultaneous flushes gets the key.
    expect([t1, t2].filter((t) => t !== null)).toHaveLength(1);
    const winner = (t1 ?? t2)!;
    const [first, second] = t1 ? [one, two] : [two, one];
    expect(winner.entry).toBeUndefined();
    await winner.finish({ firing: ['fp1'], resolved: [], at: now });
    const next = await second.begin(key, Date.now(), 60_000);
    expect(next?.entry).toEqual({ firing: ['fp1'], resolved: [], at: now });
    // Held and never finished (the holder died): the other takes it once the hold has run out.
    expect(await first.begin(key, Date.now(), 60_000)).toBeNull();
    await next!.finish();
    const dying = await first.begin(key, Date.now(), 1000);
    expect(dying).not.toBeNull();
    expect(await second.begin(key, Date.now(), 1000)).toBeNull();
    await new Promise((r) => setTimeout(r, 1100));
    const covered = await second.begin(key, Date.now(), 1000);
    expect(covered?.entry?.firing).toEqual(['fp1']);
    await covered!.finish();
    expect(await one.gc(Date.now())).toBe(0);
    expect(one.size).toBe(1);
  });

  it('when the server goes away, writes fail at once with 503 and work again when it is back', async () => {
    const a = await member();
    await server.stop();
    const now = Date.now();
    const t0 = performance.now();
    const err = await a.silences.set({ matchers, startsAt: now, endsAt: now + H, createdBy: 'a', comment: 'down' }).catch((e) => e);
    expect(err).toBeInstanceOf(StorageUnavailable);
    expect((err as StorageUnavailable).status).toBe(503);
    // The next one does not even try the network: the database is known to be down.
    const t1 = performance.now();
    await expect(a.silences.set({ matchers, startsAt: now, endsAt: now + H, createdBy: 'a', comment: 'down' })).rejects.toBeInstanceOf(StorageUnavailable);
    expect(performance.now() - t1).toBeLessThan(50);
    expect(t1 - t0).toBeLessThan(5000);
    await server.start();
    await until('the database to be reachable again', () => a.db.available, 10_000);
    const id = await a.silences.set({ matchers, startsAt: Date.now(), endsAt: Date.now() + H, createdBy: 'a', comment: 'back' });
    expect((await a.backend.stored()).some((s) => s.id === id)).toBe(true);
  }, 30_000);
});
