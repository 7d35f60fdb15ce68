import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import type { Egress } from '../egress/index.js';
import type { NodesConfig } from './config.js';
import { aggregateNetwork, isOutOfNetwork, windowRate, type NetworkView } from './metrics.js';
import { ERROR_STATES, OFFLINE, OUT, UNKNOWN_ERROR_STATE } from './node-object.js';
import { decodeNodeState, relaysPerHour, type NodeState } from './node-state.js';
import { nodeUrl, rpcCall } from './rpc.js';
import { Semaphore } from './semaphore.js';
import type { NodesData } from './data.js';
import type { HistoryRow, PollTarget, StateRow } from './store.js';

type Outcome = { kind: 'ok'; state: NodeState } | { kind: 'rpc-error'; code: number } | { kind: 'fail'; message: string };

export interface CycleReport {
  startedAt: number;
  polled: number;
  online: number;
  offline: number;
  errors: number;
  removed: string[];
  durationMs: number;
  /** Time spent waiting for the nodes, and writing results (part of durationMs). */
  requestMs: number;
  writeMs: number;
}

export interface PollerDeps {
  store: NodesData;
  egress: Egress;
  clock: Clock;
  config: NodesConfig;
  log: Logger;
  /** Whether a network crawl is configured (else getnetstatus aggregates the monitored nodes). */
  crawlEnabled: boolean;
  /** Called after each cycle with the accounts whose nodes were auto-removed. */
  onCycle?(report: CycleReport, removedFromAccounts: number[], states: readonly StateRow[]): void;
}

const WRITE_CHUNK = 250;

/**
 * The node poller. Every cycle asks each distinct monitored address for `getnodestate` on the
 * JSON-RPC port, through egress, with bounded concurrency:
 *  - the main pool (healthy and new nodes): a first attempt with `timeout`, then `retries` more with
 *    `retry-timeout`, `retry-delay` apart; the dirty pool (offline nodes): `dirty-retries` more, no
 *    pause, `dirty-timeout` each, its own smaller concurrency;
 *  - all attempts failed → OFFLINE, moved to the dirty pool, failure counter + 1; a JSON-RPC error →
 *    GENERATING ID (-45022), PRUNING DB (-45024) or UNKNOWN RESPONSE CODE, counter unchanged; a
 *    reply → back to the main pool, counter reset, `_OUT_` checked against the last crawl;
 *  - once per history window (10 min) a snapshot feeds RelaysPerHour10/60;
 *  - afterwards, nodes that never answered and failed more than `remove-never-seen-after` times,
 *    or failed more than `remove-after` times in a row, are removed from every account.
 */
export class Poller {
  private running: Promise<CycleReport> | null = null;
  private stopped = false;

  constructor(private readonly d: PollerDeps) {}

  /** After stop() a cycle in progress finishes its requests but writes nothing (the database may be closing). */
  stop(): void {
    this.stopped = true;
  }

