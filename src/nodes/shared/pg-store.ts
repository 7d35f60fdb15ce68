/**
 * The node monitor's data in the PostgreSQL database several daemons share (ctl.yaml
 * `storage.postgres`): the same tables and answers as the SQLite store (store.ts), prefixed `nm_`.
 * Accounts, nodes and wallets written through any daemon are read by every daemon; poll results,
 * crawls, prices and balances are written by the daemon holding that job's lease (scheduler.ts).
 *
 * getmynodes lists are cached per account until they could change (NodeListCache, keyed by
 * `listVersion`); a daemon learns of changes made elsewhere through a notification on `ctl_nodes`
 * (which accounts' nodes changed, or that poll results changed), and after a lost listener
 * connection treats everything as changed.
 */
import type { Queryable, SharedPostgres, PgMigration } from '../../store/postgres.js';
import type { NodesData } from '../data.js';
import type { AddedNodes, CrawlRow, HistoryRow, NodeRow, OwnedNode, PollTarget, StateRow, WalletRow } from '../store.js';

export const NODES_SHARED_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE nm_accounts (
        id BIGSERIAL PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        created_ip TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX nm_accounts_created ON nm_accounts(created_ip, created_at);

      CREATE TABLE nm_nodes (
        id BIGSERIAL PRIMARY KEY,
        account_id BIGINT NOT NULL REFERENCES nm_accounts(id) ON DELETE CASCADE,
        ip TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (account_id, ip)
      );
      CREATE INDEX nm_nodes_ip ON nm_nodes(ip);
      CREATE INDEX nm_nodes_account_order ON nm_nodes(account_id, id);

      CREATE TABLE nm_state (
        ip TEXT PRIMARY KEY,
        pool TEXT NOT NULL DEFAULT 'main',
        status TEXT,
        fails INTEGER NOT NULL DEFAULT 0,
        ever_ok INTEGER NOT NULL DEFAULT 0,
        uptime BIGINT NOT NULL DEFAULT 0,
        height BIGINT NOT NULL DEFAULT 0,
        version TEXT NOT NULL DEFAULT '',
        relays BIGINT NOT NULL DEFAULT 0,
        currts BIGINT NOT NULL DEFAULT 0,
        proposals BIGINT NOT NULL DEFAULT 0,
        public_key TEXT,
        sync_state TEXT,
        rph DOUBLE PRECISION NOT NULL DEFAULT 0,
        rph10 DOUBLE PRECISION NOT NULL DEFAULT 0,
        rph60 DOUBLE PRECISION NOT NULL DEFAULT 0,
        updated_at BIGINT NOT NULL
      );
      CREATE INDEX nm_state_key ON nm_state(public_key);

      CREATE TABLE nm_history (
        ip TEXT NOT NULL,
        taken_at BIGINT NOT NULL,
        currts BIGINT NOT NULL,
        uptime BIGINT NOT NULL,
        height BIGINT NOT NULL,
        relays BIGINT NOT NULL,
        PRIMARY KEY (ip, taken_at)
      );

      CREATE TABLE nm_wallets (
        id BIGSERIAL PRIMARY KEY,
        account_id BIGINT NOT NULL REFERENCES nm_accounts(id) ON DELETE CASCADE,
        address TEXT NOT NULL,
        balance DOUBLE PRECISION NOT NULL DEFAULT -100,
        updated_at BIGINT,
        UNIQUE (account_id, address)
      );
      CREATE INDEX nm_wallets_address ON nm_wallets(address);

      CREATE TABLE nm_prices (
        currency TEXT PRIMARY KEY,
        value DOUBLE PRECISION NOT NULL,
        updated_at BIGINT NOT NULL
      );

      CREATE TABLE nm_netstatus (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        data TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );

      CREATE TABLE nm_crawl (
        generation BIGINT NOT NULL,
        ip TEXT NOT NULL,
        public_key TEXT,
        sync_state TEXT,
        height BIGINT NOT NULL DEFAULT 0,
        uptime BIGINT NOT NULL DEFAULT 0,
        relays BIGINT NOT NULL DEFAULT 0,
        proposals BIGINT NOT NULL DEFAULT 0,
        answered INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (generation, ip)
      );
      CREATE INDEX nm_crawl_key ON nm_crawl(generation, public_key);

      CREATE TABLE nm_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
];

