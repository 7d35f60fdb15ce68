import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { TlsOptions } from 'node:tls';
import YAML from 'yaml';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import {
  ClientIpResolver,
  createDispatcher,
  createUpgradeDispatcher,
  HttpError,
  systemClock,
  type Clock,
  type ComponentContext,
  type ComponentDefinition,
  type ComponentInstance,
} from '../http/index.js';
import type { SharedState } from '../http/component.js';
import type { SharedPostgres } from '../store/postgres.js';
import { Store, type Migration } from '../store/index.js';
import { redactUrl } from '../store/storage-config.js';
import { Egress } from '../egress/index.js';
import type { DaemonConfig, DaemonControl, DaemonInfo, KeyPair, ServerAddress, ServerStatus, RateLimitAdmin, StorageSettings } from '../core/daemon-control.js';
import { StateDirLock } from './state-dir-lock.js';
import { loadWebConfig, tlsServerOptions } from './web-config.js';
import { WebAuth } from './web-auth.js';
import { BcryptPool } from './bcrypt-pool.js';
import { AuthFailures } from './auth-failures.js';
import { DescriptorBudget, descriptorLimit } from './descriptor-budget.js';
import { DEFAULT_BODY_BUDGET, setBodyBudget } from '../http/body-budget.js';
import { downComponent } from './down-component.js';
import { applyPatch, applyPut, loadDaemonYaml, parseListenAddress, saveDaemonYaml, parseServers, checkAddressConflicts } from './daemon-config.js';
import { ensureStateDir, writeFileAtomic, type StatePaths } from './state-dir.js';
import { loadStartupConfig, serverSettings, type StartupConfig } from './startup-config.js';
import { ctlYamlKeys } from './config-keys.js';
import { Listener, type ListenerHandlers } from './listener.js';
import { ctlVersion } from './version.js';
import { createLogger } from './logger.js';
import { stateArchive } from './state-archive.js';
import { COMPONENTS } from './components.js';
import { alertsEnabled, ComponentAlerts, type AlertSink } from './internal-alerts.js';
import { ClusterAlerts } from './cluster-alerts.js';
import { DaemonPresence } from './presence.js';
import type { createRateLimiter, RateLimiter } from '../ratelimit/index.js';

export interface DaemonOptions {
  stateDir: string;
  /** --config FILE; default DIR/ctl.yaml when present. */
  configPath?: string;
  logLevel?: string;
  /** --init-failure-domain (overrides ctl.yaml). */
  initFailureDomain?: number;
  preInitListenAddress?: string;
  components?: ComponentDefinition[];
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  createRateLimiter?: typeof createRateLimiter;
  /** Called as each request or upgrade arrives, before it is dispatched (idle-heap.ts). */
  onRequest?: () => void;
}

interface ServerSlot {
  /** Address from daemon.yaml ('' = none). */
  address: string;
  listener?: Listener;
  error?: string;
}

