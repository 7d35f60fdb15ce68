/**
 * In-process gateway for tests: the real component on two loopback HTTP listeners, one treated as
 * the control socket (trusted) and one as TCP (auth applies), with a temporary state dir.
 */
import type { SharedPostgres } from '../../src/store/postgres.js';
import type { SharedState } from '../../src/http/component.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createDispatcher, createUpgradeDispatcher } from '../../src/http/dispatch.js';
import { ClientIpResolver } from '../../src/http/client-ip.js';
import { systemClock, type Clock } from '../../src/http/clock.js';
import { NO_ALERTS, type ComponentContext, type ComponentInstance, type InternalAlerts } from '../../src/http/component.js';
import { Egress } from '../../src/egress/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { gatewayComponent } from '../../src/gateway/index.js';
import type { GatewayHandle } from '../../src/http/gateway-handle.js';

export interface Reply {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

export interface GatewayHarness {
  dir: string;
  /** The egress the gateway uses (tests map public-looking addresses to loopback fakes on it). */
  egress: Egress;
  instance: ComponentInstance;
  handle: GatewayHandle;
  /** Base URL of the trusted (socket-like) listener. */
  trustedUrl: string;
  /** Base URL of the TCP listener (auth applies). */
  tcpUrl: string;
  req(method: string, path: string, body?: unknown, headers?: Record<string, string>, opts?: { tcp?: boolean }): Promise<Reply>;
  writeYaml(text: string): void;
  close(): Promise<void>;
}

/**
 * When set (gatewaysOnPostgres), every gateway of this test file runs with `storage.postgres` on this
 * database, as a daemon of a cluster does: the same suites run on the embedded store and on it.
 */
let sharedDb: ((dir: string) => Promise<SharedPostgres>) | undefined;
let sharedDaemons = 0;

/** `db` answers the database of a gateway's state dir (the same one again for a restart on that dir). */
export function gatewaysOnPostgres(db: (dir: string) => Promise<SharedPostgres>): void {
  sharedDb = db;
}

export async function startGateway(opts: { yaml?: string; env?: Record<string, string>; clock?: Clock; config?: Record<string, unknown>; dir?: string; alerts?: InternalAlerts; shared?: SharedState } = {}): Promise<GatewayHarness> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'ctl-gw-'));
  if (opts.yaml !== undefined) writeFileSync(join(dir, 'gateway.yaml'), opts.yaml);
  const log = pino({ level: 'silent' });
  let store: Store | undefined;
  const egress = new Egress({ loopbackOnly: true });
  const ctx: ComponentContext = {
    name: 'gateway',
    stateDir: dir,
    log,
    clock: opts.clock ?? systemClock,
    openStore: (migrations) => (store ??= openStore(join(dir, 'database', 'gateway.db'), migrations)),
    egress,
    config: opts.config ?? {},
    env: { NODE_ENV: 'test', ...(opts.env ?? {}) },
    uploadsDir: join(dir, 'uploads', 'gateway'),
    handleOf: () => undefined,
    alerts: opts.alerts ?? NO_ALERTS,
    version: '0.1.0-test',
    ...(opts.shared ? { shared: opts.shared } : sharedDb ? { shared: { daemonId: `gw-test-${process.pid}-${sharedDaemons++}`, postgres: await sharedDb(dir) } } : {}),
  };
  const instance = await gatewayComponent.create(ctx);
  const ips = new ClientIpResolver();
  const mk = (viaSocket: boolean): Promise<Server> =>
    new Promise((resolve) => {
      const dispatchOpts = { target: () => instance, listener: viaSocket ? 'unix' : 'gateway', viaSocket, ips: () => ips, log };
      const s = createServer(createDispatcher(dispatchOpts));
      s.on('upgrade', createUpgradeDispatcher(dispatchOpts));
      s.listen(0, '127.0.0.1', () => resolve(s));
    });
  const trusted = await mk(true);
  const tcp = await mk(false);
  const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const h: GatewayHarness = {
    dir,
    egress,
    instance,
    handle: instance.handle as GatewayHandle,
    trustedUrl: url(trusted),
    tcpUrl: url(tcp),
    async req(method, path, body, headers = {}, o = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) (init.headers as Record<string, string>)['content-type'] = 'application/json';
      }
      const r = await fetch((o.tcp ? h.tcpUrl : h.trustedUrl) + path, init);
      const text = await r.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const hdrs: Record<string, string> = {};
      r.headers.forEach((v, k) => (hdrs[k] = v));
      return { status: r.status, headers: hdrs, text, json };
    },
    writeYaml(text) {
      writeFileSync(join(dir, 'gateway.yaml'), text);
    },
    async close() {
      trusted.closeAllConnections();
      tcp.closeAllConnections();
      await new Promise((r) => trusted.close(r));
      await new Promise((r) => tcp.close(r));
      await instance.stop?.();
      store?.close();
      await egress.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}
