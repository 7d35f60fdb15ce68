import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { RequestContext } from './context.js';
import type { HttpError } from './errors.js';
import type { Router } from './router.js';
import type { Store, Migration } from '../store/index.js';
import type { Egress } from '../egress/index.js';
import type { SharedPostgres } from '../store/postgres.js';
import type { SharedRedis } from '../store/redis.js';

/**
 * The contract between the daemon and a component. Each component module exports one
 * ComponentDefinition; the daemon creates it with a ComponentContext and mounts its router on
 * its TCP listener and on the control socket (Host-routed by `name`).
 */
export interface ComponentDefinition {
  /** Server name: the Host on the control socket and the key under `servers` in daemon.yaml. */
  name: string;
  /** Default TCP address (`host:port`), or null for socket-only components (the Core API). */
  defaultAddress: string | null;
  /**
   * The keys of this component's ctl.yaml section. The daemon refuses to start on any other (a
   * typo never passes silently); the values are the component's to check when it is created.
   */
  configKeys: ConfigKeys;
  create(ctx: ComponentContext): ComponentInstance | Promise<ComponentInstance>;
}

/**
 * The keys a mapping in ctl.yaml may hold: `true` takes any value (a scalar, a list, or a mapping
 * the owner checks itself), a nested ConfigKeys the keys of a mapping. `'*'` stands for any key.
 */
export interface ConfigKeys {
  readonly [key: string]: true | ConfigKeys;
}

export interface ComponentInstance {
  router: Router;
  /** Render an error in this API's own wire format. Called for 404/405 from the router too. */
  renderError(ctx: RequestContext, err: HttpError): void;
  /**
   * The component's own (domain) errors as the answer they become; undefined for anything else (the
   * kit's toHttpError then applies). An error mapped here is an answer, not a bug: it is not logged
   * with its stack.
   */
  toHttpError?(err: unknown): HttpError | undefined;
  /** Runs before routing on every request (CORS, content negotiation); may answer and return false. */
  before?(ctx: RequestContext): boolean | void;
  /** WebSocket and other upgrades on this component's listeners. Destroy `socket` when refusing. */
  onUpgrade?(req: IncomingMessage, socket: Duplex, head: Buffer, ctx: RequestContext): void;
  /** In-process interface other components may call (the gateway's chat function, ...). */
  handle?: unknown;
  /** Called once every component was created and listeners are up (start pollers and timers here). */
  start?(): void | Promise<void>;
  /** SIGHUP: reload file-based configuration. Throw to report a bad file (the old one stays). */
  reload?(): void | Promise<void>;
  /** Stop timers, close resources. Databases opened through ctx.openStore are closed by the daemon. */
  stop?(): void | Promise<void>;
}

export interface ComponentContext {
  name: string;
  stateDir: string;
  log: Logger;
  clock: Clock;
  /**
   * Open (once) this component's SQLite database `database/<name>.db` with its numbered
   * migrations. The daemon closes and reopens it on `restart=true`; always go through the Store.
   */
  openStore(migrations: Migration[]): Store;
  egress: Egress;
  /**
   * State shared with the other daemons of a cluster (ctl.yaml `storage:`); absent on a daemon that
   * keeps everything in its own state dir.
   */
  shared?: SharedState;
  /** This component's section of ctl.yaml (unvalidated; the component checks it). */
  config: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  /** Directory for uploaded files (`DIR/uploads/<component>`), created on demand. */
  uploadsDir: string;
  /** Another component's in-process handle, once created (undefined if that component is absent). */
  handleOf<T = unknown>(name: string): T | undefined;
  /** Version string of the daemon. */
  version: string;
  /** Alerts this component raises in ctl's own alert manager (ctl.yaml `alerts.<component>`). */
  alerts: InternalAlerts;
  /**
   * Stop this component, close its databases, run `prepare` (e.g. swap a database file), and create
   * it again; the daemon's other components keep serving. Absent outside the daemon.
   */
  restart?(prepare?: () => void | Promise<void>): Promise<void>;
  /** Stop the whole daemon gracefully, as SIGTERM does. Absent outside the daemon. */
  /**
   * A gzipped tar of the daemon's state: every component database (consistent copies), configuration
   * files, certificates, a manifest; credentials left out or overwritten unless `secrets`.
   */
  exportState?(opts: { secrets: boolean }): Promise<import('node:stream').Readable>;
  shutdown?(): void;
}

export interface SharedState {
  /** This daemon process among those sharing the storage: claims and leases name it. */
  daemonId: string;
  /** `storage.postgres`: the shared database (migrate, query, transaction, notify, subscribe). */
  postgres?: SharedPostgres;
  /** `storage.redis`: shared hot counters (Lua scripts, fail fast). */
  redis?: SharedRedis;
}

/** One alert a component raises: its name and labels identify it (`component` is added). */
export interface InternalAlert {
  alertname: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  /** Path on the component's own listener that shows the object (the generator URL). */
  path?: string;
}

/**
 * A component's line to ctl's alert manager, as if it POSTed to /api/v2/alerts: every route,
 * silence, inhibition and receiver of alertmanager.yml applies.
 */
export interface InternalAlerts {
  readonly enabled: boolean;
  /**
   * The alerts of `alertname` that fire now: new ones are raised, those no longer listed are
   * resolved, those still listed are kept firing.
   */
  reconcile(alertname: string, firing: readonly InternalAlert[]): void;
  /** Raise one alert and keep it firing until `resolve`. */
  fire(alert: InternalAlert): void;
  resolve(alertname: string, labels: Record<string, string>): void;
  /** An event: an alert that fires now and resolves by itself after `forMs`. */
  event(alert: InternalAlert, forMs: number): void;
  /** The alerts raised and not resolved (for status output and tests). */
  firing(): InternalAlert[];
}

/** For contexts built outside the daemon (tests, benches): raises nothing. */
export const NO_ALERTS: InternalAlerts = {
  enabled: false,
  reconcile() {},
  fire() {},
  resolve() {},
  event() {},
  firing: () => [],
};
