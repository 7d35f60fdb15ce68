/**
 * Test harness: the pipeline component created with a hand-made ComponentContext (temp state dir,
 * real Store, loopback-only egress, an injectable gateway handle) behind a real HTTP server on
 * 127.0.0.1:0 through the kit's dispatcher.
 */
import type { Sql } from '../../src/store/sql.js';
import { SharedPostgres } from '../../src/store/postgres.js';
import type { PostgresServer } from '../helpers/postgres-server.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Egress } from '../../src/egress/index.js';
import type { GatewayChatRequest, GatewayChatResult, GatewayHandle } from '../../src/http/gateway-handle.js';
import { ClientIpResolver } from '../../src/http/client-ip.js';
import { systemClock, type Clock } from '../../src/http/clock.js';
import { NO_ALERTS, type InternalAlerts, type ComponentContext, type ComponentInstance } from '../../src/http/component.js';
import { createDispatcher } from '../../src/http/dispatch.js';
import { Store, type Migration } from '../../src/store/index.js';
import { pipelineComponent, type PipelineHandle } from '../../src/pipeline/index.js';

export type Responder = (req: GatewayChatRequest) => string | Promise<string>;

/** A GatewayHandle whose answers tests script. Default: one post per numbered research item. */
export class FakeGateway implements GatewayHandle {
  requests: GatewayChatRequest[] = [];
  responder: Responder = defaultResponder;
  async chat(req: GatewayChatRequest, opts?: { signal?: AbortSignal }): Promise<GatewayChatResult> {
    this.requests.push(req);
    opts?.signal?.throwIfAborted();
    const content = await this.responder(req);
    return { content, model: req.model, provider: 'fake', usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } };
  }
}

/** Research items as the prompt lists them: `N. [category] Title — url (...)`. */
export function promptItems(req: GatewayChatRequest): { n: number; title: string }[] {
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  return [...user.matchAll(/^(\d+)\. (?:\[[^\]]*\] )?(.+?)(?: — \S+)? \(/gm)].map((m) => ({ n: Number(m[1]), title: m[2]! }));
}

export const defaultResponder: Responder = (req) =>
  JSON.stringify({ posts: promptItems(req).map((i) => ({ item: i.n, content: `New: ${i.title}`, thread: [] })) });

export interface HarnessOptions {
  config?: Record<string, unknown>;
  /** The component's line to the alert manager (default: raises nothing). */
  alerts?: InternalAlerts;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** null: no gateway in this daemon. */
  gateway?: FakeGateway | null;
  /** Treat requests as arriving on the control socket (trusted, no token needed). */
  viaSocket?: boolean;
  dir?: string;
  /** egress.allow (default: 127.0.0.1, where the fake feeds listen). */
  allow?: string[];
  /** Keep the data in this PostgreSQL database (several harnesses on one: daemons of a cluster). */
  postgresUrl?: string;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface Harness {
  url: string;
  dir: string;
  instance: ComponentInstance;
  handle: PipelineHandle;
  gateway: FakeGateway | null;
  /** The SQLite file (absent when the suite runs on PostgreSQL). */
  store?: Store;
  /** The component's database, whichever it is. */
  sql: Sql;
  /** The shared database connection (a suite on PostgreSQL); closing it is this daemon losing it. */
  postgres?: SharedPostgres;
  /** JSON request; `token` true uses the logged-in token. */
  request(method: string, path: string, opts?: { body?: unknown; token?: string | false; headers?: Record<string, string>; raw?: BodyInit | Buffer }): Promise<Reply>;
  login(): Promise<string>;
  close(opts?: { keepDir?: boolean }): Promise<void>;
}

export const PASSWORD = 'correct horse battery staple';

/**
 * When set (pipelineOnPostgres), every harness keeps its data in a database of this server (one per
 * state dir), as a daemon with `storage.postgres` does: the same suites run on both stores.
 */
let postgresServer: (() => PostgresServer) | undefined;
const databases = new Map<string, string>();

export function pipelineOnPostgres(server: () => PostgresServer): void {
  postgresServer = server;
}

export async function startPipeline(o: HarnessOptions = {}): Promise<Harness> {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'ctl-pipeline-'));
  const gateway = o.gateway === undefined ? new FakeGateway() : o.gateway;
  const log = pino({ level: 'silent' });
  let store: Store | undefined;
  let db: SharedPostgres | undefined;
  if (o.postgresUrl) db = await SharedPostgres.connect(o.postgresUrl, log);
  else if (postgresServer) {
    // One database per state dir: a harness started again on the same dir is the same daemon restarted.
    let url = databases.get(dir);
    if (!url) databases.set(dir, (url = await postgresServer().createDatabase(`ctl_pipeline_${process.pid}_${databases.size}`)));
    db = await SharedPostgres.connect(url, log);
  }
  // The fake feeds listen on loopback: allowed here as an operator would allow an intranet feed.
  const egress = new Egress({ loopbackOnly: true, connectTimeout: 2000, allow: o.allow ?? ['127.0.0.1'] });
  const ctx: ComponentContext = {
    name: 'pipeline',
    stateDir: dir,
    log,
    clock: o.clock ?? systemClock,
    openStore: (migrations: Migration[]) => (store ??= new Store(join(dir, 'database', 'pipeline.db'), migrations)),
    egress,
    config: { 'owner-password': PASSWORD, ...o.config },
    env: { PIPELINE_MODEL: 'fake/model-1', ...o.env },
    uploadsDir: join(dir, 'uploads', 'pipeline'),
    handleOf: <T>(name: string) => (name === 'gateway' && gateway ? (gateway as T) : undefined),
    version: '0.0.0-test',
    alerts: o.alerts ?? NO_ALERTS,
    ...(db ? { shared: { daemonId: `pipeline-test-${databases.size}-${Math.random().toString(36).slice(2, 8)}`, postgres: db } } : {}),
  };
  const instance = await pipelineComponent.create(ctx);
  await instance.start?.();
  const server: Server = createServer(
    createDispatcher({
      target: () => instance,
      listener: o.viaSocket ? 'unix' : 'pipeline',
      viaSocket: o.viaSocket ?? false,
      ips: () => new ClientIpResolver(),
      log,
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let token: string | undefined;

  const h: Harness = {
    url,
    dir,
    instance,
    handle: instance.handle as PipelineHandle,
    gateway,
    ...(store ? { store } : {}),
    ...(db ? { postgres: db } : {}),
    sql: (instance.handle as PipelineHandle).sql,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const t = opts.token === undefined ? token : opts.token;
      if (t) headers.authorization = `Bearer ${t}`;
      let body = opts.raw as BodyInit | undefined;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body });
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json };
    },
    async login() {
      const r = await h.request('POST', '/api/auth/login', { body: { password: PASSWORD }, token: false });
      if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
      token = r.json.access_token;
      return token!;
    },
    async close(c = {}) {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await instance.stop?.();
      store?.close();
      await db?.close();
      await egress.close();
      if (!c.keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}
