/**
 * The node monitor's data, on the daemon's own SQLite file or, with ctl.yaml `storage.postgres`, in
 * the PostgreSQL database several daemons share (schema.ts): one class, one SQL text per statement,
 * through the store's query layer (src/store/sql.ts; SQLite answers at once). Lists pass as one
 * JSON parameter (src/store/sql-lists.ts) on either database. Where the dialects part, it is for
 * speed or for several daemons: the poll-result, history and crawl batches are one statement on
 * PostgreSQL and a statement per row on SQLite (`upsert`), SQLite lists nodes as raw arrays, and
 * PostgreSQL alone locks the account's row where two daemons could add to one account at once.
 *
 * Shared: accounts, nodes and wallets written through any daemon are read by every daemon; poll
 * results, crawls, prices and balances are written by the daemon holding that job's lease
 * (scheduler.ts). getmynodes lists are cached per account until they could change (NodeListCache,
 * keyed by `listVersion`); a daemon learns of changes made elsewhere through a notification on
 * `ctl_nodes` (which accounts' nodes changed, or that poll results changed), and after a lost
 * listener connection treats everything as changed.
 */
import type { SharedPostgres } from '../store/postgres.js';
import { PgSql, SqliteSql, type Sql } from '../store/sql.js';
import { among, jsonRows, type ColumnType } from '../store/sql-lists.js';
import type { NetNode } from './metrics.js';
import { NODES_SHARED_MIGRATIONS, NODES_TABLES } from './schema.js';

export interface NodeRow {
  id: number;
  name: string;
  ip: string;
  pool: string | null;
  status: string | null;
  uptime: number | null;
  height: number | null;
  version: string | null;
  relays: number | null;
  currts: number | null;
  proposals: number | null;
  rph: number | null;
  rph10: number | null;
  rph60: number | null;
  updated_at: number | null;
}

export interface PollTarget {
  ip: string;
  pool: string;
  fails: number;
  ever_ok: number;
  known: number;
}

export interface StateRow {
  ip: string;
  pool: string;
  status: string | null;
  fails: number;
  ever_ok: number;
  uptime: number;
  height: number;
  version: string;
  relays: number;
  currts: number;
  proposals: number;
  public_key: string | null;
  sync_state: string | null;
  rph: number;
  rph10: number;
  rph60: number;
  updated_at: number;
}

export interface HistoryRow {
  taken_at: number;
  currts: number;
  uptime: number;
  height: number;
  relays: number;
}

export interface OwnedNode {
  id: number;
  name: string;
  ip: string;
  hash: string;
  status: string | null;
}

export interface AddedNodes {
  inserted: number;
  duplicates: number;
}

export interface WalletRow {
  id: number;
  address: string;
  balance: number;
}

/** A crawled node: what getnetstatus sums (metrics.ts), and its address and key. */
export interface CrawlRow extends NetNode {
  ip: string;
  public_key: string | null;
}

const NODE_COLUMNS = `n.id AS id, n.name AS name, n.ip AS ip, s.pool AS pool, s.status AS status, s.uptime AS uptime,
  s.height AS height, s.version AS version, s.relays AS relays, s.currts AS currts, s.proposals AS proposals,
  s.rph AS rph, s.rph10 AS rph10, s.rph60 AS rph60, s.updated_at AS updated_at`;

const STATE_COLUMNS = {
  ip: 'TEXT',
  pool: 'TEXT',
  status: 'TEXT',
  fails: 'INTEGER',
  ever_ok: 'INTEGER',
  uptime: 'BIGINT',
  height: 'BIGINT',
  version: 'TEXT',
  relays: 'BIGINT',
  currts: 'BIGINT',
  proposals: 'BIGINT',
  public_key: 'TEXT',
  sync_state: 'TEXT',
  rph: 'DOUBLE PRECISION',
  rph10: 'DOUBLE PRECISION',
  rph60: 'DOUBLE PRECISION',
  updated_at: 'BIGINT',
} as const;

const HISTORY_COLUMNS = { ip: 'TEXT', taken_at: 'BIGINT', currts: 'BIGINT', uptime: 'BIGINT', height: 'BIGINT', relays: 'BIGINT' } as const;

