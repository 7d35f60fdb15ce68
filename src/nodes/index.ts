import type { ComponentContext, ComponentDefinition, ComponentInstance } from '../http/component.js';
import { Router } from '../http/router.js';
import { mountConsole } from '../http/console.js';
import { getmynodes } from './methods/nodes.js';
import { renamed } from './envelope.js';
import { NODES_CONFIG_KEYS, parseConfig } from './config.js';
import { Crawler } from './crawl.js';
import { Hub } from './hub.js';
import { registerApiRoutes, renderError } from './http-api.js';
import { LanguagePacks } from './languages.js';
import { NodeListCache } from './node-list.js';
import { updateBalances, updatePrices } from './market.js';
import { Poller } from './poller.js';
import { NodeAlerts } from './alerts.js';
import { NodesMetrics } from './prometheus.js';
import { Scheduler } from './scheduler.js';
import type { Services } from './service.js';
import type { NodesData } from './data.js';
import { NodesStore } from './store.js';
import { MIGRATIONS } from './schema.js';
import { SqliteSql } from '../store/sql.js';
import { WsSessions } from './ws.js';

/** In-process handle (tests, benchmarks, `ctl status`): run the background jobs on demand. */
export interface NodesHandle {
  services: Services;
  poller: Poller;
  crawler: Crawler;
  sessions: WsSessions;
  updatePrices(): Promise<Record<string, number> | null>;
  updateBalances(): Promise<number>;
  /** Push a fresh getmynodes reply to every authorised WebSocket session. */
  pushNodeLists(accounts?: number[]): Promise<void>;
}

/**
 * Create the node monitor on an existing context (also used directly by tests and the bench). With
 * `storage.postgres` its data is in the shared database and each scheduled job (poll, crawl, prices,
 * balances) runs on the one daemon holding that job's lease.
 */
export async function createNodes(ctx: ComponentContext): Promise<ComponentInstance & { handle: NodesHandle }> {
  const config = parseConfig(ctx.config);
  const pg = ctx.shared?.postgres;
  const store: NodesData = pg ? await NodesStore.openShared(pg, ctx.shared!.daemonId) : new NodesStore(new SqliteSql(ctx.openStore(MIGRATIONS)));
  const lease = pg ? (job: string) => pg.leases.hold(`nodes:${job}`) : undefined;
  const hub = new Hub();
  const services: Services = {
    config,
    store,
    clock: ctx.clock,
    egress: ctx.egress,
    log: ctx.log,
    version: ctx.version,
    languages: new LanguagePacks(config.languagesDir),
    hub,
    nodeLists: new NodeListCache(),
  };
  const deps = { store, egress: ctx.egress, clock: ctx.clock, config, log: ctx.log };
  const crawler = new Crawler(deps);

  const pushNodeLists = async (accounts: number[] = hub.accounts()) => {
    for (const accountId of accounts) {
      if (hub.sessions(accountId) === 0) continue;
      const r = await getmynodes(services, { method: 'getmynodes', value: {}, form: false, accountId, client: '' });
      hub.broadcast(accountId, renamed(r, 'getmynodes'));
    }
  };
  const push = (accounts?: number[]) => void pushNodeLists(accounts).catch((e: unknown) => ctx.log.warn({ err: e }, 'pushing node lists failed'));
  if (config.websocket.pushUpdates && store.onRemoteChange) {
    // Another daemon polled or changed an account's nodes: this daemon's sessions get the new lists
    // too (a poll cycle writes in several chunks: one push for them all).
    let all = false;
    let accounts: Set<number> | null = null;
    store.onRemoteChange((changed) => {
      if (!accounts) {
        accounts = new Set();
        setTimeout(() => {
          const list = all ? undefined : [...accounts!];
          all = false;
          accounts = null;
          push(list);
        }, 200).unref();
      }
      if (changed === undefined) all = true;
      else for (const a of changed) accounts.add(a);
    });
  }
  const nodeAlerts = new NodeAlerts(store, ctx.alerts, config.poll.stuckAfter);
  const metrics = new NodesMetrics(store);
  const poller = new Poller({
    ...deps,
    crawlEnabled: crawler.enabled,
    onCycle: (report, removedFrom, states) => {
      metrics.onCycle(report);
      if (config.websocket.pushUpdates) push([...new Set([...hub.accounts(), ...removedFrom])]);
      void nodeAlerts.afterCycle(states).catch((e: unknown) => ctx.log.warn({ err: e }, 'node alerts after the poll cycle failed'));
    },
  });
  const sessions = new WsSessions(services);
  const scheduler = new Scheduler(ctx.clock, ctx.log);
  const router = new Router();
  registerApiRoutes(router, services);
  metrics.endpoint.route(router);
  // The web console at / (the account's nodes, live over the /polling WebSocket session).
  mountConsole(router, { name: 'nodes', title: 'ctl node monitor', onRoute: (r) => r.tag('console', true) });

  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => undefined);
    return p;
  };

  const handle: NodesHandle = {
    services,
    poller,
    crawler,
    sessions,
    updatePrices: () => updatePrices(deps),
    updateBalances: () => updateBalances(deps),
    pushNodeLists,
  };

  return {
    router,
    renderError,
    onUpgrade: (req, socket, head, rctx) => sessions.handleUpgrade(req, socket, head, rctx),
    handle,
    start() {
      const opts = { runAtStart: true, ...(lease ? { lease } : {}) };
      if (config.poll.enabled) scheduler.every('poll', config.poll.interval, () => track(poller.runCycle()), { ...opts, onLost: () => nodeAlerts.withdraw() });
      if (crawler.enabled) scheduler.every('crawl', config.crawl.interval, () => track(crawler.run()), opts);
      if (config.prices.url) scheduler.every('prices', config.prices.interval, () => track(handle.updatePrices()), opts);
      if (config.balances.rpc) scheduler.every('balances', config.balances.interval, () => track(handle.updateBalances()), opts);
    },
    reload() {
      services.languages = new LanguagePacks(config.languagesDir);
    },
    async stop() {
      scheduler.stop();
      poller.stop();
      sessions.close();
      // Let running jobs finish their writes before the daemon closes the database (bounded).
      const pending = [...inFlight];
      if (pending.length) await Promise.race([Promise.allSettled(pending), new Promise((r) => setTimeout(r, 5000).unref())]);
    },
  };
}

export const nodesComponent: ComponentDefinition = {
  name: 'nodes',
  defaultAddress: '127.0.0.1:8081',
  configKeys: NODES_CONFIG_KEYS,
  create: createNodes,
};


