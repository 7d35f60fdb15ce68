import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import YAML from 'yaml';
import { badRequest } from '../http/index.js';
import type { DaemonConfig, DaemonConfigPatch, ServerAddress } from '../core/daemon-control.js';
import { writeFileAtomic } from './state-dir.js';

export function loadDaemonYaml(path: string): DaemonConfig | null {
  if (!existsSync(path)) return null;
  const text = readFileSync(path, 'utf8');
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new Error(`${path}: not valid YAML: ${(e as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${path}: must be a mapping`);
  const o = doc as Record<string, unknown>;
  const cfg: DaemonConfig = {
    name: typeof o.name === 'string' ? o.name : '',
    address: typeof o.address === 'string' ? o.address : '',
    servers: {},
    'failure-domain': 0,
  };
  try {
    cfg.servers = parseServers(o.servers ?? {}, null);
    cfg['failure-domain'] = parseFailureDomain(o['failure-domain'] ?? 0);
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
  return cfg;
}

export function saveDaemonYaml(path: string, cfg: DaemonConfig): void {
  const doc = {
    name: cfg.name,
    address: cfg.address,
    servers: cfg.servers,
    'failure-domain': cfg['failure-domain'],
  };
  writeFileAtomic(path, YAML.stringify(doc), 0o644);
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Split `host:port` / `[v6]:port`; throws a 400 naming the address when malformed. */
export function parseListenAddress(address: string): { host: string; port: number } {
  const bad = () => badRequest(`Invalid address ${JSON.stringify(address)}: want host:port (IPv6 as [addr]:port)`);
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(address) ?? /^([^:[\]]+):(\d{1,5})$/.exec(address);
  if (!m) throw bad();
  const host = m[1]!;
  const port = Number(m[2]);
  if (port > 65535) throw bad();
  if (address.startsWith('[') ? isIP(host) !== 6 : !(isIP(host) === 4 || HOSTNAME.test(host))) throw bad();
  return { host, port };
}

/**
 * Validate a servers map. `known` is the set of server names that exist (null: accept any, used when
 * reading a file written by an operator; unknown names are then reported at start-up, not fatal).
 */
export function parseServers(value: unknown, known: ReadonlySet<string> | null): Record<string, ServerAddress> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest('servers must be an object of {name: {address}}');
  const out: Record<string, ServerAddress> = {};
  for (const [name, def] of Object.entries(value as Record<string, unknown>)) {
    if (known && !known.has(name)) throw badRequest(`No matching additional listener found for ${JSON.stringify(name)}`);
    if (def === null || typeof def !== 'object' || Array.isArray(def)) {
      throw badRequest(`servers.${name} must be an object with an address`);
    }
    // Through the API (known names given) a misspelt key is refused; an operator's file is read leniently.
    if (known) refuseUnknownFields(def as Record<string, unknown>, SERVER_FIELDS, `servers.${name}: `);
    const address = (def as Record<string, unknown>).address ?? '';
    if (typeof address !== 'string') throw badRequest(`servers.${name}.address must be a string`);
    if (address !== '') parseListenAddress(address);
    out[name] = { address };
  }
  return out;
}

export function parseFailureDomain(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 2 ** 32 - 1) {
    throw badRequest('failure-domain must be a non-negative integer');
  }
  return value;
}

/** Two servers may not share an address (port 0 means "any free port", so it never collides). */
export function checkAddressConflicts(cfg: DaemonConfig): void {
  const seen = new Map<string, string>();
  const add = (owner: string, address: string) => {
    if (!address) return;
    const { host, port } = parseListenAddress(address);
    if (port === 0) return;
    const key = `${host.toLowerCase()}:${port}`;
    if (seen.has(key)) throw badRequest(`Address ${JSON.stringify(address)} is already in use`);
    seen.set(key, owner);
  };
  add('core', cfg.address);
  for (const [name, s] of Object.entries(cfg.servers)) add(name, s.address);
}

const CONFIG_FIELDS = new Set(['name', 'address', 'servers', 'failure-domain']);
const SERVER_FIELDS = new Set(['address']);

/** A misspelt field (`failure_domain`) must not be answered 200 and ignored: 400 naming every one. */
function refuseUnknownFields(body: Record<string, unknown>, known: ReadonlySet<string>, where = ''): void {
  const unknown = Object.keys(body).filter((k) => !known.has(k));
  if (unknown.length === 0) return;
  const names = unknown.map((k) => JSON.stringify(k)).join(', ');
  throw badRequest(`${where}unknown field${unknown.length > 1 ? 's' : ''} ${names}`);
}

/** PUT rules: full replacement of the mutable fields; name and address must match when sent. */
export function applyPut(current: DaemonConfig, body: Record<string, unknown>, known: ReadonlySet<string>): DaemonConfig {
  refuseUnknownFields(body, CONFIG_FIELDS);
  if (body.name !== undefined && body.name !== null && body.name !== current.name) throw badRequest('Name is immutable');
  if (body.address !== undefined && body.address !== null && body.address !== current.address) {
    throw badRequest('Address is immutable');
  }
  const next: DaemonConfig = {
    name: current.name,
    address: current.address,
    servers: parseServers(body.servers, known),
    'failure-domain': parseFailureDomain(body['failure-domain']),
  };
  checkAddressConflicts(next);
  return next;
}

/** PATCH rules: omitted fields are kept; name and address are ignored. */
export function applyPatch(current: DaemonConfig, body: DaemonConfigPatch & Record<string, unknown>, known: ReadonlySet<string>): DaemonConfig {
  refuseUnknownFields(body, CONFIG_FIELDS);
  const next: DaemonConfig = {
    ...current,
    servers: body.servers === undefined ? current.servers : parseServers(body.servers, known),
    'failure-domain': body['failure-domain'] === undefined ? current['failure-domain'] : parseFailureDomain(body['failure-domain']),
  };
  checkAddressConflicts(next);
  return next;
}
