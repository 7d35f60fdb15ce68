/**
 * gateway.yaml `web_fetch:`: the credentials and base URLs of the three hosted fetch providers
 * (Firecrawl, Jina Reader, Tavily Extract), the limits of the built-in fetcher, and per-key policies
 * (by key name). A hosted provider without a key is not in the pool; the built-in one is, unless
 * `builtin.enabled: false`.
 */
import { Type } from '@sinclair/typebox';
import { compile, describeErrors } from '../../http/schema.js';

export const FETCH_PROVIDERS = ['firecrawl', 'jina', 'tavily', 'builtin'] as const;
export type FetchProviderId = (typeof FETCH_PROVIDERS)[number];
export type HostedFetchProvider = Exclude<FetchProviderId, 'builtin'>;

export const DEFAULT_BASE_URLS: Record<HostedFetchProvider, string> = {
  firecrawl: 'https://api.firecrawl.dev',
  jina: 'https://r.jina.ai',
  tavily: 'https://api.tavily.com',
};

export interface HostedFetchConfig {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
}

export interface FetchPolicy {
  enabled: boolean;
  providers?: FetchProviderId[];
}

export interface WebFetchConfig {
  hosted: Partial<Record<HostedFetchProvider, HostedFetchConfig>>;
  builtin: { enabled: boolean; maxBytes: number; timeoutMs: number };
  /** By API key name: web fetch off, or only some providers. */
  policies: Record<string, FetchPolicy>;
}

export const DEFAULT_WEB_FETCH: WebFetchConfig = { hosted: {}, builtin: { enabled: true, maxBytes: 5 * 1024 * 1024, timeoutMs: 15_000 }, policies: {} };

const Hosted = Type.Object(
  {
    api_key: Type.Optional(Type.String({ minLength: 1 })),
    api_key_env: Type.Optional(Type.String({ minLength: 1 })),
    base_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
  },
  { additionalProperties: false },
);
const validate = compile(
  Type.Object(
    {
      firecrawl: Type.Optional(Hosted),
      jina: Type.Optional(Hosted),
      tavily: Type.Optional(Hosted),
      builtin: Type.Optional(
        Type.Object(
          {
            enabled: Type.Optional(Type.Boolean()),
            max_bytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 100 * 1024 * 1024 })),
            timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
          },
          { additionalProperties: false },
        ),
      ),
      policies: Type.Optional(
        Type.Record(
          Type.String(),
          Type.Object(
            { enabled: Type.Optional(Type.Boolean()), providers: Type.Optional(Type.Array(Type.Union(FETCH_PROVIDERS.map((p) => Type.Literal(p))))) },
            { additionalProperties: false },
          ),
        ),
      ),
    },
    { additionalProperties: false },
  ),
);

type Raw = { api_key?: string; api_key_env?: string; base_url?: string; timeout_ms?: number };

/** Parses the section (throws naming the field on a bad one); `env` resolves `api_key_env`. */
export function parseWebFetch(raw: unknown, env: NodeJS.ProcessEnv): WebFetchConfig {
  if (raw === undefined || raw === null) return DEFAULT_WEB_FETCH;
  if (!validate(raw)) throw new Error(describeErrors(validate.errors, 'web_fetch'));
  const doc = raw as Partial<Record<HostedFetchProvider, Raw>> & {
    builtin?: { enabled?: boolean; max_bytes?: number; timeout_ms?: number };
    policies?: Record<string, { enabled?: boolean; providers?: FetchProviderId[] }>;
  };
  const out: WebFetchConfig = { hosted: {}, builtin: { ...DEFAULT_WEB_FETCH.builtin }, policies: {} };
  for (const [name, p] of Object.entries(doc.policies ?? {})) out.policies[name] = { enabled: p.enabled ?? true, ...(p.providers ? { providers: p.providers } : {}) };
  for (const id of ['firecrawl', 'jina', 'tavily'] as const) {
    const c = doc[id];
    if (!c) continue;
    const key = c.api_key ?? (c.api_key_env ? env[c.api_key_env] : undefined);
    if (!key) continue; // no credential: not in the pool
    out.hosted[id] = { apiKey: key, baseUrl: (c.base_url ?? DEFAULT_BASE_URLS[id]).replace(/\/+$/, ''), timeoutMs: c.timeout_ms ?? 30_000 };
  }
  if (doc.builtin) {
    out.builtin = {
      enabled: doc.builtin.enabled ?? true,
      maxBytes: doc.builtin.max_bytes ?? DEFAULT_WEB_FETCH.builtin.maxBytes,
      timeoutMs: doc.builtin.timeout_ms ?? DEFAULT_WEB_FETCH.builtin.timeoutMs,
    };
  }
  return out;
}
