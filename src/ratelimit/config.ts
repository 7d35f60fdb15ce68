import { readFile } from 'node:fs/promises';
import { BlockList } from 'node:net';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { parseDocument } from 'yaml';
import { addCidr } from '../http/client-ip.js';
import { compile, describeErrors } from '../http/schema.js';
import { RateLimitException } from './errors.js';
import { normalizeMethod, normalizePattern } from './key.js';

/** File name of the limiter's configuration inside the state dir. */
export const CONFIG_FILE = 'rate_limit.yaml';

export const ADAPTERS = ['file', 'redis'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

export interface FileAdapterConfig {
  /** SQLite file; relative paths are relative to the state dir. */
  path: string;
  prefix: string;
}

export interface RedisAdapterConfig {
  host: string;
  port: number;
  db: number;
  password: string;
  prefix: string;
  tls: boolean;
  onStoreError: 'block' | 'allow';
}

/** One operator entry of `routes:`; `method` null means every method of the route. */
export interface RouteOverride {
  server: string;
  method: string | null;
  route: string;
  /** 0 switches the route's declared limit off. */
  limit: number;
  /** Seconds; null only when `limit` is 0. */
  interval: number | null;
}

export interface RateLimitConfig {
  default: AdapterName;
  file: FileAdapterConfig;
  redis: RedisAdapterConfig;
  trustedProxies: string[];
  ipv6Prefix: number;
  routes: RouteOverride[];
}

export const DEFAULT_CONFIG: RateLimitConfig = Object.freeze({
  default: 'file',
  file: { path: 'ratelimit.db', prefix: 'rl' },
  redis: { host: '127.0.0.1', port: 6379, db: 0, password: '', prefix: 'rl', tls: false, onStoreError: 'block' },
  trustedProxies: [],
  ipv6Prefix: 64,
  routes: [],
}) as RateLimitConfig;

const Interval = Type.Number({ exclusiveMinimum: 0, maximum: 366 * 86400 });

/** The file's shape (a contract: see docs/ratelimit.md). Unknown keys are errors, so typos show. */
const FileSchema = Type.Object(
  {
    default: Type.Optional(Type.String()),
    file: Type.Optional(
      Type.Object(
        { path: Type.Optional(Type.String({ minLength: 1 })), prefix: Type.Optional(Type.String()) },
        { additionalProperties: false },
      ),
    ),
    redis: Type.Optional(
      Type.Object(
        {
          host: Type.Optional(Type.String({ minLength: 1 })),
          port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
          db: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
          password: Type.Optional(Type.String()),
          prefix: Type.Optional(Type.String()),
          tls: Type.Optional(Type.Boolean()),
          'on-store-error': Type.Optional(Type.Union([Type.Literal('block'), Type.Literal('allow')])),
        },
        { additionalProperties: false },
      ),
    ),
    'trusted-proxies': Type.Optional(Type.Array(Type.String())),
    'ipv6-prefix': Type.Optional(Type.Integer({ minimum: 1, maximum: 128 })),
    routes: Type.Optional(
      Type.Array(
        Type.Object(
          {
            server: Type.String({ minLength: 1 }),
            method: Type.Optional(Type.String({ pattern: '^[A-Za-z]+$' })),
            route: Type.String({ pattern: '^\\s*/' }),
            limit: Type.Integer({ minimum: 0 }),
            interval: Type.Optional(Interval),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
type FileShape = Static<typeof FileSchema>;
const validateFile = compile(FileSchema);

/** Parse and check the text of rate_limit.yaml; throws RateLimitException naming the problem. */
export function parseConfig(text: string, source = CONFIG_FILE): RateLimitConfig {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) throw new RateLimitException(`${source}: ${doc.errors[0]!.message}`);
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new RateLimitException(`${source}: must be a mapping`);
  // The adapter name is checked first so an unknown one gets the original's exact message.
  const name = (raw as { default?: unknown }).default;
  if (name !== undefined && name !== null && !(ADAPTERS as readonly unknown[]).includes(name)) {
    throw RateLimitException.adapterNotSupported(String(name));
  }
  dropNulls(raw as Record<string, unknown>);
  if (!validateFile(raw)) throw new RateLimitException(describeErrors(validateFile.errors, source));
  return fromShape(raw, source);
}

/** `key:` with nothing after it (YAML null) means "not set", at the top level and in the two sections. */
function dropNulls(o: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(o)) {
    if (v === null) delete o[k];
    else if ((k === 'file' || k === 'redis') && typeof v === 'object' && !Array.isArray(v)) dropNulls(v as Record<string, unknown>);
  }
}

function fromShape(raw: FileShape, source: string): RateLimitConfig {
  const d = DEFAULT_CONFIG;
  const trusted = raw['trusted-proxies'] ?? [];
  const check = new BlockList();
  for (const cidr of trusted) {
    try {
      addCidr(check, cidr);
    } catch (e) {
      throw new RateLimitException(`${source}: trusted-proxies: ${(e as Error).message}`);
    }
  }
  const routes: RouteOverride[] = [];
  const seen = new Set<string>();
  (raw.routes ?? []).forEach((r, i) => {
    const where = `${source}: routes[${i}]`;
    if (r.limit > 0 && r.interval === undefined) throw new RateLimitException(`${where}: interval is required when limit > 0`);
    const entry: RouteOverride = {
      server: r.server.trim(),
      method: r.method === undefined ? null : normalizeMethod(r.method),
      route: normalizePattern(r.route),
      limit: r.limit,
      interval: r.interval ?? null,
    };
    const id = `${entry.server} ${entry.method ?? '*'} ${entry.route}`;
    if (seen.has(id)) throw new RateLimitException(`${where}: duplicate entry for ${id}`);
    seen.add(id);
    routes.push(entry);
  });
  return {
    default: (raw.default as AdapterName | undefined) ?? d.default,
    file: { path: raw.file?.path ?? d.file.path, prefix: raw.file?.prefix ?? d.file.prefix },
    redis: {
      host: raw.redis?.host ?? d.redis.host,
      port: raw.redis?.port ?? d.redis.port,
      db: raw.redis?.db ?? d.redis.db,
      password: raw.redis?.password ?? d.redis.password,
      prefix: raw.redis?.prefix ?? d.redis.prefix,
      tls: raw.redis?.tls ?? d.redis.tls,
      onStoreError: raw.redis?.['on-store-error'] ?? d.redis.onStoreError,
    },
    trustedProxies: [...trusted],
    ipv6Prefix: raw['ipv6-prefix'] ?? d.ipv6Prefix,
    routes,
  };
}

/** Read DIR/rate_limit.yaml; a missing file means the defaults (file adapter, no overrides). */
export async function loadConfig(stateDir: string): Promise<RateLimitConfig> {
  const path = join(stateDir, CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return structuredClone(DEFAULT_CONFIG);
    throw new RateLimitException(`${path}: ${(e as Error).message}`);
  }
  return parseConfig(text, path);
}