  /** One cycle over both pools; concurrent callers share the cycle in progress. */
  runCycle(): Promise<CycleReport> {
    this.running ??= this.cycle().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async cycle(): Promise<CycleReport> {
    const { store, clock, config } = this.d;
    const started = performance.now();
    const startedAt = clock.now();
    await store.forgetUnmonitored();
    const targets = await store.pollTargets();
    const previous = new Map((await store.allStates()).map((s) => [s.ip, s]));
    const main = new Semaphore(config.poll.concurrency);
    const dirty = new Semaphore(config.poll.dirtyConcurrency);
    // Start the polls in slices so opening hundreds of connections never holds the event loop at once.
    const pending: Promise<Outcome>[] = [];
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      pending.push(this.pollTarget(t, t.pool === 'dirty' ? dirty : main));
      if (i % 64 === 63) await new Promise((r) => setImmediate(r));
    }
    const outcomes = await Promise.all(pending);
    const requestMs = performance.now() - started;

    const now = clock.now();
    if (this.stopped) {
      return { startedAt, polled: targets.length, online: 0, offline: 0, errors: 0, removed: [], durationMs: performance.now() - started, requestMs, writeMs: 0 };
    }
    const writeStarted = performance.now();
    const net = await this.networkView(targets.map((t) => t.ip));
    const histMs = config.poll.historyInterval * 1000;
    const snapshotWindow = now % histMs < Math.min(config.poll.interval * 1000, histMs);
    const slot = Math.floor(now / histMs);
    const lastSnapshot = snapshotWindow ? await this.lastSnapshots() : new Map<string, number>();

    const rows: StateRow[] = [];
    const snapshots: ({ ip: string } & HistoryRow)[] = [];
    let online = 0;
    let offline = 0;
    let errors = 0;
    targets.forEach((t, i) => {
      const o = outcomes[i]!;
      const prev = previous.get(t.ip);
      const row = this.nextState(t, prev, o, now, net);
      if (o.kind === 'ok') {
        online++;
        const last = lastSnapshot.get(t.ip);
        if (snapshotWindow && (last === undefined || Math.floor(last / histMs) < slot)) {
          snapshots.push({ ip: t.ip, taken_at: now, currts: row.currts, uptime: row.uptime, height: row.height, relays: row.relays });
        }
      } else if (o.kind === 'rpc-error') errors++;
      else offline++;
      rows.push(row);
    });

    for (let i = 0; i < rows.length; i += WRITE_CHUNK) {
      await store.saveStates(rows.slice(i, i + WRITE_CHUNK));
      if (i + WRITE_CHUNK < rows.length) await new Promise((r) => setImmediate(r));
      if (this.stopped) break;
    }
    if (this.stopped) {
      return { startedAt, polled: targets.length, online, offline, errors, removed: [], durationMs: performance.now() - started, requestMs, writeMs: 0 };
    }
    if (snapshots.length > 0) await this.recordSnapshots(snapshots, new Map(rows.map((r) => [r.ip, r])));

    const removeIps = rows
      .filter((r) => r.status === OFFLINE && ((r.ever_ok === 0 && r.fails > config.poll.removeNeverSeenAfter) || r.fails > config.poll.removeAfter))
      .map((r) => r.ip);
    const affected = await store.removeAddresses(removeIps);
    if (removeIps.length) this.d.log.info({ count: removeIps.length }, 'removed long-offline nodes');

    if (!this.d.crawlEnabled) {
      const gone = new Set(removeIps);
      const states = rows.filter((s) => !gone.has(s.ip) && s.status !== null && s.status !== OFFLINE && s.sync_state);
      if (states.length > 0) {
        await store.setNetstatus(
          aggregateNetwork(
            states.map((s) => ({ sync_state: s.sync_state, height: s.height, uptime: s.uptime, relays: s.relays, proposals: s.proposals, answered: 1 })),
            Math.floor(now / 1000),
            now,
          ),
          now,
        );
      }
    }
    const report: CycleReport = {
      startedAt,
      polled: targets.length,
      online,
      offline,
      errors,
      removed: removeIps,
      durationMs: performance.now() - started,
      requestMs,
      writeMs: performance.now() - writeStarted,
    };
    this.d.log.debug(report, 'poll cycle done');
    this.d.onCycle?.(report, affected, rows);
    return report;
  }

  private async pollTarget(t: PollTarget, sem: Semaphore): Promise<Outcome> {
    const p = this.d.config.poll;
    const isDirty = t.pool === 'dirty';
    const attempts = 1 + (isDirty ? p.dirtyRetries : p.retries);
    const url = nodeUrl(t.ip, p.port);
    let last = '';
    for (let a = 0; a < attempts; a++) {
      if (a > 0 && !isDirty && p.retryDelay > 0) await sleep(p.retryDelay * 1000);
      const timeoutMs = 1000 * (isDirty ? p.dirtyTimeout : a === 0 ? p.timeout : p.retryTimeout);
      const r = await sem.run(() => rpcCall(this.d.egress, url, 'getnodestate', {}, { timeoutMs, maxBytes: 64 << 10 }), a > 0);
      if (r.kind === 'rpc-error') return { kind: 'rpc-error', code: r.code };
      if (r.kind === 'ok') {
        const state = decodeNodeState(r.result);
        if (state) return { kind: 'ok', state };
        last = 'reply is not a node state';
      } else last = r.message;
    }
    return { kind: 'fail', message: last };
  }

