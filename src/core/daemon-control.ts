/**
 * What the Core API needs from the daemon. The daemon implements it and hands it over as the
 * `daemon` handle (components never import src/daemon).
 */
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
}

export interface RateLimitAdmin {
  status(): unknown[];
  /** Hits by server, route and result (allowed, blocked) since start. */
  readonly tally: { values(): [Record<string, string>, number][] };
  reset(filter: { route?: string; ip?: string; server?: string }): Promise<number>;
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
}
