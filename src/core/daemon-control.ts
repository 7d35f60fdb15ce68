/**
 * What the Core API needs from the daemon. The daemon implements it and hands it over as the
 * `daemon` handle (components never import src/daemon).
 */
import type { SharedPostgres } from '../store/postgres.js';

export interface ServerAddress {
  address: string;
}

export interface DaemonConfig {
  name: string;
  address: string;
  servers: Record<string, ServerAddress>;
  'failure-domain': number;
}

export interface DaemonConfigPatch {
  servers?: Record<string, ServerAddress> | null;
  'failure-domain'?: number | null;
}

export type ListenerState = 'listening' | 'stopped' | 'failed' | 'socket-only';

export interface ServerStatus {
  name: string;
  /** Address from daemon.yaml ('' = no TCP listener). */
  address: string;
  /** Address actually bound (resolves port 0), '' when not listening. */
  bound_address: string;
  state: ListenerState;
  tls: boolean;
  /** `down`: the component could not start (bad configuration file); it answers 503 until a reload fixes it. */
  component: 'running' | 'down';
  error?: string;
  /** Why the component is down. */
  component_error?: string;
}

export interface DaemonInfo {
  name: string;
  address: string;
  version: string;
  ready: boolean;
  extensions: string[];
  started_at: string;
  uptime_seconds: number;
  state_dir: string;
  pid: number;
  servers: Record<string, ServerStatus>;
  /** ctl.yaml `storage:` servers (passwords hidden) and whether they answer now; absent without shared storage. */
  storage?: { postgres?: SharedServerStatus; redis?: SharedServerStatus };
}

export interface SharedServerStatus {
  url: string;
  available: boolean;
  /** PostgreSQL: the scheduled jobs this daemon runs now (leases it holds, e.g. `nodes:poll`). */
  leases?: string[];
}

export interface RateLimitAdmin {
  status(): unknown[];
  /** Hits by server, route and result (allowed, blocked) since start. */
  readonly tally: { values(): [Record<string, string>, number][] };
  reset(filter: { route?: string; ip?: string; server?: string }): Promise<number>;
}

/** A certificate and its private key, PEM. */
export interface KeyPair {
  cert: string;
  key: string;
}

/** Shared storage settings (ctl.yaml `storage:`), handed to members that join a cluster. */
export interface StorageSettings {
  postgres?: string;
  redis?: string;
}

export interface DaemonControl {
  info(): DaemonInfo;
  ready(): { ready: boolean; reason?: string };
  getConfig(): DaemonConfig;
  /** Full replacement (PUT rules). Throws HttpError 400 on a rule violation; nothing changes then. */
  putConfig(body: unknown, opts: { restart: boolean }): Promise<DaemonConfig>;
  /** Partial update (PATCH rules). */
  patchConfig(body: unknown, opts: { restart: boolean }): Promise<DaemonConfig>;
  /** Legacy servers map (GET|PUT /core/1.0/daemon/servers). */
  putServers(body: unknown): Promise<Record<string, ServerAddress>>;
  ratelimit?: RateLimitAdmin;
  /**
   * Bootstrap or join: record `name` and `address` in daemon.yaml, turn the pre-init listener off
   * for good, and serve the Core API on `address` over HTTPS with `tls` (the cluster certificate),
   * asking clients for their certificate. Also called at start-up by an initialised member.
   */
  initCluster(o: { name: string; address: string; tls: KeyPair }): Promise<void>;
  /** This daemon left the cluster: the cluster listener stops and daemon.yaml's address is cleared. */
  leaveCluster(): Promise<void>;
  /** Address the cluster listener is bound to, when it runs. */
  clusterBoundAddress(): string | undefined;
  /** The member identity `certificates/server.crt` (made when missing). */
  serverKeyPair(): Promise<KeyPair>;
  /** A new self-signed ECDSA P-384 key pair. */
  newKeyPair(commonName: string): Promise<KeyPair>;
  /** ctl.yaml `storage:` as this daemon runs with it. */
  storage(): StorageSettings;
  /** The shared database of `storage.postgres`, when the daemon runs with one (it may change on join). */
  sharedPostgres?(): SharedPostgres | undefined;
  /** Take the cluster's storage settings on join: written to ctl.yaml, connected, components restarted on it. */
  adoptStorage(s: StorageSettings): Promise<void>;
}
