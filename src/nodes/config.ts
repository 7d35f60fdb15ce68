/**
 * The `nodes:` section of ctl.yaml. Every key is optional; the defaults follow the origin
 * (nkn.ovh conf.json.example) except where noted in docs/nodes.md. No third-party host is
 * contacted unless configured: the crawl seeds, the price URL and the balance RPC are empty.
 */
export interface NodesConfig {
  /** Per-IP limit on POST /api (hits per interval seconds). */
  rateLimit: { limit: number; interval: number };
  /** Request body cap for POST /api, bytes. */
  bodyLimit: number;
  nodesPerAccount: number;
  genid: { limit: number; window: number };
  poll: {
    enabled: boolean;
    /** Seconds between polls of both pools; cycles are aligned to multiples of it. */
    interval: number;
    port: number;
    timeout: number;
    retries: number;
    retryTimeout: number;
    retryDelay: number;
    concurrency: number;
    dirtyTimeout: number;
    dirtyRetries: number;
    dirtyConcurrency: number;
    removeNeverSeenAfter: number;
    removeAfter: number;
    /** Polls at the same height after which an answering node counts as stuck (alert NodeStuck). */
    stuckAfter: number;
    historyInterval: number;
    historyEntries: number;
  };
  details: { timeout: number };
  crawl: { seeds: string[]; interval: number; timeout: number; concurrency: number; maxNodes: number };
  prices: { url: string; interval: number; timeout: number };
  balances: { rpc: string; interval: number; timeout: number; concurrency: number };
  websocket: { maxPerIp: number; readTimeout: number; pongTimeout: number; pushUpdates: boolean; maxPayload: number };
  languagesDir: string;
}

export const DEFAULT_CONFIG: NodesConfig = {
  rateLimit: { limit: 600, interval: 60 },
  bodyLimit: 4 << 20,
  nodesPerAccount: 5000,
  genid: { limit: 3, window: 1800 },
  poll: {
    enabled: true,
    interval: 120,
    port: 30003,
    timeout: 12,
    retries: 2,
    retryTimeout: 6,
    retryDelay: 0.5,
    concurrency: 512,
    dirtyTimeout: 2,
    dirtyRetries: 2,
    dirtyConcurrency: 64,
    removeNeverSeenAfter: 180,
    removeAfter: 5040,
    stuckAfter: 10,
    historyInterval: 600,
    historyEntries: 7,
  },
  details: { timeout: 12 },
  crawl: { seeds: [], interval: 3000, timeout: 12, concurrency: 384, maxNodes: 200_000 },
  prices: { url: '', interval: 60, timeout: 15 },
  balances: { rpc: '', interval: 60, timeout: 15, concurrency: 8 },
  websocket: { maxPerIp: 10, readTimeout: 30, pongTimeout: 2, pushUpdates: true, maxPayload: 1 << 20 },
  languagesDir: '',
};

type Obj = Record<string, unknown>;

class Reader {
  private readonly seen = new Set<string>();
  private readonly children: Reader[] = [];

  constructor(
    private readonly obj: Obj,
    private readonly where: string,
  ) {}

  private get(key: string): unknown {
    this.seen.add(key);
    return this.obj[key];
  }

  section(key: string): Reader {
    const v = this.get(key);
    let r: Reader;
    if (v === undefined || v === null) r = new Reader({}, `${this.where}.${key}`);
    else if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${this.where}.${key} must be a mapping`);
    else r = new Reader(v as Obj, `${this.where}.${key}`);
    this.children.push(r);
    return r;
  }

  /** Refuse keys nobody read (a typo would otherwise be ignored silently). */
  checkUnknown(): void {
    for (const k of Object.keys(this.obj)) if (!this.seen.has(k)) throw new Error(`${this.where}.${k} is not a known setting`);
    for (const c of this.children) c.checkUnknown();
  }

  num(key: string, def: number, opts: { min?: number; int?: boolean } = {}): number {
    const v = this.get(key);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${this.where}.${key} must be a number`);
    if (opts.int && !Number.isInteger(v)) throw new Error(`${this.where}.${key} must be an integer`);
    if (opts.min !== undefined && v < opts.min) throw new Error(`${this.where}.${key} must be >= ${opts.min}`);
    return v;
  }

  bool(key: string, def: boolean): boolean {
    const v = this.get(key);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'boolean') throw new Error(`${this.where}.${key} must be true or false`);
    return v;
  }

  str(key: string, def: string): string {
    const v = this.get(key);
    if (v === undefined || v === null) return def;
    if (typeof v !== 'string') throw new Error(`${this.where}.${key} must be a string`);
    return v;
  }

  strings(key: string, def: string[]): string[] {
    const v = this.get(key);
    if (v === undefined || v === null) return def;
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s.trim() === '')) {
      throw new Error(`${this.where}.${key} must be a list of non-empty strings`);
    }
    return v.map((s: string) => s.trim());
  }
}

