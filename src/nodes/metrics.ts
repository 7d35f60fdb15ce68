import { formatDateTime } from './format.js';
import { relaysPerHour } from './node-state.js';

/** NKN mainnet launch (2019-06-29 13:26:30 UTC): block time is averaged since then. */
export const MAINNET_LAUNCH = 1561814790;

export interface Snapshot {
  currts: number;
  uptime: number;
  relays: number;
}

/**
 * Relays per hour between two snapshots `window` seconds apart (RelaysPerHour10 / 60).
 * 0 when there is no older snapshot or the node clock and uptime disagree by more than 10 s;
 * -1 when the node restarted in between or the snapshots are not one window apart (a gap).
 */
export function windowRate(newest: Snapshot, older: Snapshot | undefined, window: number): number {
  if (!older) return 0;
  if (older.uptime <= 0 || newest.uptime <= older.uptime || newest.relays < older.relays) return -1;
  const dUp = newest.uptime - older.uptime;
  const dTs = newest.currts - older.currts;
  if (Math.abs(dUp - dTs) > 10) return 0;
  if (dUp <= window - 60 || dUp >= window + 60) return -1;
  return Math.floor(((newest.relays - older.relays) / dUp) * 3600);
}

export interface NetworkView {
  /** Crawl finish time, unix seconds. */
  crawlTime: number;
  lastHeight: number;
  blockTime: number;
  seen(ip: string): boolean;
}

/**
 * Out of network: the node has been up for 20 minutes, the last crawl did not see it, it started
 * more than 5 minutes before that crawl, and its height is more than 7 blocks off the network
 * height extrapolated from the crawl.
 */
export function isOutOfNetwork(node: { ip: string; uptime: number; height: number }, nowSec: number, net: NetworkView | undefined): boolean {
  if (node.uptime < 1200 || !net || net.blockTime <= 0) return false;
  if (net.seen(node.ip)) return false;
  if (!(nowSec - node.uptime + 300 < net.crawlTime)) return false;
  const expected = (nowSec - net.crawlTime) / net.blockTime;
  return Math.abs(Math.abs(node.height - net.lastHeight) - expected) > 7;
}

export interface NetNode {
  sync_state: string | null;
  height: number;
  uptime: number;
  relays: number;
  proposals: number;
  answered: number;
}

/** The getnetstatus object over a set of nodes (key order as the origin). */
export function aggregateNetwork(nodes: readonly NetNode[], timestampSec: number, nowMs: number): Record<string, unknown> {
  let relays = 0;
  let perHour = 0;
  let uptime = 0;
  let proposals = 0;
  let persist = 0;
  let lastHeight = 0;
  for (const n of nodes) {
    if (!n.answered) continue;
    relays += n.relays;
    perHour += relaysPerHour(n.relays, n.uptime);
    uptime += n.uptime;
    proposals += n.proposals;
    if (n.sync_state === 'PERSIST_FINISHED') {
      persist++;
      if (n.height > lastHeight) lastHeight = n.height;
    }
  }
  const count = nodes.length;
  const blockTime = lastHeight > 0 ? (timestampSec - MAINNET_LAUNCH) / lastHeight : 0;
  return {
    relays,
    average_uptime: count ? Math.floor(uptime / count) : 0,
    average_relays: count ? Math.floor(perHour / count) : 0,
    relays_per_hour: perHour,
    proposalSubmitted: proposals,
    persist_nodes_count: persist,
    nodes_count: count,
    last_height: lastHeight,
    last_timestamp: timestampSec,
    average_blockTime: Math.round(blockTime * 1e6) / 1e6,
    average_blocksPerDay: blockTime > 0 ? Math.round((86400 / blockTime) * 1e4) / 1e4 : 0,
    latest_update: formatDateTime(nowMs),
  };
}
