import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import YAML from 'yaml';
import { parseDuration } from '../http/duration.js';
import { DEFAULT_CONNECTION_LIMITS, parseConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { parseStorageSettings, type StorageSettings } from '../store/storage-config.js';
import type { ConfigKeys } from '../http/component.js';
import { unknownKey } from './config-keys.js';

/** Per-server start-up settings (ctl.yaml `servers.<name>`), as microcluster's server definition. */
export interface ServerSettings {
  /** Address used when daemon.yaml has none for this server (first start). */
  address?: string;
  dedicatedCertificate: boolean;
  /** Also reachable on the control socket by Host (default true). */
  serveUnix: boolean;
  /** How long a stopped listener waits for in-flight requests, ms. */
  drainTimeoutMs: number;
  /** header-timeout, body-timeout, idle-timeout, max-connections, max-connections-per-ip. */
  limits: ConnectionLimits;
  /** `web-config-file`: Alertmanager's web config (auth, TLS) for this server's TCP listener; absolute. */
  webConfigFile?: string;
}

export interface StartupConfig {
  preInitListenAddress?: string;
  initFailureDomain?: number;
  servers: Record<string, ServerSettings>;
  egress: { addressMap: Record<string, string>; loopbackOnly?: boolean; allow: string[] };
  /** Sections for components (`alertmanager:`, `gateway:`, `pipeline:`, `nodes:`). */
  sections: Record<string, Record<string, unknown>>;
  logLevel?: string;
  /** Bytes of request bodies held in memory at once, daemon-wide (`max-buffered-body-bytes`). */
  maxBufferedBodyBytes?: number;
  /** `storage:` shared PostgreSQL and Redis of several daemons (absent: each daemon's own SQLite). */
  storage: StorageSettings;
}

export const DEFAULT_DRAIN_MS = 10_000;

/** A duration setting (`10s`, `500ms`, or seconds) → ms, or an error naming the key. */
function durationMs(value: unknown, what: string): number {
  const ms = parseDuration(value);
  if (ms === null) throw new Error(`${what}: ${JSON.stringify(value)} is not a duration (e.g. 10s, 500ms)`);
  return ms;
}

const KNOWN_TOP = new Set(['pre-init-listen-address', 'init-failure-domain', 'servers', 'egress', 'log-level', 'max-buffered-body-bytes', 'storage']);

/**
 * Read ctl.yaml. `keys` (config-keys.ts, `ctlYamlKeys`): every key the file may hold; any other
 * stops the start with an error naming the file and the key.
 */
export function loadStartupConfig(path: string | undefined, required: boolean, env: NodeJS.ProcessEnv = process.env, keys?: ConfigKeys): StartupConfig {
  const cfg: StartupConfig = { servers: {}, egress: { addressMap: {}, allow: [] }, sections: {}, storage: {} };
  if (!path || !existsSync(path)) {
    if (required && path) throw new Error(`config file ${path} does not exist`);
    return cfg;
  }
  let doc: unknown;
  try {
    doc = YAML.parse(readFileSync(path, 'utf8')) ?? {};
  } catch (e) {
    throw new Error(`${path}: not valid YAML: ${(e as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error(`${path}: must be a mapping`);
  const o = doc as Record<string, unknown>;
  const where = (k: string) => `${path}: ${k}`;
  const unknown = keys && unknownKey(o, keys);
  if (unknown) throw new Error(where(unknown));
  if (o['pre-init-listen-address'] !== undefined) {
    if (typeof o['pre-init-listen-address'] !== 'string') throw new Error(where('pre-init-listen-address must be host:port'));
    cfg.preInitListenAddress = o['pre-init-listen-address'];
  }
  if (o['init-failure-domain'] !== undefined) {
    const v = o['init-failure-domain'];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new Error(where('init-failure-domain must be a non-negative integer'));
    cfg.initFailureDomain = v;
  }
  if (o['log-level'] !== undefined) cfg.logLevel = String(o['log-level']);
  if (o['max-buffered-body-bytes'] !== undefined) {
    const v = o['max-buffered-body-bytes'];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 << 20) throw new Error(where('max-buffered-body-bytes must be a whole number of bytes, at least 1048576'));
    cfg.maxBufferedBodyBytes = v;
  }
  cfg.storage = parseStorageSettings(o.storage, env, where('storage'));
  const servers = o.servers ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) throw new Error(where('servers must be a mapping'));
  for (const [name, raw] of Object.entries(servers as Record<string, unknown>)) {
    const s = (raw ?? {}) as Record<string, unknown>;
    if (typeof s !== 'object' || Array.isArray(s)) throw new Error(where(`servers.${name} must be a mapping`));
    const settings: ServerSettings = {
      dedicatedCertificate: s['dedicated-certificate'] === true,
      serveUnix: s['serve-unix'] !== false,
      drainTimeoutMs: s['drain-connections-timeout'] === undefined ? DEFAULT_DRAIN_MS : durationMs(s['drain-connections-timeout'], where(`servers.${name}.drain-connections-timeout`)),
      limits: parseConnectionLimits(s, where(`servers.${name}`)),
    };
    if (s.address !== undefined) {
      if (typeof s.address !== 'string') throw new Error(where(`servers.${name}.address must be host:port`));
      settings.address = s.address;
    }
    if (s['web-config-file'] !== undefined) {
      const f = s['web-config-file'];
      if (typeof f !== 'string' || !f) throw new Error(where(`servers.${name}.web-config-file must be a path`));
      settings.webConfigFile = isAbsolute(f) ? f : resolve(dirname(path), f);
    }
    cfg.servers[name] = settings;
  }
  const egress = (o.egress ?? {}) as Record<string, unknown>;
  const map = egress['address-map'] ?? {};
  if (typeof map !== 'object' || map === null || Array.isArray(map)) throw new Error(where('egress.address-map must be a mapping'));
  for (const [k, v] of Object.entries(map)) cfg.egress.addressMap[k] = String(v);
  if (egress['loopback-only'] !== undefined) cfg.egress.loopbackOnly = egress['loopback-only'] === true;
  if (egress.allow !== undefined) {
    if (!Array.isArray(egress.allow) || egress.allow.some((e) => typeof e !== 'string')) throw new Error(where('egress.allow must be a list of addresses, CIDR ranges, hosts or host:port'));
    cfg.egress.allow = egress.allow as string[];
  }
  for (const [k, v] of Object.entries(o)) {
    if (KNOWN_TOP.has(k)) continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) cfg.sections[k] = v as Record<string, unknown>;
  }
  return cfg;
}

export function serverSettings(cfg: StartupConfig, name: string): ServerSettings {
  return cfg.servers[name] ?? { dedicatedCertificate: false, serveUnix: true, drainTimeoutMs: DEFAULT_DRAIN_MS, limits: DEFAULT_CONNECTION_LIMITS };
}
