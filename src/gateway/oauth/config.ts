/**
 * OAuth providers, from ctl.yaml `gateway.oauth_providers`: each is a gateway provider (kind, base URL,
 * models) whose accounts come from OAuth logins instead of API keys, with the authorization server's
 * endpoints and the client to use. Device-code flows need `device_authorization_url`; authorization-
 * code flows (PKCE, S256) need `authorize_url` and `redirect_uri`.
 */
import { parseProviderKind } from '../providers/index.js';
import type { ProviderKind } from '../canonical.js';

export interface OAuthProviderConfig {
  id: string;
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  models: string[];
  clientId: string;
  clientSecret?: string;
  tokenUrl: string;
  deviceAuthorizationUrl?: string;
  authorizeUrl?: string;
  redirectUri?: string;
  scopes: string[];
  /** Extra parameters sent with the authorization request (`audience`, `prompt`, …). */
  extraParams: Record<string, string>;
}

const FIELDS = ['id', 'name', 'kind', 'base_url', 'models', 'client_id', 'client_secret', 'client_secret_env', 'token_url', 'device_authorization_url', 'authorize_url', 'redirect_uri', 'scopes', 'extra_params'];
const url = (v: unknown, where: string, required: boolean): string | undefined => {
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || !/^https?:\/\/[^/]/.test(v)) throw new Error(`${where} must be an http(s) URL`);
  return v;
};

export function oauthProvidersOf(config: Record<string, unknown>, env: NodeJS.ProcessEnv): OAuthProviderConfig[] {
  const list = config.oauth_providers;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new Error('ctl.yaml gateway.oauth_providers must be a list');
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const w = `ctl.yaml gateway.oauth_providers[${i}]`;
    if (typeof raw !== 'object' || raw === null) throw new Error(`${w} must be a mapping`);
    const o = raw as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!FIELDS.includes(k)) throw new Error(`${w}: unknown field ${k}`);
    if (typeof o.id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(o.id)) throw new Error(`${w}.id must be lower-case letters, digits, - and _`);
    if (seen.has(o.id)) throw new Error(`${w}: duplicate id ${o.id}`);
    seen.add(o.id);
    const kind = typeof o.kind === 'string' ? parseProviderKind(o.kind) : undefined;
    if (!kind) throw new Error(`${w}.kind must be openai, anthropic, gemini or ollama`);
    if (typeof o.client_id !== 'string' || !o.client_id) throw new Error(`${w}.client_id is required`);
    const models = o.models ?? [];
    if (!Array.isArray(models) || !models.every((m) => typeof m === 'string')) throw new Error(`${w}.models must be a list of model ids`);
    const scopes = o.scopes ?? [];
    if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) throw new Error(`${w}.scopes must be a list`);
    const extra = o.extra_params ?? {};
    if (typeof extra !== 'object' || extra === null || !Object.values(extra).every((v) => typeof v === 'string')) throw new Error(`${w}.extra_params must map names to strings`);
    const deviceAuthorizationUrl = url(o.device_authorization_url, `${w}.device_authorization_url`, false);
    const authorizeUrl = url(o.authorize_url, `${w}.authorize_url`, false);
    if (!deviceAuthorizationUrl && !authorizeUrl) throw new Error(`${w} needs device_authorization_url (device code) or authorize_url (authorization code)`);
    const redirectUri = url(o.redirect_uri, `${w}.redirect_uri`, false);
    if (authorizeUrl && !redirectUri) throw new Error(`${w}.redirect_uri is required with authorize_url`);
    const secret = typeof o.client_secret === 'string' ? o.client_secret : typeof o.client_secret_env === 'string' ? env[o.client_secret_env] : undefined;
    return {
      id: o.id,
      name: typeof o.name === 'string' ? o.name : o.id,
      kind,
      baseUrl: url(o.base_url, `${w}.base_url`, true)!.replace(/\/+$/, ''),
      models: models as string[],
      clientId: o.client_id,
      ...(secret ? { clientSecret: secret } : {}),
      tokenUrl: url(o.token_url, `${w}.token_url`, true)!,
      ...(deviceAuthorizationUrl ? { deviceAuthorizationUrl } : {}),
      ...(authorizeUrl ? { authorizeUrl } : {}),
      ...(redirectUri ? { redirectUri } : {}),
      scopes: scopes as string[],
      extraParams: extra as Record<string, string>,
    };
  });
}