/** A serialising lock: config changes run one at a time so one PATCH wins whole. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

export class Daemon implements DaemonControl {
  readonly paths: StatePaths;
  readonly log: Logger;
  readonly version = ctlVersion();
  private startup!: StartupConfig;
  private config!: DaemonConfig;
  private readonly clock: Clock;
  private readonly defs: ComponentDefinition[];
  private readonly instances = new Map<string, ComponentInstance>();
  private readonly handles = new Map<string, unknown>();
  private readonly componentAlerts = new Map<string, ComponentAlerts>();
  private readonly stores: Store[] = [];
  /** Each component's databases (closed and dropped when it restarts). */
  private readonly componentStores = new Map<string, Store[]>();
  private readonly slots = new Map<string, ServerSlot>();
  private socket?: Listener;
  private preInit?: Listener;
  /** The Core API on daemon.yaml's address once this daemon bootstrapped or joined a cluster. */
  private clusterListener?: Listener;
  private egress!: Egress;
  /** ctl.yaml `storage:` connections, shared with the other daemons of a cluster. */
  private shared?: SharedState;
  /** With storage.postgres: the cluster's one view of internal alerts (components post there). */
  private clusterAlerts?: ClusterAlerts;
  /** With storage.postgres: this daemon's row among the live daemons (components get it as the `membership` handle). */
  private presence?: DaemonPresence;
  private ips = new ClientIpResolver();
  private limiter?: RateLimiter;
  private readonly mutex = new Mutex();
  private startedAt = 0;
  private lock?: StateDirLock;
  /** Components whose start (or revival) failed, with the reason; they answer 503 until a reload brings them up. */
  private readonly down = new Map<string, string>();
  /** Web configs (servers.<name>.web-config-file) by server; `core` guards the pre-init listener. */
  private readonly webAuth = new Map<string, WebAuth>();
  /** Shared by every web-config listener and kept across reloads. */
  private readonly bcrypt = new BcryptPool();
  private readonly authFailures = new AuthFailures();
  /** Open files for TCP clients across every TCP listener, keeping a reserve for the control socket. */
  private readonly descriptors = new DescriptorBudget(descriptorLimit(), undefined, undefined, (fields, msg) => this.log.warn(fields, msg));
  private state: 'starting' | 'ready' | 'stopping' | 'stopped' = 'starting';

  constructor(private readonly opts: DaemonOptions) {
    this.paths = ensureStateDir(opts.stateDir);
    this.clock = opts.clock ?? systemClock;
    this.defs = opts.components ?? COMPONENTS;
    this.log = opts.logger ?? createLogger(opts.logLevel ?? 'info');
  }

  /** Names of the servers (components with a TCP listener). */
  private serverNames(): Set<string> {
    return new Set(this.defs.filter((d) => d.defaultAddress !== null).map((d) => d.name));
  }

  async start(): Promise<void> {
    this.startedAt = this.clock.now();
    const t0 = performance.now();
    // Before any database is opened: a second daemon on this dir must say so, not "database is locked".
    this.lock = StateDirLock.take(this.paths.dir);
    this.startup = loadStartupConfig(this.opts.configPath ?? this.paths.ctlYaml, this.opts.configPath !== undefined, process.env, ctlYamlKeys(this.defs));
    if (this.startup.logLevel && !this.opts.logLevel && !this.opts.logger) this.log.level = this.startup.logLevel;
    setBodyBudget(this.startup.maxBufferedBodyBytes ?? DEFAULT_BODY_BUDGET);
    this.loadWebConfigs();
    this.config = this.loadOrInitConfig();
    this.egress = new Egress({ addressMap: this.startup.egress.addressMap, loopbackOnly: this.startup.egress.loopbackOnly, allow: this.startup.egress.allow });
    this.handles.set('daemon', this);
    await this.connectSharedStorage();

    const createMs: Record<string, number> = {};
    for (const def of this.defs) {
      const tc = performance.now();
      let instance: ComponentInstance;
      try {
        instance = await this.create(def);
      } catch (e) {
        if (def.name === 'core') throw e;
        // One rule for every component: a bad file keeps that one down (503 with the reason), not the daemon.
        const why = (e as Error).message;
        this.down.set(def.name, why);
        this.log.error({ component: def.name, err: why }, `${def.name} is down: ${why}; the other APIs run (fix it, then reload with SIGHUP)`);
        instance = downComponent(def.name, why);
      }
      createMs[def.name] = Math.round(performance.now() - tc);
      if (def.name !== 'core') {
        const reserved = instance.router.routes().find((r) => r.pattern === '/core' || r.pattern.startsWith('/core/'));
        if (reserved) throw new Error(`component ${def.name} mounts ${reserved.pattern}: the /core prefix is reserved for the Core API`);
      }
      this.instances.set(def.name, instance);
      if (instance.handle !== undefined) this.handles.set(def.name, instance.handle);
    }

    if (this.opts.createRateLimiter) {
      this.limiter = await this.opts.createRateLimiter({ stateDir: this.paths.dir, log: this.log.child({ component: 'ratelimit' }), clock: this.clock, egress: this.egress });
      for (const [name, inst] of this.instances) this.limiter.register(name, inst.router.routes());
    }

    // The socket takes the timeouts of `servers.core` (the Core API's server); it has no client IPs.
    this.socket = await Listener.unix('unix', this.paths.socket, this.handlersFor('unix', true, (req) => this.routeByHost(req)), serverSettings(this.startup, 'core').limits);
    for (const [name, s] of Object.entries(this.config.servers)) {
      if (!this.instances.has(name)) {
        this.log.warn({ server: name }, `daemon.yaml names server "${name}" that this ctl does not have; ignored`);
        continue;
      }
      const slot: ServerSlot = { address: s.address };
      this.slots.set(name, slot);
      if (!s.address) continue;
      try {
        slot.listener = await this.bind(name, s.address);
      } catch (e) {
        slot.error = (e as Error).message;
        this.log.error({ server: name, address: s.address, err: slot.error }, `server ${name} could not listen on ${s.address}: ${slot.error}`);
      }
    }
    // The pre-init listener is off for good once this daemon is a cluster member.
    if ((this.startup.preInitListenAddress ?? this.opts.preInitListenAddress) && !this.clusterInitialised()) await this.startPreInit();
    for (const inst of this.instances.values()) await inst.start?.();
    for (const a of this.componentAlerts.values()) a.start();
    // The alert manager holds the cluster's internal alerts from the start (its journal may hold older states).
    this.syncClusterAlerts();
    // Listed among the live daemons once its listeners are bound (their addresses are in the row).
    this.presence?.start();
    this.state = 'ready';
    const timing = { socket: this.paths.socket, ms: Math.round(performance.now() - t0), processMs: Math.round(process.uptime() * 1000), createMs };
    const why = this.notReady();
    if (why === undefined) this.log.info({ ...timing, servers: this.serverStatuses() }, 'ctl daemon ready');
    else this.logNotReady(why, timing);
  }

  /**
   * Why the daemon is not ready, or undefined when it is: starting, stopping, or every configured
   * TCP listener failed (the control socket alone serves no API to the network). A daemon whose
   * servers are all socket-only is ready.
   */
  private notReady(): string | undefined {
    if (this.state === 'starting') return 'Daemon is not ready yet';
    if (this.state !== 'ready') return 'Daemon is shutting down';
    const wanted = [...this.slots].filter(([, s]) => s.address);
    if (wanted.length === 0 || wanted.some(([, s]) => s.listener)) return undefined;
    return `No listener is up: ${wanted.map(([name, s]) => `${name} on ${s.address}: ${s.error ?? 'not listening'}`).join('; ')}`;
  }

  private logNotReady(why: string, fields: Record<string, unknown> = {}): void {
    this.log.error(
      { ...fields, servers: this.serverStatuses() },
      `ctl daemon not ready: ${why}. The control socket answers: free the addresses and send SIGHUP, or move the servers (ctl daemon config patch --server NAME=ADDR)`,
    );
  }

  /** After listeners changed: say so when the daemon became ready, or stopped being ready. */
  private readinessChanged(wasReady: boolean): void {
    const why = this.notReady();
    if (why === undefined && !wasReady) this.log.info({ servers: this.serverStatuses() }, 'ctl daemon ready');
    else if (why !== undefined && wasReady) this.logNotReady(why);
  }

  /** SIGHUP: bind again the servers whose address could not be bound; how many still fail. */
  private async rebindFailed(): Promise<number> {
    let failed = 0;
    for (const [name, slot] of this.slots) {
      if (slot.listener || !slot.error || !slot.address) continue;
      try {
        slot.listener = await this.bind(name, slot.address);
        slot.error = undefined;
        this.log.info({ server: name, address: slot.listener.boundAddress }, `server ${name} listening on ${slot.listener.boundAddress}`);
      } catch (e) {
        failed++;
        slot.error = (e as Error).message;
        this.log.error({ server: name, address: slot.address, err: slot.error }, `server ${name} still cannot listen on ${slot.address}: ${slot.error}`);
      }
    }
    return failed;
  }

  /**
   * ctl.yaml `storage:`: reach the shared servers before any component is created. A configured
   * server that cannot be reached stops the start with the reason: a daemon meant to share state
   * must not come up alone on its own data.
   */
  private async connectSharedStorage(): Promise<void> {
    const storage = this.startup.storage;
    if (!storage.postgres && !storage.redis) return;
    const shared: SharedState = { daemonId: `${this.config.name || 'ctl'}/${process.pid}/${randomBytes(4).toString('hex')}` };
    try {
      // Loaded only here: a daemon without shared storage never loads `pg`.
      if (storage.postgres) {
        const { SharedPostgres } = await import('../store/postgres.js');
        shared.postgres = await SharedPostgres.connect(storage.postgres, this.log.child({ storage: 'postgres' }), this.egress);
      }
      if (storage.redis) {
        const { SharedRedis } = await import('../store/redis.js');
        shared.redis = await SharedRedis.connect(storage.redis, this.log.child({ storage: 'redis' }), this.egress);
      }
    } catch (e) {
      await shared.postgres?.close();
      await shared.redis?.close();
      throw e;
    }
    this.shared = shared;
    if (shared.postgres) {
      const alertmanager = () => this.handles.get('alertmanager') as AlertSink | undefined;
      this.clusterAlerts = await ClusterAlerts.open(shared.postgres, shared.daemonId, alertmanager, this.clock, this.log.child({ component: 'internal-alerts' }));
      this.presence = await DaemonPresence.open(shared.postgres, shared.daemonId, () => this.boundServers(), this.log.child({ component: 'presence' }));
      this.handles.set('membership', this.presence);
    }
    this.log.info(
      { daemonId: shared.daemonId, postgres: storage.postgres ? redactUrl(storage.postgres) : undefined, redis: storage.redis ? redactUrl(storage.redis) : undefined },
      'shared storage connected',
    );
  }

  /** Create a component; a failed create leaves no database of its open. */
  private async create(def: ComponentDefinition): Promise<ComponentInstance> {
    const opened = this.stores.length;
    try {
      return await def.create(this.contextFor(def));
    } catch (e) {
      for (const store of this.stores.splice(opened)) store.close();
      throw e;
    }
  }

  /**
   * Restart one component: answer 503 for it meanwhile, stop it, close its databases, `prepare`,
   * create it again. A failed create leaves it down (as at start-up), the others untouched.
   */
  private restartComponent(def: ComponentDefinition, prepare?: () => void | Promise<void>): Promise<void> {
    return this.mutex.run(async () => {
      const name = def.name;
      const old = this.instances.get(name);
      this.instances.set(name, downComponent(name, 'restarting'));
      this.handles.delete(name);
      try {
        await old?.stop?.();
      } catch (e) {
        this.log.error({ component: name, err: (e as Error).message }, 'component stop failed');
      }
      const mine = this.componentStores.get(name) ?? [];
      for (const s of mine) {
        s.close();
        const i = this.stores.indexOf(s);
        if (i >= 0) this.stores.splice(i, 1);
      }
      this.componentStores.set(name, []);
      try {
        await prepare?.();
      } catch (e) {
        this.log.error({ component: name, err: (e as Error).message }, 'restart preparation failed; starting on the data as it is');
      }
      await this.revive(def);
      this.log.info({ component: name }, `${name} restarted`);
    });
  }

  /** SIGHUP for a component that is down: create it again; on success it takes over its listener and host. */
  private async revive(def: ComponentDefinition): Promise<void> {
    let instance: ComponentInstance;
    try {
      instance = await this.create(def);
    } catch (e) {
      this.down.set(def.name, (e as Error).message);
      this.instances.set(def.name, downComponent(def.name, (e as Error).message));
      throw e;
    }
    this.instances.set(def.name, instance);
    if (instance.handle !== undefined) this.handles.set(def.name, instance.handle);
    this.limiter?.register(def.name, instance.router.routes());
    this.down.delete(def.name);
    await instance.start?.();
    if (def.name === 'alertmanager') this.syncClusterAlerts();
    this.log.info({ component: def.name }, `${def.name} is up`);
  }

  private loadOrInitConfig(): DaemonConfig {
    const existing = loadDaemonYaml(this.paths.daemonYaml);
    if (existing) {
      // A daemon.yaml written by a previous run or by an operator is the truth; fill only a missing name.
      if (!existing.name) existing.name = hostname();
      return existing;
    }
    const servers: Record<string, ServerAddress> = {};
    for (const def of this.defs) {
      if (def.defaultAddress === null) continue;
      servers[def.name] = { address: this.startup.servers[def.name]?.address ?? def.defaultAddress };
    }
    const cfg: DaemonConfig = {
      name: hostname(),
      address: '',
      servers: parseServers(servers, null),
      'failure-domain': this.opts.initFailureDomain ?? this.startup.initFailureDomain ?? 0,
    };
    saveDaemonYaml(this.paths.daemonYaml, cfg);
    return cfg;
  }

  private contextFor(def: ComponentDefinition): ComponentContext {
    const uploads = join(this.paths.uploads, def.name);
    return {
      name: def.name,
      stateDir: this.paths.dir,
      log: this.log.child({ component: def.name }),
      clock: this.clock,
      openStore: (migrations: Migration[]) => {
        const store = new Store(join(this.paths.database, `${def.name}.db`), migrations);
        this.stores.push(store);
        const mine = this.componentStores.get(def.name) ?? [];
        mine.push(store);
        this.componentStores.set(def.name, mine);
        return store;
      },
      restart: (prepare?: () => void | Promise<void>) => this.restartComponent(def, prepare),
      shutdown: () => {
        setImmediate(() => process.kill(process.pid, 'SIGTERM'));
      },
      exportState: (o: { secrets: boolean }) => stateArchive({ dir: this.paths.dir, configPath: this.opts.configPath, secrets: o.secrets, version: this.version, now: this.clock.now() }),
      egress: this.egress,
      shared: this.shared,
      config: this.startup.sections[def.name] ?? {},
      env: this.opts.env ?? process.env,
      get uploadsDir() {
        mkdirSync(uploads, { recursive: true, mode: 0o700 });
        return uploads;
      },
      handleOf: <T>(name: string) => this.handles.get(name) as T | undefined,
      version: this.version,
      alerts: this.alertsFor(def.name),
    };
  }

  /** The component's line to the alert manager (one per component, kept across revivals). */
  private alertsFor(name: string): ComponentAlerts {
    let a = this.componentAlerts.get(name);
    if (!a) {
      a = new ComponentAlerts(
        name,
        alertsEnabled(this.startup.sections.alerts, name),
        // With shared storage, the cluster's view (cluster-alerts.ts) posts to the alert manager.
        () => this.clusterAlerts?.sink ?? (this.handles.get('alertmanager') as AlertSink | undefined),
        () => {
          const bound = this.slots.get(name)?.listener?.boundAddress;
          return bound ? `http://${bound}` : '';
        },
        this.clock,
        this.log.child({ component: name }),
      );
      this.componentAlerts.set(name, a);
    }
    return a;
  }

  /** Control socket: Host picks the component; `core` and unknown hosts reach the Core API. */
  private routeByHost(req: IncomingMessage): ComponentInstance {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    if (host && host !== 'core') {
      const inst = this.instances.get(host);
      if (inst && serverSettings(this.startup, host).serveUnix) return inst;
    }
    return this.instances.get('core')!;
  }

  private handlersFor(listener: string, viaSocket: boolean, target: (req: IncomingMessage) => ComponentInstance): ListenerHandlers {
    const opts = {
      target,
      listener,
      viaSocket,
      ips: () => this.ips,
      guard: () => {
        if (!this.limiter) return undefined;
        // Host-routed listeners (socket, pre-init) serve every component: the route names its server.
        return viaSocket || listener === 'pre-init' || listener === 'cluster' ? this.limiter.guard : this.limiter.guardFor(listener);
      },
      log: this.log,
    };
    const request = createDispatcher(opts);
    const upgrade = createUpgradeDispatcher(opts);
    const seen = this.opts.onRequest;
    if (!seen) return { request, upgrade };
    return {
      request: (req, res) => {
        seen();
        request(req, res);
      },
      upgrade: (req, socket, head) => {
        seen();
        upgrade(req, socket, head);
      },
    };
  }

  private async bind(name: string, address: string): Promise<Listener> {
    const { host, port } = parseListenAddress(address);
    const settings = serverSettings(this.startup, name);
    const web = this.webAuth.get(name)?.config.tls;
    // A web config's certificate wins over ctl's own (dedicated-certificate).
    const tls = web ? tlsServerOptions(web) : await this.certificateFor(name, settings.dedicatedCertificate);
    // Looked up per request: a component that was down is replaced when a reload brings it up.
    return Listener.tcp(name, host, port, address, this.guarded(name, this.handlersFor(name, false, () => this.instances.get(name)!)), tls, settings.limits, this.descriptors);
  }

  /** Read every `servers.<name>.web-config-file` (at start: a bad one stops the start). */
  private loadWebConfigs(): void {
    for (const [name, s] of Object.entries(this.startup.servers)) {
      if (s.webConfigFile) this.webAuth.set(name, new WebAuth(loadWebConfig(s.webConfigFile), this.bcrypt, this.authFailures));
    }
  }

  /** SIGHUP: read the web config files again; a bad one keeps the previous one (and says so). */
  private reloadWebConfigs(): number {
    let failed = 0;
    for (const [name, s] of Object.entries(this.startup.servers)) {
      if (!s.webConfigFile) continue;
      try {
        const config = loadWebConfig(s.webConfigFile);
        this.webAuth.set(name, new WebAuth(config, this.bcrypt, this.authFailures));
        const listener = name === 'core' ? this.preInit : this.slots.get(name)?.listener;
        if (config.tls && listener) listener.setTls(tlsServerOptions(config.tls));
      } catch (e) {
        failed++;
        this.log.error({ server: name, err: (e as Error).message }, `web config of ${name} not reloaded; keeping the previous one`);
      }
    }
    return failed;
  }

  /** A TCP listener's handlers behind its web config (auth, client certificates, headers), when it has one. */
  private guarded(name: string, h: ListenerHandlers): ListenerHandlers {
    if (!this.webAuth.has(name)) return h;
    return {
      request: (req, res) => {
        const auth = this.webAuth.get(name)!;
        auth.admit(req, res).then(
          (ok) => ok && h.request(req, res),
          () => res.destroy(),
        );
      },
      upgrade: (req, socket, head) => {
        const auth = this.webAuth.get(name)!;
        auth.refusal(req).then(
          (refusal) => {
            if (refusal === undefined) return h.upgrade(req, socket, head);
            socket.end(WebAuth.upgradeRefusal(refusal));
          },
          () => socket.destroy(),
        );
      },
    };
  }

  /** TLS key pair for a listener, or null for plain HTTP; x509 code loads only when TLS is in play. */
  private async certificateFor(name: string, dedicated: boolean) {
    if (!dedicated && !existsSync(join(this.paths.certificates, `${name}.crt`))) return null;
    const { listenerCertificate } = await import('./certificates.js');
    return listenerCertificate(this.paths.certificates, name, dedicated);
  }

  private async startPreInit(): Promise<void> {
    const address = (this.startup.preInitListenAddress ?? this.opts.preInitListenAddress)!;
    const { host, port } = parseListenAddress(address);
    const tls = await this.certificateFor('server', true);
    try {
      const web = this.webAuth.get('core')?.config.tls;
      this.preInit = await Listener.tcp(
        'pre-init',
        host,
        port,
        address,
        this.guarded('core', this.handlersFor('pre-init', false, (req) => this.routeByHost(req))),
        web ? tlsServerOptions(web) : tls,
        serverSettings(this.startup, 'core').limits,
        this.descriptors,
      );
      this.log.info({ address: this.preInit.boundAddress }, 'pre-init listener up (Core API reads only; changes need the control socket)');
    } catch (e) {
      this.log.error({ address, err: (e as Error).message }, `pre-init listener could not listen on ${address}`);
    }
  }

  /** A member of a cluster: daemon.yaml has its cluster address and the cluster certificate is here. */
  private clusterInitialised(): boolean {
    return this.config.address !== '' && existsSync(join(this.paths.certificates, 'cluster.crt'));
  }

  // ---- DaemonControl -------------------------------------------------------------------------

  initCluster(o: { name: string; address: string; tls: KeyPair }): Promise<void> {
    return this.mutex.run(async () => {
      const { host, port } = parseListenAddress(o.address);
      checkAddressConflicts({ ...this.config, address: o.address });
      const tls: TlsOptions = { cert: o.tls.cert, key: o.tls.key, requestCert: true, rejectUnauthorized: false };
      const old = this.clusterListener;
      // The pre-init listener is off for good from here; closed first when the cluster address takes its port.
      const preInit = this.preInit;
      this.preInit = undefined;
      if (preInit && samePort(preInit.boundAddress, o.address)) await preInit.close(1000);
      if (old && old.address === o.address) old.setTls(tls);
      else {
        try {
          this.clusterListener = await Listener.tcp('cluster', host, port, o.address, this.handlersFor('cluster', false, () => this.instances.get('core')!), tls, serverSettings(this.startup, 'core').limits, this.descriptors);
        } catch (e) {
          if (preInit && samePort(preInit.boundAddress, o.address)) await this.startPreInit();
          else this.preInit = preInit;
          throw e;
        }
        await old?.close(1000);
      }
      if (preInit) {
        await preInit.close(1000);
        this.log.info('pre-init listener turned off for good (this daemon is a cluster member)');
      }
      if (this.config.name !== o.name || this.config.address !== o.address) {
        this.config = { ...this.config, name: o.name, address: o.address };
        saveDaemonYaml(this.paths.daemonYaml, this.config);
      }
      this.log.info({ name: o.name, address: this.clusterListener!.boundAddress }, 'Core API serving the cluster address');
    });
  }

  leaveCluster(): Promise<void> {
    return this.mutex.run(async () => {
      const l = this.clusterListener;
      this.clusterListener = undefined;
      await l?.close(1000);
      this.config = { ...this.config, address: '' };
      saveDaemonYaml(this.paths.daemonYaml, this.config);
    });
  }

  clusterBoundAddress(): string | undefined {
    return this.clusterListener?.boundAddress;
  }

  async serverKeyPair(): Promise<KeyPair> {
    return (await this.certificateFor('server', true))!;
  }

  async newKeyPair(commonName: string): Promise<KeyPair> {
    const { generateSelfSigned } = await import('./certificates.js');
    return generateSelfSigned(commonName);
  }

  storage(): StorageSettings {
    return { ...this.startup.storage };
  }

  sharedPostgres(): SharedPostgres | undefined {
    return this.shared?.postgres;
  }

  async adoptStorage(s: StorageSettings): Promise<void> {
    const file = this.opts.configPath ?? this.paths.ctlYaml;
    const doc = existsSync(file) ? YAML.parseDocument(readFileSync(file, 'utf8')) : new YAML.Document({});
    doc.set('storage', { ...s });
    writeFileAtomic(file, doc.toString(), 0o600);
    this.startup.storage = { ...s };
    this.clusterAlerts?.close();
    this.clusterAlerts = undefined;
    await this.presence?.close();
    this.presence = undefined;
    this.handles.delete('membership');
    await this.shared?.postgres?.close();
    await this.shared?.redis?.close();
    this.shared = undefined;
    await this.connectSharedStorage();
    // Components take shared state when they are created: create them again on it.
    for (const def of this.defs) if (def.name !== 'core') await this.restartComponent(def).catch((e) => this.log.error({ component: def.name, err: (e as Error).message }, 'restart on the shared storage failed'));
    this.syncClusterAlerts();
    // connectSharedStorage opened it again (narrowed to undefined above).
    (this.presence as DaemonPresence | undefined)?.start();
  }

  /** Each server's bound address (host:port), for the servers listening now. */
  private boundServers(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, slot] of this.slots) if (slot.listener?.boundAddress) out[name] = slot.listener.boundAddress;
    return out;
  }

  /** Post the cluster's internal alerts to this daemon's alert manager (it started or restarted). */
  private syncClusterAlerts(): void {
    void this.clusterAlerts?.sync();
  }

  get ratelimit(): RateLimitAdmin | undefined {
    return this.limiter;
  }

  info(): DaemonInfo {
    return {
      name: this.config.name,
      address: this.config.address,
      version: this.version,
      ready: this.notReady() === undefined,
      extensions: [],
      started_at: new Date(this.startedAt).toISOString(),
      uptime_seconds: Math.max(0, Math.round((this.clock.now() - this.startedAt) / 1000)),
      state_dir: this.paths.dir,
      pid: process.pid,
      servers: this.serverStatuses(),
      ...(this.shared ? { storage: this.storageStatus() } : {}),
    };
  }

  private storageStatus(): NonNullable<DaemonInfo['storage']> {
    const s = this.startup.storage;
    const out: NonNullable<DaemonInfo['storage']> = {};
    if (s.postgres && this.shared?.postgres) out.postgres = { url: redactUrl(s.postgres), available: this.shared.postgres.available, leases: this.shared.postgres.heldLeases() };
    if (s.redis && this.shared?.redis) out.redis = { url: redactUrl(s.redis), available: this.shared.redis.available };
    return out;
  }

  private serverStatuses(): Record<string, ServerStatus> {
    const out: Record<string, ServerStatus> = {};
    for (const name of this.serverNames()) {
      const slot = this.slots.get(name);
      const l = slot?.listener;
      out[name] = {
        name,
        address: slot?.address ?? '',
        bound_address: l?.boundAddress ?? '',
        state: l ? 'listening' : slot?.error ? 'failed' : slot?.address ? 'stopped' : 'socket-only',
        tls: l?.tls ?? false,
        component: this.down.has(name) ? 'down' : 'running',
        ...(slot?.error ? { error: slot.error } : {}),
        ...(this.down.has(name) ? { component_error: this.down.get(name)! } : {}),
      };
    }
    return out;
  }

  ready(): { ready: boolean; reason?: string } {
    const reason = this.notReady();
    return reason === undefined ? { ready: true } : { ready: false, reason };
  }

  getConfig(): DaemonConfig {
    return structuredClone(this.config);
  }

  putConfig(body: unknown, opts: { restart: boolean }): Promise<DaemonConfig> {
    return this.mutex.run(() => this.change(applyPut(this.config, body as Record<string, unknown>, this.serverNames()), opts.restart));
  }

  patchConfig(body: unknown, opts: { restart: boolean }): Promise<DaemonConfig> {
    return this.mutex.run(() => this.change(applyPatch(this.config, body as Record<string, unknown>, this.serverNames()), opts.restart));
  }

  putServers(body: unknown): Promise<Record<string, ServerAddress>> {
    return this.mutex.run(async () => {
      const next = { ...this.config, servers: parseServers(body, this.serverNames()) };
      checkAddressConflicts(next);
      return (await this.change(next, false)).servers;
    });
  }

  /**
   * Apply a validated config: bind new and moved listeners first (a failure undoes them and nothing
   * changes), then persist daemon.yaml, then stop removed and replaced listeners (they drain).
   */
  private async change(next: DaemonConfig, restart: boolean): Promise<DaemonConfig> {
    if (this.state !== 'ready') throw new HttpError(503, 'Daemon is shutting down');
    const names = new Set([...this.slots.keys(), ...Object.keys(next.servers)]);
    const bound = new Map<string, Listener>();
    const retire: Listener[] = [];
    const newSlots = new Map<string, ServerSlot>();
    try {
      for (const name of names) {
        const slot = this.slots.get(name);
        const want = next.servers[name]?.address ?? '';
        if (slot && slot.address === want && (slot.listener || !want)) {
          newSlots.set(name, slot);
          continue;
        }
        if (!want) {
          if (slot?.listener) retire.push(slot.listener);
          if (next.servers[name]) newSlots.set(name, { address: '' });
          continue;
        }
        let listener: Listener;
        try {
          listener = await this.bind(name, want);
        } catch (e) {
          const err = e as NodeJS.ErrnoException;
          // Moving within one port (e.g. 127.0.0.1:9093 → 0.0.0.0:9093): free the old socket first.
          if (err.code === 'EADDRINUSE' && slot?.listener && samePort(slot.listener.boundAddress, want)) {
            await slot.listener.close(serverSettings(this.startup, name).drainTimeoutMs);
            slot.listener = undefined;
            listener = await this.bind(name, want);
          } else if (err.code === 'EADDRINUSE') {
            throw new HttpError(400, `Address ${JSON.stringify(want)} is already in use`);
          } else if (err instanceof HttpError) {
            throw err;
          } else {
            throw new HttpError(400, `Cannot listen on ${JSON.stringify(want)}: ${err.message}`);
          }
        }
        bound.set(name, listener);
        if (slot?.listener) retire.push(slot.listener);
        newSlots.set(name, { address: want, listener });
      }
    } catch (e) {
      await Promise.all([...bound.values()].map((l) => l.close(0)));
      throw e;
    }
    try {
      saveDaemonYaml(this.paths.daemonYaml, next);
    } catch (e) {
      await Promise.all([...bound.values()].map((l) => l.close(0)));
      throw new HttpError(500, `Failed to write daemon.yaml: ${(e as Error).message}`);
    }
    const wasReady = this.notReady() === undefined;
    this.config = next;
    this.slots.clear();
    for (const [k, v] of newSlots) this.slots.set(k, v);
    this.readinessChanged(wasReady);
    for (const l of retire) {
      void l.close(serverSettings(this.startup, l.name).drainTimeoutMs);
    }
    this.log.info({ servers: this.serverStatuses(), 'failure-domain': next['failure-domain'] }, 'daemon config changed');
    if (restart) await this.restartDatabases();
    return this.getConfig();
  }

  /** `restart=true`: close and reopen every component database. */
  private async restartDatabases(): Promise<void> {
    for (const s of this.stores) s.reopen();
    this.log.info({ databases: this.stores.length }, 'databases restarted');
  }

  // ---- signals ------------------------------------------------------------------------------------

  /** SIGHUP: reload file-based configuration; a bad file keeps the old one and is logged. */
  async reload(): Promise<void> {
    const wasReady = this.notReady() === undefined;
    let failed = await this.mutex.run(() => this.rebindFailed());
    this.readinessChanged(wasReady);
    for (const def of this.defs) {
      const name = def.name;
      try {
        if (this.down.has(name)) await this.revive(def);
        else await this.instances.get(name)?.reload?.();
      } catch (e) {
        failed++;
        const keeping = this.down.has(name) ? 'it stays down' : 'keeping the previous configuration';
        this.log.error({ component: name, err: (e as Error).message }, `reload of ${name} failed; ${keeping}`);
      }
    }
    failed += this.reloadWebConfigs();
    failed += this.reloadEgress();
    try {
      await this.limiter?.reload();
    } catch (e) {
      failed++;
      this.log.error({ err: (e as Error).message }, 'rate_limit.yaml reload failed; keeping the previous configuration');
    }
    if (failed > 0) this.log.warn({ failed }, 'configuration reload finished with errors (see above); the rest was reloaded');
    else this.log.info('configuration reloaded');
  }

  /**
   * SIGHUP: re-read ctl.yaml's `egress` section (allow-list, address map) into the one Egress every
   * component holds; 1 when the file or the section is bad (the running settings stay), else 0.
   */
  private reloadEgress(): number {
    try {
      const fresh = loadStartupConfig(this.opts.configPath ?? this.paths.ctlYaml, this.opts.configPath !== undefined, process.env, ctlYamlKeys(this.defs));
      this.egress.reconfigure({ allow: fresh.egress.allow, addressMap: fresh.egress.addressMap });
      this.startup.egress = fresh.egress;
      this.log.info({ allow: fresh.egress.allow.length, addressMap: Object.keys(fresh.egress.addressMap).length }, 'egress settings reloaded');
      return 0;
    } catch (e) {
      this.log.error({ err: (e as Error).message }, 'ctl.yaml egress reload failed; keeping the previous egress settings');
      return 1;
    }
  }

  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    this.log.info('shutting down');
    const closing: Promise<void>[] = [];
    for (const [name, slot] of this.slots) if (slot.listener) closing.push(slot.listener.close(serverSettings(this.startup, name).drainTimeoutMs));
    if (this.preInit) closing.push(this.preInit.close(1000));
    if (this.clusterListener) closing.push(this.clusterListener.close(serverSettings(this.startup, 'core').drainTimeoutMs));
    await Promise.all(closing);
    for (const a of this.componentAlerts.values()) a.stop();
    for (const [name, inst] of [...this.instances].reverse()) {
      try {
        await inst.stop?.();
      } catch (e) {
        this.log.error({ component: name, err: (e as Error).message }, 'component stop failed');
      }
    }
    await this.socket?.close(2000);
    await this.limiter?.close().catch(() => undefined);
    for (const s of this.stores) s.close();
    this.clusterAlerts?.close();
    await this.presence?.close();
    await this.shared?.postgres?.close();
    await this.shared?.redis?.close();
    await this.egress?.close().catch(() => undefined);
    await this.bcrypt.close();
    this.lock?.release();
    this.state = 'stopped';
    this.log.info('stopped');
  }
}

function samePort(bound: string, want: string): boolean {
  const m = /:(\d+)$/.exec(bound);
  return m !== null && Number(m[1]) === parseListenAddress(want).port;
}
