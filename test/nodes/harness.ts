import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ClientIpResolver } from '../../src/http/client-ip.js';
import { ManualClock } from '../../src/http/clock.js';
import { createDispatcher, createUpgradeDispatcher } from '../../src/http/dispatch.js';
import { NO_ALERTS, type ComponentContext } from '../../src/http/component.js';
import { Egress } from '../../src/egress/index.js';
import { Store, type Migration } from '../../src/store/index.js';
import { createNodes, type NodesHandle } from '../../src/nodes/index.js';
import type { ComponentInstance } from '../../src/http/component.js';
import { SharedPostgres } from '../../src/store/postgres.js';
import type { PostgresServer } from '../helpers/postgres-server.js';

/**
 * When set (nodesOnPostgres), every harness keeps its data in a fresh database of this server, as a
 * daemon with `storage.postgres` does, instead of its own SQLite file: the same suites run on both.
 */
let postgresServer: (() => PostgresServer) | undefined;
let databases = 0;

/** Run the suites of this test file on PostgreSQL (a fresh database per harness). */
export function nodesOnPostgres(server: () => PostgresServer): void {
  postgresServer = server;
}

export interface Harness {
  dir: string;
  clock: ManualClock;
  egress: Egress;
  instance: ComponentInstance & { handle: NodesHandle };
  handle: NodesHandle;
  url: string;
  port: number;
  /** POST a JSON envelope (object) or a raw body with a content type. */
  post(body: unknown, opts?: { path?: string; contentType?: string; headers?: Record<string, string> }): Promise<{ status: number; json: any; text: string; headers: http.IncomingHttpHeaders }>;
  call(method: string, value?: Record<string, unknown>): Promise<any>;
  form(fields: Record<string, string>, path?: string): Promise<any>;
  genid(): Promise<string>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  config?: Record<string, unknown>;
  /** Share this database (a second harness as another daemon of the same cluster). */
  postgres?: SharedPostgres;
  daemonId?: string;
  addressMap?: Record<string, string>;
  clock?: ManualClock;
  dir?: string;
}

/** The node monitor on a real HTTP server on 127.0.0.1:0, with a manual clock and loopback-only egress. */
export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'ctl-nodes-'));
  const clock = opts.clock ?? new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  const egress = new Egress({ addressMap: opts.addressMap ?? {}, loopbackOnly: true, connectTimeout: 2000 });
  const log = pino({ level: process.env.CTL_TEST_LOG ?? 'silent' });
  const stores: Store[] = [];
  let ownDb: SharedPostgres | undefined;
  if (!opts.postgres && postgresServer) {
    const url = await postgresServer().createDatabase(`ctl_nodes_${process.pid}_${databases++}`);
    ownDb = await SharedPostgres.connect(url, log);
  }
  const db = opts.postgres ?? ownDb;
  const ctx: ComponentContext = {
    name: 'nodes',
    stateDir: dir,
    log,
    clock,
    openStore: (m: Migration[]) => {
      const s = new Store(join(dir, 'database', 'nodes.db'), m);
      stores.push(s);
      return s;
    },
    egress,
    config: opts.config ?? {},
    env: process.env,
    uploadsDir: join(dir, 'uploads', 'nodes'),
    handleOf: () => undefined,
    alerts: NO_ALERTS,
    version: '0.1.0-test',
    ...(db ? { shared: { daemonId: opts.daemonId ?? `nodes-test-${databases}`, postgres: db } } : {}),
  };
  const instance = await createNodes(ctx);
  const dispatchOpts = {
    target: () => instance,
    listener: 'nodes',
    viaSocket: false,
    ips: () => new ClientIpResolver(['127.0.0.1']),
    log,
  };
  const server = http.createServer(createDispatcher(dispatchOpts));
  server.on('upgrade', createUpgradeDispatcher(dispatchOpts));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  const post: Harness['post'] = (body, o = {}) =>
    new Promise((resolve, reject) => {
      const payload = typeof body === 'string' ? body : JSON.stringify(body);
      const headers: Record<string, string | number> = { 'content-length': Buffer.byteLength(payload), ...(o.headers ?? {}) };
      const type = o.contentType ?? (typeof body === 'string' ? undefined : 'application/json');
      if (type) headers['content-type'] = type;
      const req = http.request(`${url}${o.path ?? '/api'}`, { method: 'POST', headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, text, headers: res.headers });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });

  const h: Harness = {
    dir,
    clock,
    egress,
    instance,
    handle: instance.handle,
    url,
    port,
    post,
    async call(method, value) {
      const r = await post(value === undefined ? { Method: method } : { Method: method, Value: value });
      return r.json;
    },
    async form(fields, path) {
      const r = await post(new URLSearchParams(fields).toString(), { contentType: 'application/x-www-form-urlencoded', path });
      return r.json;
    },
    async genid() {
      const r = await h.call('genid');
      if (r.Code !== 0) throw new Error(`genid failed: ${JSON.stringify(r)}`);
      // Each test client gets a fresh account budget: move past the genid window.
      clock.advance(31 * 60_000);
      return r.Value.Hash as string;
    },
    async close() {
      await instance.stop?.();
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections?.();
      for (const s of stores) s.close();
      await ownDb?.close();
      await egress.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}
