import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import type { Egress } from '../egress/index.js';
import { parseHostPort } from '../egress/index.js';
import { isPublicIPv4 } from './addresses.js';
import type { NodesConfig } from './config.js';
import { aggregateNetwork } from './metrics.js';
import { decodeNeighbors, decodeNodeState } from './node-state.js';
import { nodeUrl, rpcCall } from './rpc.js';
import { mapLimit } from '../http/map-limit.js';
import type { NodesData } from './data.js';
import type { CrawlRow } from './store.js';

export interface CrawlReport {
  discovered: number;
  answered: number;
  durationMs: number;
}

const INSERT_CHUNK = 2000;

/** `host`, `host:port` or `http://host:port/` → an RPC URL (port 30003 by default). */
export function seedUrl(seed: string, port: number): string {
  if (/^https?:\/\//i.test(seed)) return seed;
  const t = parseHostPort(seed, port);
  return nodeUrl(t.host, Number.isInteger(t.port) ? t.port : port);
}

/**
 * The network crawl: `getneighbor` on every configured seed, then on every address those returned
 * (two rounds), then `getnodestate` on every discovered address. Only public IPv4 addresses are
 * followed, at most `max-nodes`. The result replaces the previous crawl at once (a new generation)
 * and feeds getnetstatus, getnodeipbypublickey and `_OUT_` detection. With no seeds configured the
 * crawl never runs and no third-party host is contacted.
 */
export class Crawler {
  private running: Promise<CrawlReport | null> | null = null;

  constructor(
    private readonly d: { store: NodesData; egress: Egress; clock: Clock; config: NodesConfig; log: Logger },
  ) {}

  get enabled(): boolean {
    return this.d.config.crawl.seeds.length > 0;
  }

  run(): Promise<CrawlReport | null> {
    this.running ??= this.crawl().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async crawl(): Promise<CrawlReport | null> {
    const { config, egress, store, clock, log } = this.d;
    if (!this.enabled) return null;
    const started = performance.now();
    const c = config.crawl;
    const timeoutMs = c.timeout * 1000;
    const port = config.poll.port;
    const found = new Map<string, CrawlRow>();
    const discover = async (urls: string[]): Promise<string[]> => {
      const fresh: string[] = [];
      await mapLimit(urls, c.concurrency, async (url) => {
        // A real neighbour list is ~200 KB; the cap bounds memory with hundreds of queries in flight.
        const r = await rpcCall(egress, url, 'getneighbor', {}, { timeoutMs, maxBytes: 1 << 20 });
        if (r.kind !== 'ok') return;
        for (const n of decodeNeighbors(r.result) ?? []) {
          if (!n.ip || !isPublicIPv4(n.ip) || found.has(n.ip) || found.size >= c.maxNodes) continue;
          found.set(n.ip, {
            ip: n.ip,
            public_key: n.publicKey || null,
            sync_state: n.syncState || null,
            height: n.height,
            uptime: 0,
            relays: 0,
            proposals: 0,
            answered: 0,
          });
          fresh.push(n.ip);
        }
      });
      return fresh;
    };
    const round1 = await discover(c.seeds.map((s) => seedUrl(s, port)));
    await discover(round1.map((ip) => nodeUrl(ip, port)));
    if (found.size === 0) {
      log.warn('network crawl found no nodes (seeds unreachable?); keeping the previous crawl');
      return { discovered: 0, answered: 0, durationMs: performance.now() - started };
    }
    const rows = [...found.values()];
    await mapLimit(rows, c.concurrency, async (row) => {
      const r = await rpcCall(egress, nodeUrl(row.ip, port), 'getnodestate', {}, { timeoutMs, maxBytes: 64 << 10 });
      if (r.kind !== 'ok') return;
      const s = decodeNodeState(r.result);
      if (!s) return;
      Object.assign(row, {
        public_key: s.publicKey || row.public_key,
        sync_state: s.syncState,
        height: s.height,
        uptime: s.uptime,
        relays: s.relayMessageCount,
        proposals: s.proposalSubmitted,
        answered: 1,
      });
    });

    const generation = ((await store.crawlInfo())?.generation ?? 0) + 1;
    try {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await store.insertCrawlRows(generation, rows.slice(i, i + INSERT_CHUNK));
        await new Promise((r) => setImmediate(r));
      }
      const now = clock.now();
      await store.switchCrawl(generation, now);
      await store.setNetstatus(aggregateNetwork(rows, Math.floor(now / 1000), now), now);
    } catch (e) {
      await Promise.resolve(store.discardCrawl(generation)).catch(() => undefined);
      throw e;
    }
    const answered = rows.filter((r) => r.answered).length;
    const report = { discovered: rows.length, answered, durationMs: performance.now() - started };
    log.info(report, 'network crawl done');
    return report;
  }
}