  private nextState(t: PollTarget, prev: StateRow | undefined, o: Outcome, now: number, net: NetworkView | undefined): StateRow {
    const base: StateRow = prev ?? {
      ip: t.ip,
      pool: 'main',
      status: null,
      fails: 0,
      ever_ok: 0,
      uptime: 0,
      height: 0,
      version: '',
      relays: 0,
      currts: 0,
      proposals: 0,
      public_key: null,
      sync_state: null,
      rph: 0,
      rph10: 0,
      rph60: 0,
      updated_at: now,
    };
    if (o.kind === 'fail') {
      return { ...base, pool: 'dirty', status: OFFLINE, fails: base.fails + 1, rph: 0, rph10: 0, rph60: 0, updated_at: now };
    }
    if (o.kind === 'rpc-error') {
      const status = ERROR_STATES[o.code] ?? UNKNOWN_ERROR_STATE;
      return { ...base, pool: 'main', status, ever_ok: 1, sync_state: null, rph: 0, rph10: 0, rph60: 0, updated_at: now };
    }
    const s = o.state;
    const wasHealthy = base.status !== null && base.status !== OFFLINE && base.sync_state !== null;
    const out = isOutOfNetwork({ ip: t.ip, uptime: s.uptime, height: s.height }, Math.floor(now / 1000), net);
    return {
      ip: t.ip,
      pool: 'main',
      status: out ? OUT : s.syncState,
      fails: 0,
      ever_ok: 1,
      uptime: s.uptime,
      height: s.height,
      version: s.version,
      relays: s.relayMessageCount,
      currts: s.currTimeStamp,
      proposals: s.proposalSubmitted,
      public_key: s.publicKey || base.public_key,
      sync_state: s.syncState,
      rph: relaysPerHour(s.relayMessageCount, s.uptime),
      // Window rates change with snapshots; until the next one the last values stand.
      rph10: wasHealthy ? base.rph10 : 0,
      rph60: wasHealthy ? base.rph60 : 0,
      updated_at: now,
    };
  }

  /** Newest snapshot time per address. */
  private async lastSnapshots(): Promise<Map<string, number>> {
    return new Map((await this.d.store.lastSnapshotTimes()).map((r) => [r.ip, r.t]));
  }

  private async recordSnapshots(snapshots: ({ ip: string } & HistoryRow)[], rows: Map<string, StateRow>): Promise<void> {
    const { store, config } = this.d;
    await store.addSnapshots(snapshots, config.poll.historyEntries);
    const w = config.poll.historyInterval;
    const updated: StateRow[] = [];
    for (const snap of snapshots) {
      const hist = await store.history(snap.ip);
      const row = rows.get(snap.ip);
      if (!row || hist.length === 0) continue;
      updated.push({ ...row, rph10: windowRate(hist[0]!, hist[1], w), rph60: windowRate(hist[0]!, hist[6], 6 * w) });
    }
    await store.saveStates(updated);
  }

  /** What the last crawl says about the network, for `_OUT_` detection. */
  private async networkView(ips: readonly string[]): Promise<NetworkView | undefined> {
    if (!this.d.crawlEnabled) return undefined;
    const info = await this.d.store.crawlInfo();
    const ns = await this.d.store.netstatus();
    if (!info || !ns) return undefined;
    const lastHeight = Number(ns.data.last_height) || 0;
    const blockTime = Number(ns.data.average_blockTime) || 0;
    const seen = await this.d.store.crawlSeen(info.generation, ips);
    return { crawlTime: Math.floor(info.finishedAt / 1000), lastHeight, blockTime, seen: (ip) => seen.has(ip) };
  }
}
