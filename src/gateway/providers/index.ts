/**
 * Provider kinds registry and the public calls the gateway routes use. Each kind (OpenAI-compatible,
 * Anthropic Messages, Gemini generateContent, Ollama) encodes the canonical request in its wire format,
 * sends it through the egress dispatcher with its auth header, and decodes answers and streams back
 * into canonical form.
 */
import type { UpstreamForm, UpstreamHttpResponse } from './http.js';
import type {
  CanonicalEmbeddingsRequest,
  CanonicalEmbeddingsResponse,
  CanonicalRequest,
  ProviderKind,
} from '../canonical.js';
import { anthropicProvider } from './anthropic.js';
import { geminiProvider } from './gemini.js';
import { ollamaProvider } from './ollama.js';
import { openaiProvider } from './openai.js';
import type {
  CallOptions,
  ModelCapabilities,
  ModelSpec,
  ProviderAccount,
  ProviderAdapter,
  ProviderConnection,
  UpstreamModel,
  UpstreamResult,
  StreamOperationAnswer,
} from './types.js';

export type {
  CallOptions,
  ModelCapabilities,
  ModelSpec,
  ProviderAccount,
  ProviderAdapter,
  ProviderConnection,
  StreamOutcome,
  UpstreamModel,
  UpstreamResult,
} from './types.js';
export { UpstreamError, isUpstreamError, retryAfterFromHeaders, type UpstreamErrorKind } from './errors.js';

const ADAPTERS: Record<ProviderKind, ProviderAdapter> = {
  openai: openaiProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
  ollama: ollamaProvider,
};

/** Accepted spellings of a kind in configuration (`openai-compatible`, `claude`, `google`, ...). */
const KIND_ALIASES: Record<string, ProviderKind> = {
  openai: 'openai',
  'openai-compatible': 'openai',
  'openai-compat': 'openai',
  anthropic: 'anthropic',
  claude: 'anthropic',
  'anthropic-compatible': 'anthropic',
  gemini: 'gemini',
  google: 'gemini',
  ollama: 'ollama',
};

export const PROVIDER_KINDS: readonly ProviderKind[] = ['openai', 'anthropic', 'gemini', 'ollama'];

/** Normalise a configured kind name; undefined when unknown. */
export function parseProviderKind(name: string): ProviderKind | undefined {
  return KIND_ALIASES[name.trim().toLowerCase()];
}

export function providerAdapter(kind: ProviderKind): ProviderAdapter {
  const a = ADAPTERS[kind];
  if (!a) throw new Error(`unknown provider kind ${String(kind)}`);
  return a;
}

/** Registry rows for listings: kind, label, default base URL, auth header. */
export function providerKinds(): { kind: ProviderKind; label: string; defaultBaseUrl: string; authHeader: string }[] {
  return PROVIDER_KINDS.map((k) => {
    const a = ADAPTERS[k];
    return { kind: k, label: a.label, defaultBaseUrl: a.defaultBaseUrl, authHeader: a.authHeader };
  });
}

/**
 * Send a chat request upstream. `req.model` must be the upstream model id (no provider prefix).
 * Non-streaming: resolves with the decoded response. Streaming: resolves once the first useful event
 * arrived (stream readiness), with the canonical chunk iterator and an outcome promise.
 * Rejects with UpstreamError (status, kind, retryAfterMs) on every failure.
 */
export function callUpstream(
  conn: ProviderConnection,
  account: ProviderAccount,
  req: CanonicalRequest,
  opts: CallOptions,
): Promise<UpstreamResult> {
  return providerAdapter(conn.kind).chat(conn, account, req, opts);
}

/**
 * Why a provider kind cannot serve an operation (`kind` of function, `path` under the base URL, the
 * request body), as the end of "model X cannot serve /v1/...: ": undefined when it can.
 */
export function operationRefusal(conn: ProviderConnection, kind: 'jsonOperation' | 'formOperation' | 'streamOperation', path: string, endpoint: string, body: Record<string, unknown> = {}): string | undefined {
  const adapter = providerAdapter(conn.kind);
  if (!adapter[kind]) return `provider kind ${conn.kind} has no ${endpoint} endpoint`;
  return adapter.refuses?.(path, body);
}