const CHANNEL = 'ctl_nodes';

interface Announcement {
  from: string;
  accounts?: number[];
  states?: true;
}

const NODE_COLUMNS = `n.id AS id, n.name AS name, n.ip AS ip, s.pool AS pool, s.status AS status, s.uptime AS uptime,
  s.height AS height, s.version AS version, s.relays AS relays, s.currts AS currts, s.proposals AS proposals,
  s.rph AS rph, s.rph10 AS rph10, s.rph60 AS rph60, s.updated_at AS updated_at`;

const STATE_UPDATE = `pool = excluded.pool, status = excluded.status, fails = excluded.fails, ever_ok = excluded.ever_ok,
  uptime = excluded.uptime, height = excluded.height, version = excluded.version, relays = excluded.relays,
  currts = excluded.currts, proposals = excluded.proposals, public_key = excluded.public_key,
  sync_state = excluded.sync_state, rph = excluded.rph, rph10 = excluded.rph10, rph60 = excluded.rph60,
  updated_at = excluded.updated_at`;

/** Aborts an all-or-nothing transaction (the rows to remove were not all there). */
class NotFound extends Error {}

export class PgNodesStore implements NodesData {
  private statesGen = 0;
  private readonly accountGen = new Map<number, number>();
  private readonly listeners: ((accounts: number[] | undefined) => void)[] = [];

  private constructor(
    private readonly db: SharedPostgres,
    private readonly daemonId: string,
  ) {}

  /** Migrate, then follow the other daemons' changes. */
  static async open(db: SharedPostgres, daemonId: string): Promise<PgNodesStore> {
    await db.migrate('nodes', NODES_SHARED_MIGRATIONS);
    const store = new PgNodesStore(db, daemonId);
    await db.subscribe(
      CHANNEL,
      (payload) => store.heard(payload),
      () => store.changed(undefined),
    );
    return store;
  }

  onRemoteChange(fn: (accounts: number[] | undefined) => void): void {
    this.listeners.push(fn);
  }

  listVersion(accountId: number): string {
    return `${this.statesGen}:${this.accountGen.get(accountId) ?? 0}`;
  }

  private heard(payload: string): void {
    let a: Announcement;
    try {
      a = JSON.parse(payload) as Announcement;
    } catch {
      return;
    }
    if (a.from === this.daemonId) return;
    this.changed(a.states ? undefined : (a.accounts ?? []));
  }

  /** Cached lists of these accounts (every account: undefined) are out of date. */
  private changed(accounts: number[] | undefined): void {
    if (accounts === undefined) this.statesGen++;
    else for (const id of accounts) this.touch(id);
    for (const fn of this.listeners) fn(accounts);
  }

  private touch(accountId: number): void {
    this.accountGen.set(accountId, (this.accountGen.get(accountId) ?? 0) + 1);
  }

  /** Tell the other daemons (best effort: a lost notification only delays a cache refresh). */
  private announce(a: Omit<Announcement, 'from'>): Promise<void> {
    return this.db.notify(CHANNEL, JSON.stringify({ from: this.daemonId, ...a })).catch(() => undefined);
  }

  private async one<R>(sql: string, params: unknown[] = [], q: Queryable = this.db): Promise<R | undefined> {
    return (await q.query<R>(sql, params))[0];
  }

  // ---- accounts -------------------------------------------------------------------------------

  async countAccountsSince(ip: string, since: number): Promise<number> {
    return (await this.one<{ c: number }>('SELECT count(*) AS c FROM nm_accounts WHERE created_ip = $1 AND created_at > $2', [ip, since]))!.c;
  }