/** Validate and complete the section; throws an Error naming the bad key. */
/** The keys parseConfig reads (ctl.yaml `nodes:`), for the daemon's check of the whole file. */
export const NODES_CONFIG_KEYS = {
  'rate-limit': { limit: true, interval: true },
  'body-limit': true,
  'nodes-per-account': true,
  genid: { limit: true, window: true },
  poll: {
    enabled: true,
    interval: true,
    port: true,
    timeout: true,
    retries: true,
    'retry-timeout': true,
    'retry-delay': true,
    concurrency: true,
    'dirty-timeout': true,
    'dirty-retries': true,
    'dirty-concurrency': true,
    'remove-never-seen-after': true,
    'remove-after': true,
    'stuck-after': true,
    'history-interval': true,
    'history-entries': true,
  },
  details: { timeout: true },
  crawl: { seeds: true, interval: true, timeout: true, concurrency: true, 'max-nodes': true },
  prices: { url: true, interval: true, timeout: true },
  balances: { rpc: true, interval: true, timeout: true, concurrency: true },
  websocket: { 'max-per-ip': true, 'read-timeout': true, 'pong-timeout': true, 'push-updates': true, 'max-payload': true },
  'languages-dir': true,
} as const;

export function parseConfig(raw: Record<string, unknown> | undefined): NodesConfig {
  const d = DEFAULT_CONFIG;
  const r = new Reader(raw ?? {}, 'nodes');
  const rl = r.section('rate-limit');
  const gi = r.section('genid');
  const p = r.section('poll');
  const det = r.section('details');
  const cr = r.section('crawl');
  const pr = r.section('prices');
  const ba = r.section('balances');
  const ws = r.section('websocket');
  const url = pr.str('url', d.prices.url);
  if (url && !/^https?:\/\//i.test(url)) throw new Error('nodes.prices.url must be an http(s) URL');
  const rpc = ba.str('rpc', d.balances.rpc);
  if (rpc && !/^https?:\/\//i.test(rpc)) throw new Error('nodes.balances.rpc must be an http(s) URL');
  const config: NodesConfig = {
    rateLimit: { limit: rl.num('limit', d.rateLimit.limit, { min: 1, int: true }), interval: rl.num('interval', d.rateLimit.interval, { min: 0.001 }) },
    bodyLimit: r.num('body-limit', d.bodyLimit, { min: 1024, int: true }),
    nodesPerAccount: r.num('nodes-per-account', d.nodesPerAccount, { min: 1, int: true }),
    genid: { limit: gi.num('limit', d.genid.limit, { min: 1, int: true }), window: gi.num('window', d.genid.window, { min: 1 }) },
    poll: {
      enabled: p.bool('enabled', d.poll.enabled),
      interval: p.num('interval', d.poll.interval, { min: 1 }),
      port: p.num('port', d.poll.port, { min: 1, int: true }),
      timeout: p.num('timeout', d.poll.timeout, { min: 0.01 }),
      retries: p.num('retries', d.poll.retries, { min: 0, int: true }),
      retryTimeout: p.num('retry-timeout', d.poll.retryTimeout, { min: 0.01 }),
      retryDelay: p.num('retry-delay', d.poll.retryDelay, { min: 0 }),
      concurrency: p.num('concurrency', d.poll.concurrency, { min: 1, int: true }),
      dirtyTimeout: p.num('dirty-timeout', d.poll.dirtyTimeout, { min: 0.01 }),
      dirtyRetries: p.num('dirty-retries', d.poll.dirtyRetries, { min: 0, int: true }),
      dirtyConcurrency: p.num('dirty-concurrency', d.poll.dirtyConcurrency, { min: 1, int: true }),
      removeNeverSeenAfter: p.num('remove-never-seen-after', d.poll.removeNeverSeenAfter, { min: 1, int: true }),
      removeAfter: p.num('remove-after', d.poll.removeAfter, { min: 1, int: true }),
      stuckAfter: p.num('stuck-after', d.poll.stuckAfter, { min: 1, int: true }),
      historyInterval: p.num('history-interval', d.poll.historyInterval, { min: 1 }),
      historyEntries: p.num('history-entries', d.poll.historyEntries, { min: 7, int: true }),
    },
    details: { timeout: det.num('timeout', d.details.timeout, { min: 0.01 }) },
    crawl: {
      seeds: cr.strings('seeds', d.crawl.seeds),
      interval: cr.num('interval', d.crawl.interval, { min: 1 }),
      timeout: cr.num('timeout', d.crawl.timeout, { min: 0.01 }),
      concurrency: cr.num('concurrency', d.crawl.concurrency, { min: 1, int: true }),
      maxNodes: cr.num('max-nodes', d.crawl.maxNodes, { min: 1, int: true }),
    },
    prices: { url, interval: pr.num('interval', d.prices.interval, { min: 1 }), timeout: pr.num('timeout', d.prices.timeout, { min: 0.01 }) },
    balances: {
      rpc,
      interval: ba.num('interval', d.balances.interval, { min: 1 }),
      timeout: ba.num('timeout', d.balances.timeout, { min: 0.01 }),
      concurrency: ba.num('concurrency', d.balances.concurrency, { min: 1, int: true }),
    },
    websocket: {
      maxPerIp: ws.num('max-per-ip', d.websocket.maxPerIp, { min: 1, int: true }),
      readTimeout: ws.num('read-timeout', d.websocket.readTimeout, { min: 0.05 }),
      pongTimeout: ws.num('pong-timeout', d.websocket.pongTimeout, { min: 0.05 }),
      pushUpdates: ws.bool('push-updates', d.websocket.pushUpdates),
      maxPayload: ws.num('max-payload', d.websocket.maxPayload, { min: 1024, int: true }),
    },
    languagesDir: r.str('languages-dir', d.languagesDir),
  };
  r.checkUnknown();
  return config;
}