/** A JSON operation through a provider (`path` under its base URL). Rejects with UpstreamError. */
export function callJsonOperation(conn: ProviderConnection, account: ProviderAccount, path: string, body: Record<string, unknown>, opts: CallOptions): Promise<unknown> {
  const op = providerAdapter(conn.kind).jsonOperation;
  if (!op) throw new Error(`provider kind ${conn.kind} has no ${path}`);
  return op(conn, account, path, body, opts);
}

/** A multipart operation through a provider (transcriptions). */
export function callFormOperation(conn: ProviderConnection, account: ProviderAccount, path: string, form: UpstreamForm, opts: CallOptions): Promise<{ contentType: string; text: string }> {
  const op = providerAdapter(conn.kind).formOperation;
  if (!op) throw new Error(`provider kind ${conn.kind} has no ${path}`);
  return op(conn, account, path, form, opts);
}

/** A streamed operation through a provider (audio speech): the answer once its headers arrived. */
export function callStreamOperation(conn: ProviderConnection, account: ProviderAccount, path: string, body: Record<string, unknown>, opts: CallOptions): Promise<StreamOperationAnswer> {
  const op = providerAdapter(conn.kind).streamOperation;
  if (!op) throw new Error(`provider kind ${conn.kind} has no ${path}`);
  return op(conn, account, path, body, opts);
}

/** Embeddings through a provider. `req.model` is the upstream model id. Rejects with UpstreamError. */
export function callEmbeddings(
  conn: ProviderConnection,
  account: ProviderAccount,
  req: CanonicalEmbeddingsRequest,
  opts: CallOptions,
): Promise<CanonicalEmbeddingsResponse> {
  return providerAdapter(conn.kind).embeddings(conn, account, req, opts);
}

/** The upstream's own model list (used by /api/providers/{id}/models and the connection test). */
export function listUpstreamModels(conn: ProviderConnection, account: ProviderAccount, opts: CallOptions): Promise<UpstreamModel[]> {
  return providerAdapter(conn.kind).listModels(conn, account, opts);
}

/** The declared spec of a model on a connection, if any. */
export function modelSpec(conn: ProviderConnection, modelId: string): ModelSpec | undefined {
  for (const m of conn.models ?? []) {
    if (typeof m === 'string') {
      if (m === modelId) return { id: m };
    } else if (m.id === modelId) return m;
  }
  return undefined;
}

/**
 * Capabilities of a model on a connection: the operator's declaration wins field by field over the
 * kind's guess from the model id.
 */
export function modelCapabilities(conn: ProviderConnection, modelId: string): ModelCapabilities {
  const guess = providerAdapter(conn.kind).capabilities(modelId);
  const spec = modelSpec(conn, modelId);
  if (!spec) return guess;
  const caps: ModelCapabilities = { ...guess };
  if (spec.type) {
    caps.chat = spec.type === 'chat';
    caps.embeddings = spec.type === 'embedding';
    caps.image = spec.type === 'image';
  }
  if (spec.thinking !== undefined) caps.thinking = spec.thinking;
  if (spec.thinkingDisable !== undefined) caps.thinkingDisable = spec.thinkingDisable;
  if (!caps.thinking) caps.thinkingDisable = false;
  if (spec.modalities) caps.modalities = [...spec.modalities];
  if (spec.embeddingModalities) caps.embeddingModalities = [...spec.embeddingModalities];
  if (spec.contextLength !== undefined) caps.contextLength = spec.contextLength;
  if (spec.maxOutputTokens !== undefined) caps.maxOutputTokens = spec.maxOutputTokens;
  return caps;
}

/** Whether `/v1/models` lists the `-gateway-no-thinking/` variant of this model. */
export function listsNoThinkingVariant(conn: ProviderConnection, modelId: string): boolean {
  const spec = modelSpec(conn, modelId);
  if (spec?.noThinkingAlias !== undefined) return spec.noThinkingAlias;
  const caps = modelCapabilities(conn, modelId);
  return caps.chat && caps.thinking && caps.thinkingDisable;
}