  async createAccount(hash: string, ip: string, now: number): Promise<number> {
    return (await this.one<{ id: number }>('INSERT INTO nm_accounts (hash, created_ip, created_at) VALUES ($1, $2, $3) RETURNING id', [hash, ip, now]))!.id;
  }

  async accountId(hash: string): Promise<number | undefined> {
    return (await this.one<{ id: number }>('SELECT id FROM nm_accounts WHERE hash = $1', [hash]))?.id;
  }

  async accountHash(id: number): Promise<string | undefined> {
    return (await this.one<{ hash: string }>('SELECT hash FROM nm_accounts WHERE id = $1', [id]))?.hash;
  }

  async accountCount(): Promise<number> {
    return (await this.one<{ n: number }>('SELECT count(*) AS n FROM nm_accounts'))!.n;
  }

  // ---- nodes ----------------------------------------------------------------------------------

  async countNodes(accountId: number, q: Queryable = this.db): Promise<number> {
    return (await this.one<{ c: number }>('SELECT count(*) AS c FROM nm_nodes WHERE account_id = $1', [accountId], q))!.c;
  }

  async addNodes(accountId: number, entries: readonly { ip: string; name: string }[], now: number, limit: number): Promise<AddedNodes | null> {
    const out = await this.db.transaction(async (q) => {
      // The account row is the lock: two daemons adding to one account take turns, so the limit holds.
      await q.query('SELECT id FROM nm_accounts WHERE id = $1 FOR UPDATE', [accountId]);
      if ((await this.countNodes(accountId, q)) + entries.length > limit) return null;
      const rows = await q.query(
        `INSERT INTO nm_nodes (account_id, ip, name, created_at)
         SELECT $1, u.ip, u.name, $4 FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(ip, name, ord) ORDER BY u.ord
         ON CONFLICT (account_id, ip) DO NOTHING RETURNING id`,
        [accountId, entries.map((e) => e.ip), entries.map((e) => e.name), now],
      );
      return { inserted: rows.length, duplicates: entries.length - rows.length };
    });
    if (out && out.inserted > 0) await this.nodesChanged(accountId);
    return out;
  }

  async removeNodesById(accountId: number, ids: readonly number[]): Promise<number[] | null> {
    const removed = await allOrNothing(() =>
      this.db.transaction(async (q) => {
        const rows = await q.query('DELETE FROM nm_nodes WHERE account_id = $1 AND id = ANY($2::bigint[]) RETURNING id', [accountId, ids]);
        if (rows.length !== ids.length) throw new NotFound();
        return [...ids];
      }),
    );
    if (removed) await this.nodesChanged(accountId);
    return removed;
  }

  async removeNodesByIp(accountId: number, ips: readonly string[]): Promise<number[] | null> {
    const removed = await allOrNothing(() =>
      this.db.transaction(async (q) => {
        const rows = await q.query<{ id: number; ip: string }>('DELETE FROM nm_nodes WHERE account_id = $1 AND ip = ANY($2::text[]) RETURNING id, ip', [accountId, ips]);
        if (rows.length !== ips.length) throw new NotFound();
        const byIp = new Map(rows.map((r) => [r.ip, r.id]));
        return ips.map((ip) => byIp.get(ip)!);
      }),
    );
    if (removed) await this.nodesChanged(accountId);
    return removed;
  }

  private async nodesChanged(accountId: number): Promise<void> {
    this.touch(accountId);
    await this.announce({ accounts: [accountId] });
  }

  async listNodes(accountId: number): Promise<NodeRow[]> {
    return this.db.query<NodeRow>(`SELECT ${NODE_COLUMNS} FROM nm_nodes n LEFT JOIN nm_state s ON s.ip = n.ip WHERE n.account_id = $1 ORDER BY n.id`, [accountId]);
  }