const CRAWL_COLUMNS = {
  ip: 'TEXT',
  public_key: 'TEXT',
  sync_state: 'TEXT',
  height: 'BIGINT',
  uptime: 'BIGINT',
  relays: 'BIGINT',
  proposals: 'BIGINT',
  answered: 'INTEGER',
} as const;

/**
 * Rows written at once, replacing those with the same `key`; `fixed`: columns with one value for every row.
 * PostgreSQL gets one statement with the rows as JSON (one round trip); SQLite, where a statement
 * costs no round trip, one statement per row in a transaction (a third of the CPU time of reading
 * the JSON: 46 against 140 ms for 5,000 poll results).
 */
async function upsert(
  sql: Sql,
  table: string,
  columns: Readonly<Record<string, ColumnType>>,
  key: readonly string[],
  rows: readonly object[],
  fixed: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  if (rows.length === 0) return;
  const names = [...Object.keys(fixed), ...Object.keys(columns)];
  const set = names.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`);
  const conflict = `ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${set.join(', ')}`;
  const fixedValues = Object.values(fixed);
  if (sql.dialect === 'postgres') {
    const values = [...Object.keys(fixed).map(() => '?'), ...Object.keys(columns).map((c) => `r.${c}`)];
    await sql.run(
      `INSERT INTO ${table} (${names.join(', ')}) SELECT ${values.join(', ')} FROM ${jsonRows(sql.dialect, 'r', columns)} WHERE true ORDER BY r.ord ${conflict}`,
      ...fixedValues,
      JSON.stringify(rows.map((r) => pick(r, columns))),
    );
    return;
  }
  const one = `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ${conflict}`;
  const cols = Object.keys(columns);
  await sql.transaction(async (tx) => {
    for (const r of rows as Record<string, unknown>[]) await tx.run(one, ...fixedValues, ...cols.map((c) => r[c] ?? null));
  });
}

const CHANNEL = 'ctl_nodes';

interface Announcement {
  from: string;
  accounts?: number[];
  states?: true;
}

/** Aborts an all-or-nothing transaction (the rows to remove were not all there). */
class NotFound extends Error {}

export class NodesStore {
  /** Bumped on every write of poll results; with the per-account counter it versions node lists. */
  private statesGen = 0;
  private readonly accountGen = new Map<number, number>();
  private readonly listeners: ((accounts: number[] | undefined) => void)[] = [];
  private readonly dialect: Sql['dialect'];

  /** `shared`: the database several daemons share, and this daemon's id in their notifications. */
  constructor(
    private readonly sql: Sql,
    private readonly shared?: { db: SharedPostgres; daemonId: string },
  ) {
    this.dialect = sql.dialect;
  }

  /** On the shared database: migrate, then follow the other daemons' changes. */
  static async openShared(db: SharedPostgres, daemonId: string): Promise<NodesStore> {
    await db.migrate('nodes', NODES_SHARED_MIGRATIONS);
    const store = new NodesStore(PgSql.over(db, NODES_TABLES), { db, daemonId });
    await db.subscribe(
      CHANNEL,
      (payload) => store.heard(payload),
      () => store.changed(undefined),
    );
    return store;
  }

  /**
   * Calls `fn` when another daemon changed what getmynodes answers: `accounts` whose node lists
   * changed, or every account (`undefined`) after new poll results. Never called on one daemon.
   */
  onRemoteChange(fn: (accounts: number[] | undefined) => void): void {
    this.listeners.push(fn);
  }

  /** Changes whenever getmynodes of the account could answer differently. */
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
    if (a.from === this.shared?.daemonId) return;
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

  /**
   * After a write (never before: a list read in between would be kept under the new version): this
   * daemon's lists are out of date, and the other daemons are told (best effort: a lost
   * notification only delays a cache refresh).
   */
  private async wrote(a: { accounts?: number[]; states?: true }): Promise<void> {
    if (a.states) this.statesGen++;
    for (const id of a.accounts ?? []) this.touch(id);
    if (this.shared) await this.shared.db.notify(CHANNEL, JSON.stringify({ from: this.shared.daemonId, ...a })).catch(() => undefined);
  }

  /** Two daemons adding to one account take turns on its row, so the node limit holds (SQLite: one writer anyway). */
  private async lockAccount(tx: Sql, accountId: number): Promise<void> {
    if (this.dialect === 'postgres') await tx.get('SELECT id FROM accounts WHERE id = ? FOR UPDATE', accountId);
  }

  private async count(sql: string, ...params: unknown[]): Promise<number> {
    return (await this.sql.get<{ n: number }>(sql, ...params))!.n;
  }

  // ---- accounts -------------------------------------------------------------------------------

  countAccountsSince(ip: string, since: number): Promise<number> {
    return this.count('SELECT count(*) AS n FROM accounts WHERE created_ip = ? AND created_at > ?', ip, since);
  }

  createAccount(hash: string, ip: string, now: number): Promise<number> {
    return this.sql.insert('INSERT INTO accounts (hash, created_ip, created_at) VALUES (?, ?, ?)', hash, ip, now);
  }

  async accountId(hash: string): Promise<number | undefined> {
    return (await this.sql.get<{ id: number }>('SELECT id FROM accounts WHERE hash = ?', hash))?.id;
  }

  async accountHash(id: number): Promise<string | undefined> {
    return (await this.sql.get<{ hash: string }>('SELECT hash FROM accounts WHERE id = ?', id))?.hash;
  }

  accountCount(): Promise<number> {
    return this.count('SELECT count(*) AS n FROM accounts');
  }

  // ---- nodes ----------------------------------------------------------------------------------

  countNodes(accountId: number): Promise<number> {
    return this.count('SELECT count(*) AS n FROM nodes WHERE account_id = ?', accountId);
  }

  /**
   * Insert in one transaction, in the given order, skipping addresses the account already has;
   * null (nothing added) when the account would then hold more than `limit` nodes.
   */
  async addNodes(accountId: number, entries: readonly { ip: string; name: string }[], now: number, limit: number): Promise<AddedNodes | null> {
    const out = await this.sql.transaction(async (tx) => {
      await this.lockAccount(tx, accountId);
      const have = (await tx.get<{ n: number }>('SELECT count(*) AS n FROM nodes WHERE account_id = ?', accountId))!.n;
      if (have + entries.length > limit) return null;
      const inserted = await tx.run(
        `INSERT INTO nodes (account_id, ip, name, created_at) SELECT ?, e.ip, e.name, ? FROM ${jsonRows(this.dialect, 'e', { ip: 'TEXT', name: 'TEXT' })}
         WHERE true ORDER BY e.ord ON CONFLICT (account_id, ip) DO NOTHING`,
        accountId,
        now,
        JSON.stringify(entries.map((e) => ({ ip: e.ip, name: e.name }))),
      );
      return { inserted, duplicates: entries.length - inserted };
    });
    if (out && out.inserted > 0) await this.wrote({ accounts: [accountId] });
    return out;
  }

  /** Delete all the ids or none: returns the deleted ids, or null when one is not the account's. */
  async removeNodesById(accountId: number, ids: readonly number[]): Promise<number[] | null> {
    const removed = await allOrNothing(() =>
      this.sql.transaction(async (tx) => {
        const rows = await tx.all(`DELETE FROM nodes WHERE account_id = ? AND ${among(this.dialect, 'id', 'BIGINT')} RETURNING id`, accountId, JSON.stringify(ids));
        if (rows.length !== ids.length) throw new NotFound();
        return [...ids];
      }),
    );
    if (removed) await this.wrote({ accounts: [accountId] });
    return removed;
  }

  /** Delete the account's nodes at these addresses, all or none; returns their ids (in the order of `ips`) or null. */
  async removeNodesByIp(accountId: number, ips: readonly string[]): Promise<number[] | null> {
    const removed = await allOrNothing(() =>
      this.sql.transaction(async (tx) => {
        const rows = await tx.all<{ id: number; ip: string }>(
          `DELETE FROM nodes WHERE account_id = ? AND ${among(this.dialect, 'ip')} RETURNING id, ip`,
          accountId,
          JSON.stringify(ips),
        );
        if (rows.length !== ips.length) throw new NotFound();
        const byIp = new Map(rows.map((r) => [r.ip, r.id]));
        return ips.map((ip) => byIp.get(ip)!);
      }),
    );
    if (removed) await this.wrote({ accounts: [accountId] });
    return removed;
  }

  async listNodes(accountId: number): Promise<NodeRow[]> {
    const text = `SELECT ${NODE_COLUMNS} FROM nodes n LEFT JOIN node_state s ON s.ip = n.ip WHERE n.account_id = ? ORDER BY n.id`;
    if (!(this.sql instanceof SqliteSql)) return this.sql.all<NodeRow>(text, accountId);
    // SQLite: raw arrays turned into objects here, 21 ms of CPU for 5,000 nodes against 50 ms for row objects.
    return (await this.sql.values(text, accountId)).map(
      (r): NodeRow => ({
        id: r[0] as number,
        name: r[1] as string,
        ip: r[2] as string,
        pool: r[3] as string | null,
        status: r[4] as string | null,
        uptime: r[5] as number | null,
        height: r[6] as number | null,
        version: r[7] as string | null,
        relays: r[8] as number | null,
        currts: r[9] as number | null,
        proposals: r[10] as number | null,
        rph: r[11] as number | null,
        rph10: r[12] as number | null,
        rph60: r[13] as number | null,
        updated_at: r[14] as number | null,
      }),
    );
  }

  node(accountId: number, id: number): Promise<NodeRow | undefined> {
    return this.sql.get<NodeRow>(`SELECT ${NODE_COLUMNS} FROM nodes n LEFT JOIN node_state s ON s.ip = n.ip WHERE n.account_id = ? AND n.id = ?`, accountId, id);
  }

  /** Every account's node with the account hash and the address's status (the node alerts). */
  ownedNodes(): Promise<OwnedNode[]> {
    return this.sql.all<OwnedNode>(
      'SELECT n.id AS id, n.name AS name, n.ip AS ip, a.hash AS hash, s.status AS status FROM nodes n JOIN accounts a ON a.id = n.account_id LEFT JOIN node_state s ON s.ip = n.ip',
    );
  }

  /** Monitored addresses counted by stored status (null: not polled yet). */
  statusCounts(): Promise<{ status: string | null; n: number }[]> {
    return this.sql.all('SELECT s.status AS status, count(*) AS n FROM (SELECT DISTINCT ip FROM nodes) a LEFT JOIN node_state s ON s.ip = a.ip GROUP BY s.status');
  }

  /** Accounts that have a node at one of these addresses. */
  async accountsWithIps(ips: readonly string[], tx: Sql = this.sql): Promise<number[]> {
    if (ips.length === 0) return [];
    return (await tx.all<{ a: number }>(`SELECT DISTINCT account_id AS a FROM nodes WHERE ${among(this.dialect, 'ip')}`, JSON.stringify(ips))).map((r) => r.a);
  }

  // ---- poll state -----------------------------------------------------------------------------

  /** Every distinct monitored address with its pool (new addresses start in the main pool). */
  pollTargets(): Promise<PollTarget[]> {
    return this.sql.all<PollTarget>(
      `SELECT d.ip AS ip, coalesce(s.pool, 'main') AS pool, coalesce(s.fails, 0) AS fails, coalesce(s.ever_ok, 0) AS ever_ok,
              CASE WHEN s.ip IS NULL THEN 0 ELSE 1 END AS known
       FROM (SELECT DISTINCT ip FROM nodes) d LEFT JOIN node_state s ON s.ip = d.ip`,
    );
  }

  async states(ips: readonly string[]): Promise<Map<string, StateRow>> {
    if (ips.length === 0) return new Map();
    const rows = await this.sql.all<StateRow>(`SELECT * FROM node_state WHERE ${among(this.dialect, 'ip')}`, JSON.stringify(ips));
    return new Map(rows.map((r) => [r.ip, r]));
  }

  allStates(): Promise<StateRow[]> {
    return this.sql.all<StateRow>('SELECT * FROM node_state');
  }

  /** Write a batch of poll results at once. */
  async saveStates(rows: readonly StateRow[]): Promise<void> {
    if (rows.length === 0) return;
    await upsert(this.sql, 'node_state', STATE_COLUMNS, ['ip'], rows);
    await this.wrote({ states: true });
  }

  /** The time of each address's newest history snapshot. */
  lastSnapshotTimes(): Promise<{ ip: string; t: number }[]> {
    return this.sql.all('SELECT ip, max(taken_at) AS t FROM node_history GROUP BY ip');
  }

  history(ip: string): Promise<HistoryRow[]> {
    return this.sql.all<HistoryRow>('SELECT taken_at, currts, uptime, height, relays FROM node_history WHERE ip = ? ORDER BY taken_at DESC', ip);
  }

  /** Append snapshots and keep only the newest `keep` per address, in one transaction. */
  async addSnapshots(rows: readonly ({ ip: string } & HistoryRow)[], keep: number): Promise<void> {
    if (rows.length === 0) return;
    await this.sql.transaction(async (tx) => {
      await upsert(tx, 'node_history', HISTORY_COLUMNS, ['ip', 'taken_at'], rows);
      await tx.run(
        `DELETE FROM node_history WHERE (ip, taken_at) IN (
           SELECT ip, taken_at FROM (
             SELECT ip, taken_at, row_number() OVER (PARTITION BY ip ORDER BY taken_at DESC) AS rn FROM node_history
             WHERE ${among(this.dialect, 'ip')}
           ) x WHERE x.rn > ?
         )`,
        JSON.stringify([...new Set(rows.map((r) => r.ip))]),
        keep,
      );
    });
  }

  /** Drop state and history of addresses no account monitors any more. */
  async forgetUnmonitored(): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM node_state WHERE ip NOT IN (SELECT ip FROM nodes)');
      await tx.run('DELETE FROM node_history WHERE ip NOT IN (SELECT ip FROM nodes)');
    });
  }

  /** Auto-removal: delete every account's nodes at these addresses; returns the affected accounts. */
  async removeAddresses(ips: readonly string[]): Promise<number[]> {
    if (ips.length === 0) return [];
    const json = JSON.stringify(ips);
    const accounts = await this.sql.transaction(async (tx) => {
      const accounts = await this.accountsWithIps(ips, tx);
      for (const table of ['nodes', 'node_state', 'node_history']) await tx.run(`DELETE FROM ${table} WHERE ${among(this.dialect, 'ip')}`, json);
      return accounts;
    });
    await this.wrote({ states: true });
    return accounts;
  }

  /** Addresses whose monitored node announced this public key. */
  async monitoredIpsByKey(publicKey: string): Promise<string[]> {
    return (await this.sql.all<{ ip: string }>('SELECT ip FROM node_state WHERE public_key = ? ORDER BY ip', publicKey)).map((r) => r.ip);
  }

  // ---- wallets, prices, network status --------------------------------------------------------

  wallets(accountId: number): Promise<WalletRow[]> {
    return this.sql.all<WalletRow>('SELECT id, address, balance FROM wallets WHERE account_id = ? ORDER BY id', accountId);
  }

  /** Replace the account's wallet set: new ones start at -100 (waiting for update), kept ones keep their balance. */
  async replaceWallets(accountId: number, addresses: readonly string[], now: number): Promise<void> {
    const json = JSON.stringify(addresses.map((address) => ({ address })));
    await this.sql.transaction(async (tx) => {
      await this.lockAccount(tx, accountId);
      await tx.run(`DELETE FROM wallets WHERE account_id = ? AND NOT (${among(this.dialect, 'address')})`, accountId, JSON.stringify(addresses));
      // A balance another account already has for a new address is as good as a fresh one.
      await tx.run(
        `INSERT INTO wallets (account_id, address, balance, updated_at)
         SELECT ?, u.address, coalesce((SELECT w.balance FROM wallets w WHERE w.address = u.address AND w.balance != -100 LIMIT 1), -100), ?
         FROM ${jsonRows(this.dialect, 'u', { address: 'TEXT' })} WHERE true ORDER BY u.ord
         ON CONFLICT (account_id, address) DO NOTHING`,
        accountId,
        now,
        json,
      );
    });
  }

  async walletAddresses(): Promise<string[]> {
    return (await this.sql.all<{ address: string }>('SELECT DISTINCT address FROM wallets ORDER BY address')).map((r) => r.address);
  }

  async setBalances(balances: readonly { address: string; balance: number }[], now: number): Promise<void> {
    if (balances.length === 0) return;
    await this.sql.run(
      `UPDATE wallets SET balance = b.balance, updated_at = ? FROM ${jsonRows(this.dialect, 'b', { address: 'TEXT', balance: 'DOUBLE PRECISION' })}
       WHERE wallets.address = b.address`,
      now,
      JSON.stringify(balances.map((b) => ({ address: b.address, balance: b.balance }))),
    );
  }

  prices(): Promise<{ currency: string; value: number }[]> {
    return this.sql.all('SELECT currency, value FROM prices ORDER BY currency');
  }

  async setPrices(prices: Record<string, number>, now: number): Promise<void> {
    const rows = Object.entries(prices).map(([currency, value]) => ({ currency, value }));
    await upsert(this.sql, 'prices', { currency: 'TEXT', value: 'DOUBLE PRECISION' }, ['currency'], rows, { updated_at: now });
  }

  async netstatus(): Promise<{ data: Record<string, unknown>; updated_at: number } | undefined> {
    const row = await this.sql.get<{ data: string; updated_at: number }>('SELECT data, updated_at FROM netstatus WHERE id = 1');
    return row ? { data: JSON.parse(row.data) as Record<string, unknown>, updated_at: row.updated_at } : undefined;
  }

  async setNetstatus(data: Record<string, unknown>, now: number): Promise<void> {
    await this.sql.run(
      'INSERT INTO netstatus (id, data, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at',
      JSON.stringify(data),
      now,
    );
  }

  // ---- crawl ----------------------------------------------------------------------------------

  async meta(key: string): Promise<string | undefined> {
    return (await this.sql.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', key))?.value;
  }

  async setMeta(key: string, value: string, tx: Sql = this.sql): Promise<void> {
    await tx.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', key, value);
  }

  /** Current crawl generation and its finish time (ms), if a crawl completed. */
  async crawlInfo(): Promise<{ generation: number; finishedAt: number } | undefined> {
    const rows = await this.sql.all<{ key: string; value: string }>("SELECT key, value FROM meta WHERE key IN ('crawl_generation', 'crawl_finished_at')");
    const m = new Map(rows.map((r) => [r.key, r.value]));
    const g = m.get('crawl_generation');
    const t = m.get('crawl_finished_at');
    if (g === undefined || t === undefined) return undefined;
    return { generation: Number(g), finishedAt: Number(t) };
  }

  async insertCrawlRows(generation: number, rows: readonly CrawlRow[]): Promise<void> {
    await upsert(this.sql, 'crawl_nodes', CRAWL_COLUMNS, ['generation', 'ip'], rows, { generation });
  }

  /** Make `generation` current and drop every other one. */
  async switchCrawl(generation: number, finishedAt: number): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await this.setMeta('crawl_generation', String(generation), tx);
      await this.setMeta('crawl_finished_at', String(finishedAt), tx);
      await tx.run('DELETE FROM crawl_nodes WHERE generation != ?', generation);
    });
  }

  async discardCrawl(generation: number): Promise<void> {
    await this.sql.run('DELETE FROM crawl_nodes WHERE generation = ?', generation);
  }

  crawlRows(generation: number): Promise<CrawlRow[]> {
    return this.sql.all<CrawlRow>('SELECT ip, public_key, sync_state, height, uptime, relays, proposals, answered FROM crawl_nodes WHERE generation = ?', generation);
  }

  /** Which of `ips` the crawl of `generation` saw. */
  async crawlSeen(generation: number, ips: readonly string[]): Promise<Set<string>> {
    if (ips.length === 0) return new Set();
    const rows = await this.sql.all<{ ip: string }>(`SELECT ip FROM crawl_nodes WHERE generation = ? AND ${among(this.dialect, 'ip')}`, generation, JSON.stringify(ips));
    return new Set(rows.map((r) => r.ip));
  }

  async crawlIpsByKey(generation: number, publicKey: string): Promise<string[]> {
    return (await this.sql.all<{ ip: string }>('SELECT ip FROM crawl_nodes WHERE generation = ? AND public_key = ? ORDER BY ip', generation, publicKey)).map((r) => r.ip);
  }
}

/** The listed columns of a row (what the batch statements read; extra fields stay out of the JSON). */
function pick(row: object, columns: Readonly<Record<string, string>>): Record<string, unknown> {
  const r = row as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const c of Object.keys(columns)) out[c] = r[c] ?? null;
  return out;
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
