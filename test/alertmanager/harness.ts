/** Test harness: the alertmanager component behind a real HTTP server on 127.0.0.1:0, with a manual clock. */
import { NO_ALERTS, type SharedState } from '../../src/http/component.js';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ClientIpResolver, createDispatcher, ManualClock, type Clock, type ComponentInstance } from '../../src/http/index.js';
import { Store, type Migration } from '../../src/store/index.js';
import { Egress } from '../../src/egress/index.js';
import { alertmanagerComponent } from '../../src/alertmanager/index.js';
import type { Engine } from '../../src/alertmanager/engine.js';

export interface Harness {
  dir: string;
  url: string;
  clock: ManualClock;
  instance: ComponentInstance;
  engine: Engine;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Res>;
  /** Simulate a restart: a fresh instance on the same state dir. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json(): any;
}

export const NOW = Date.parse('2030-01-01T00:00:00.000Z');

export async function startHarness(opts: { config?: string; settings?: Record<string, unknown>; dir?: string; clock?: Clock; shared?: SharedState } = {}): Promise<Harness> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'ctl-am-'));
  if (opts.config !== undefined) writeFileSync(join(dir, 'alertmanager.yml'), opts.config);
  const clock = (opts.clock ?? new ManualClock(NOW)) as ManualClock;
  const log = pino({ level: 'silent' });
  let store: Store | undefined;
  let server: http.Server;
  let instance!: ComponentInstance;

  const boot = async () => {
    instance = await alertmanagerComponent.create({
      name: 'alertmanager',
      stateDir: dir,
      log,
      clock,
      openStore(migrations: Migration[]) {
        store = new Store(join(dir, 'database', 'alertmanager.db'), migrations);
        return store;
      },
      egress: new Egress({ loopbackOnly: true }),
      config: opts.settings ?? {},
      env: {},
      uploadsDir: join(dir, 'uploads'),
      handleOf: () => undefined,
      alerts: NO_ALERTS,
      version: 'test',
      ...(opts.shared ? { shared: opts.shared } : {}),
    });
    await instance.start?.();
    server = http.createServer(
      createDispatcher({
        target: () => instance,
        listener: 'test',
        viaSocket: false,
        ips: () => new ClientIpResolver(),
        log,
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  };
  await boot();
  const h: Harness = {
    dir,
    get url() {
      const a = server.address() as { port: number };
      return `http://127.0.0.1:${a.port}`;
    },
    clock,
    get instance() {
      return instance;
    },
    get engine() {
      return (instance.handle as { engine: Engine }).engine;
    },
    async request(method, path, body, headers = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
      }
      const r = await fetch(h.url + path, init);
      const text = await r.text();
      const hdrs: http.IncomingHttpHeaders = {};
      r.headers.forEach((v, k) => (hdrs[k] = v));
      return { status: r.status, headers: hdrs, text, json: () => JSON.parse(text) };
    },
    async restart() {
      await instance.stop?.();
      await new Promise<void>((r) => server.close(() => r()));
      store?.close();
      await boot();
    },
    async close() {
      await instance.stop?.();
      await new Promise<void>((r) => server.close(() => r()));
      store?.close();
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/** The §6 example of the behaviour notes (plus an inhibit rule and a webhook receiver). */
export const NOTES_CONFIG = `
global:
  resolve_timeout: 5m
route:
  receiver: default
  group_by: ['alertname']
  routes:
    - matchers: ['team="a"']
      receiver: team-a
      continue: true
    - matchers: ['team=~"a|b"']
      receiver: team-ab
    - match: {severity: critical}
      match_re: {service: 'db.*'}
      receiver: pager
      group_by: [alertname, instance]
receivers:
  - name: default
  - name: team-a
    webhook_configs: [{url: 'http://127.0.0.1:5001/'}]
  - name: team-ab
  - name: pager
inhibit_rules:
  - source_matchers: ['severity="critical"']
    target_matchers: ['severity="warning"']
    equal: ['alertname']
`;