  async node(accountId: number, id: number): Promise<NodeRow | undefined> {
    return this.one<NodeRow>(`SELECT ${NODE_COLUMNS} FROM nm_nodes n LEFT JOIN nm_state s ON s.ip = n.ip WHERE n.account_id = $1 AND n.id = $2`, [accountId, id]);
  }

  async accountsWithIps(ips: readonly string[], q: Queryable = this.db): Promise<number[]> {
    if (ips.length === 0) return [];
    return (await q.query<{ a: number }>('SELECT DISTINCT account_id AS a FROM nm_nodes WHERE ip = ANY($1::text[])', [ips])).map((r) => r.a);
  }

  async ownedNodes(): Promise<OwnedNode[]> {
    return this.db.query<OwnedNode>(
      'SELECT n.id AS id, n.name AS name, n.ip AS ip, a.hash AS hash, s.status AS status FROM nm_nodes n JOIN nm_accounts a ON a.id = n.account_id LEFT JOIN nm_state s ON s.ip = n.ip',
    );
  }

  async statusCounts(): Promise<{ status: string | null; n: number }[]> {
    return this.db.query('SELECT s.status AS status, count(*) AS n FROM (SELECT DISTINCT ip FROM nm_nodes) a LEFT JOIN nm_state s ON s.ip = a.ip GROUP BY s.status');
  }

  // ---- poll state -----------------------------------------------------------------------------

  async pollTargets(): Promise<PollTarget[]> {
    return this.db.query<PollTarget>(
      `SELECT d.ip AS ip, coalesce(s.pool, 'main') AS pool, coalesce(s.fails, 0) AS fails, coalesce(s.ever_ok, 0) AS ever_ok,
              (s.ip IS NOT NULL)::int AS known
       FROM (SELECT DISTINCT ip FROM nm_nodes) d LEFT JOIN nm_state s ON s.ip = d.ip`,
    );
  }

  async states(ips: readonly string[]): Promise<Map<string, StateRow>> {
    const rows = await this.db.query<StateRow>('SELECT * FROM nm_state WHERE ip = ANY($1::text[])', [ips]);
    return new Map(rows.map((r) => [r.ip, r]));
  }

  async allStates(): Promise<StateRow[]> {
    return this.db.query<StateRow>('SELECT * FROM nm_state');
  }

