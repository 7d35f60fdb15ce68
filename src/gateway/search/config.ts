/**
 * gateway.yaml `search:`: the web search providers (each a kind with its own adapter and a base URL),
 * the result cache's lifetime, and per-key policies.
 *
 *   search:
 *     providers:
 *       - {id: web, kind: brave, api_key_env: BRAVE_API_KEY, default: true}
 *       - {id: local, kind: searxng, base_url: "http://127.0.0.1:8888"}
 *     cache_ttl_seconds: 300          # 0 turns the cache off
 *     policies:                       # by API key name
 *       ci: {enabled: false}
 *       app: {providers: [local], max_results: 5}
 */
import { Type } from '@sinclair/typebox';
import { compile, describeErrors } from '../../http/schema.js';

export const SEARCH_KINDS = ['searxng', 'brave', 'tavily', 'exa', 'serper'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

export const DEFAULT_SEARCH_BASE_URLS: Record<SearchKind, string | undefined> = {
  searxng: undefined, // self-hosted: base_url is required
  brave: 'https://api.search.brave.com',
  tavily: 'https://api.tavily.com',
  exa: 'https://api.exa.ai',
  serper: 'https://google.serper.dev',
};

export interface SearchProviderConfig {
  id: string;
  kind: SearchKind;
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  isDefault: boolean;
}

export interface SearchPolicy {
  enabled: boolean;
  providers?: string[];
  maxResults?: number;
}

export interface SearchConfig {
  providers: SearchProviderConfig[];
  cacheTtlMs: number;
  /** By API key name. */
  policies: Record<string, SearchPolicy>;
}

export const DEFAULT_SEARCH: SearchConfig = { providers: [], cacheTtlMs: 300_000, policies: {} };

const validate = compile(
  Type.Object(
    {
      providers: Type.Optional(
        Type.Array(
          Type.Object(
            {
              id: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' }),
              kind: Type.Union(SEARCH_KINDS.map((k) => Type.Literal(k))),
              base_url: Type.Optional(Type.String({ pattern: '^https?://' })),
              api_key: Type.Optional(Type.String({ minLength: 1 })),
              api_key_env: Type.Optional(Type.String({ minLength: 1 })),
              timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
              default: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
          { maxItems: 64 },
        ),
      ),
      cache_ttl_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 24 * 3600 })),
      policies: Type.Optional(
        Type.Record(
          Type.String(),
          Type.Object(
            {
              enabled: Type.Optional(Type.Boolean()),
              providers: Type.Optional(Type.Array(Type.String())),
              max_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
            },
            { additionalProperties: false },
          ),
        ),
      ),
    },
    { additionalProperties: false },
  ),
);

type Raw = {
  providers?: { id: string; kind: SearchKind; base_url?: string; api_key?: string; api_key_env?: string; timeout_ms?: number; default?: boolean }[];
  cache_ttl_seconds?: number;
  policies?: Record<string, { enabled?: boolean; providers?: string[]; max_results?: number }>;
};

export function parseSearch(raw: unknown, env: NodeJS.ProcessEnv): SearchConfig {
  if (raw === undefined || raw === null) return DEFAULT_SEARCH;
  if (!validate(raw)) throw new Error(describeErrors(validate.errors, 'search'));
  const doc = raw as Raw;
  const ids = new Set<string>();
  const providers: SearchProviderConfig[] = [];
  for (const p of doc.providers ?? []) {
    const where = `search.providers ${p.id}`;
    if (ids.has(p.id)) throw new Error(`${where}: the id is used twice`);
    ids.add(p.id);
    const baseUrl = p.base_url ?? DEFAULT_SEARCH_BASE_URLS[p.kind];
    if (!baseUrl) throw new Error(`${where}: kind ${p.kind} needs base_url`);
    if (p.api_key !== undefined && p.api_key_env !== undefined) throw new Error(`${where}: set api_key or api_key_env, not both`);
    const apiKey = p.api_key ?? (p.api_key_env !== undefined ? env[p.api_key_env] : undefined);
    if (p.api_key_env !== undefined && !apiKey) throw new Error(`${where}: environment variable ${p.api_key_env} is not set`);
    if (p.kind !== 'searxng' && !apiKey) throw new Error(`${where}: kind ${p.kind} needs api_key or api_key_env`);
    providers.push({ id: p.id, kind: p.kind, baseUrl: baseUrl.replace(/\/+$/, ''), ...(apiKey ? { apiKey } : {}), timeoutMs: p.timeout_ms ?? 15_000, isDefault: p.default === true });
  }
  if (providers.filter((p) => p.isDefault).length > 1) throw new Error('search.providers: more than one default');
  const policies: Record<string, SearchPolicy> = {};
  for (const [name, p] of Object.entries(doc.policies ?? {})) {
    for (const id of p.providers ?? []) if (!ids.has(id)) throw new Error(`search.policies ${name}: unknown provider ${id}`);
    policies[name] = { enabled: p.enabled ?? true, ...(p.providers ? { providers: p.providers } : {}), ...(p.max_results !== undefined ? { maxResults: p.max_results } : {}) };
  }
  return { providers, cacheTtlMs: (doc.cache_ttl_seconds ?? 300) * 1000, policies };
}