  async saveStates(rows: readonly StateRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO nm_state SELECT * FROM json_populate_recordset(null::nm_state, $1::json)
       ON CONFLICT (ip) DO UPDATE SET ${STATE_UPDATE}`,
      [JSON.stringify(rows)],
    );
    this.statesGen++;
    await this.announce({ states: true });
  }

  async history(ip: string): Promise<HistoryRow[]> {
    return this.db.query<HistoryRow>('SELECT taken_at, currts, uptime, height, relays FROM nm_history WHERE ip = $1 ORDER BY taken_at DESC', [ip]);
  }

  async lastSnapshotTimes(): Promise<{ ip: string; t: number }[]> {
    return this.db.query('SELECT ip, max(taken_at) AS t FROM nm_history GROUP BY ip');
  }

  async addSnapshots(rows: readonly ({ ip: string } & HistoryRow)[], keep: number): Promise<void> {
    if (rows.length === 0) return;
    await this.db.transaction(async (q) => {
      await q.query(
        `INSERT INTO nm_history SELECT * FROM json_populate_recordset(null::nm_history, $1::json)
         ON CONFLICT (ip, taken_at) DO UPDATE SET currts = excluded.currts, uptime = excluded.uptime, height = excluded.height, relays = excluded.relays`,
        [JSON.stringify(rows)],
      );
      await q.query(
        `DELETE FROM nm_history h USING (
           SELECT ip, taken_at, row_number() OVER (PARTITION BY ip ORDER BY taken_at DESC) AS rn FROM nm_history WHERE ip = ANY($1::text[])
         ) x WHERE h.ip = x.ip AND h.taken_at = x.taken_at AND x.rn > $2`,
        [[...new Set(rows.map((r) => r.ip))], keep],
      );
    });
  }

  async forgetUnmonitored(): Promise<void> {
    await this.db.transaction(async (q) => {
      await q.query('DELETE FROM nm_state s WHERE NOT EXISTS (SELECT 1 FROM nm_nodes n WHERE n.ip = s.ip)');
      await q.query('DELETE FROM nm_history h WHERE NOT EXISTS (SELECT 1 FROM nm_nodes n WHERE n.ip = h.ip)');
    });
  }

  async removeAddresses(ips: readonly string[]): Promise<number[]> {
    if (ips.length === 0) return [];
    const accounts = await this.db.transaction(async (q) => {
      const accounts = await this.accountsWithIps(ips, q);
      for (const table of ['nm_nodes', 'nm_state', 'nm_history']) await q.query(`DELETE FROM ${table} WHERE ip = ANY($1::text[])`, [ips]);
      return accounts;
    });
    this.statesGen++;
    await this.announce({ states: true });
    return accounts;
  }

  async monitoredIpsByKey(publicKey: string): Promise<string[]> {
    return (await this.db.query<{ ip: string }>('SELECT ip FROM nm_state WHERE public_key = $1 ORDER BY ip', [publicKey])).map((r) => r.ip);
  }

  // ---- wallets, prices, network status --------------------------------------------------------

  async wallets(accountId: number): Promise<WalletRow[]> {
    return this.db.query<WalletRow>('SELECT id, address, balance FROM nm_wallets WHERE account_id = $1 ORDER BY id', [accountId]);
  }

  async replaceWallets(accountId: number, addresses: readonly string[], now: number): Promise<void> {
    await this.db.transaction(async (q) => {
      await q.query('SELECT id FROM nm_accounts WHERE id = $1 FOR UPDATE', [accountId]);
      await q.query('DELETE FROM nm_wallets WHERE account_id = $1 AND NOT (address = ANY($2::text[]))', [accountId, addresses]);
      // New addresses start at -100 (waiting), or at a balance another account already has for them.
      await q.query(
        `INSERT INTO nm_wallets (account_id, address, balance, updated_at)
         SELECT $1, u.a, coalesce((SELECT w.balance FROM nm_wallets w WHERE w.address = u.a AND w.balance != -100 LIMIT 1), -100), $3
         FROM unnest($2::text[]) WITH ORDINALITY AS u(a, ord) ORDER BY u.ord
         ON CONFLICT (account_id, address) DO NOTHING`,
        [accountId, addresses, now],
      );
    });
  }

  async walletAddresses(): Promise<string[]> {
    return (await this.db.query<{ address: string }>('SELECT DISTINCT address FROM nm_wallets ORDER BY address')).map((r) => r.address);
  }

  async setBalances(balances: readonly { address: string; balance: number }[], now: number): Promise<void> {
    if (balances.length === 0) return;
    await this.db.query(
      'UPDATE nm_wallets w SET balance = b.balance, updated_at = $2 FROM json_to_recordset($1::json) AS b(address TEXT, balance DOUBLE PRECISION) WHERE w.address = b.address',
      [JSON.stringify(balances), now],
    );
  }

  async prices(): Promise<{ currency: string; value: number }[]> {
    return this.db.query('SELECT currency, value FROM nm_prices ORDER BY currency');
  }

  async setPrices(prices: Record<string, number>, now: number): Promise<void> {
    const rows = Object.entries(prices).map(([currency, value]) => ({ currency, value }));
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO nm_prices (currency, value, updated_at) SELECT p.currency, p.value, $2 FROM json_to_recordset($1::json) AS p(currency TEXT, value DOUBLE PRECISION)
       ON CONFLICT (currency) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      [JSON.stringify(rows), now],
    );
  }

  async netstatus(): Promise<{ data: Record<string, unknown>; updated_at: number } | undefined> {
    const row = await this.one<{ data: string; updated_at: number }>('SELECT data, updated_at FROM nm_netstatus WHERE id = 1');
    return row ? { data: JSON.parse(row.data) as Record<string, unknown>, updated_at: row.updated_at } : undefined;
  }

  async setNetstatus(data: Record<string, unknown>, now: number): Promise<void> {
    await this.db.query(
      'INSERT INTO nm_netstatus (id, data, updated_at) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at',
      [JSON.stringify(data), now],
    );
  }

  // ---- crawl ----------------------------------------------------------------------------------

  async meta(key: string, q: Queryable = this.db): Promise<string | undefined> {
    return (await this.one<{ value: string }>('SELECT value FROM nm_meta WHERE key = $1', [key], q))?.value;
  }

  async setMeta(key: string, value: string, q: Queryable = this.db): Promise<void> {
    await q.query('INSERT INTO nm_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  async crawlInfo(): Promise<{ generation: number; finishedAt: number } | undefined> {
    const rows = await this.db.query<{ key: string; value: string }>("SELECT key, value FROM nm_meta WHERE key IN ('crawl_generation', 'crawl_finished_at')");
    const m = new Map(rows.map((r) => [r.key, r.value]));
    const g = m.get('crawl_generation');
    const t = m.get('crawl_finished_at');
    if (g === undefined || t === undefined) return undefined;
    return { generation: Number(g), finishedAt: Number(t) };
  }

  async insertCrawlRows(generation: number, rows: readonly CrawlRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO nm_crawl (generation, ip, public_key, sync_state, height, uptime, relays, proposals, answered)
       SELECT $1, r.ip, r.public_key, r.sync_state, r.height, r.uptime, r.relays, r.proposals, r.answered
       FROM json_to_recordset($2::json) AS r(ip TEXT, public_key TEXT, sync_state TEXT, height BIGINT, uptime BIGINT, relays BIGINT, proposals BIGINT, answered INTEGER)
       ON CONFLICT (generation, ip) DO UPDATE SET public_key = excluded.public_key, sync_state = excluded.sync_state, height = excluded.height,
         uptime = excluded.uptime, relays = excluded.relays, proposals = excluded.proposals, answered = excluded.answered`,
      [generation, JSON.stringify(rows)],
    );
  }

  async switchCrawl(generation: number, finishedAt: number): Promise<void> {
    await this.db.transaction(async (q) => {
      await this.setMeta('crawl_generation', String(generation), q);
      await this.setMeta('crawl_finished_at', String(finishedAt), q);
      await q.query('DELETE FROM nm_crawl WHERE generation != $1', [generation]);
    });
  }

  async discardCrawl(generation: number): Promise<void> {
    await this.db.query('DELETE FROM nm_crawl WHERE generation = $1', [generation]);
  }

  async crawlRows(generation: number): Promise<CrawlRow[]> {
    return this.db.query<CrawlRow>('SELECT ip, public_key, sync_state, height, uptime, relays, proposals, answered FROM nm_crawl WHERE generation = $1', [generation]);
  }

  async crawlSeen(generation: number, ips: readonly string[]): Promise<Set<string>> {
    if (ips.length === 0) return new Set();
    const rows = await this.db.query<{ ip: string }>('SELECT ip FROM nm_crawl WHERE generation = $1 AND ip = ANY($2::text[])', [generation, ips]);
    return new Set(rows.map((r) => r.ip));
  }

  async crawlIpsByKey(generation: number, publicKey: string): Promise<string[]> {
    return (await this.db.query<{ ip: string }>('SELECT ip FROM nm_crawl WHERE generation = $1 AND public_key = $2 ORDER BY ip', [generation, publicKey])).map((r) => r.ip);
  }
}

/** Run an all-or-nothing removal: null when one target was missing (nothing changed). */
async function allOrNothing<T>(fn: () => Promise<T>): Promise<T | null> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof NotFound) return null;
    throw e;
  }
}
