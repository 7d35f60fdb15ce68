import type { UpstreamForm, UpstreamHttpResponse } from './http.js';
import type { Egress } from '../../egress/index.js';
import type {
  CanonicalChunk,
  CanonicalEmbeddingsRequest,
  CanonicalEmbeddingsResponse,
  CanonicalRequest,
  CanonicalResponse,
  EmbeddingModality,
  ProviderKind,
  StopReason,
  Usage,
} from '../canonical.js';
import type { UpstreamError } from './errors.js';
import type { MediaPolicy } from './media.js';
import type { AbortLike } from '../abort.js';

/** A streamed operation's answer: its headers (content type, length) and the body as it arrives. */
export interface StreamOperationAnswer {
  headers: Record<string, string>;
  body: import('node:stream').Readable;
}

/** Per-model facts an operator can declare (gateway.yaml `models:` entries or /api/provider-models). */
export interface ModelSpec {
  /** Model id as the upstream knows it. */
  id: string;
  type?: 'chat' | 'embedding' | 'image' | 'speech' | 'transcription' | 'rerank' | 'moderation' | 'video' | 'music';
  /** Supports reasoning/thinking. */
  thinking?: boolean;
  /** Accepts thinking turned off (so a `-gateway-no-thinking/` variant is listed). */
  thinkingDisable?: boolean;
  /** Force the no-thinking alias on or off (seed: model-spec field `noThinkingAlias`). */
  noThinkingAlias?: boolean;
  /** Input modalities for chat (text, image, ...). */
  modalities?: EmbeddingModality[];
  /** Modalities accepted by an embedding model for structured items; absent = strings/tokens only. */
  embeddingModalities?: EmbeddingModality[];
  contextLength?: number;
  maxOutputTokens?: number;
}

export interface ProviderConnection {
  id: string;
  kind: ProviderKind;
  /**
   * Base URL up to the API version, e.g. `http://127.0.0.1:8080/v1` (openai), `https://api.anthropic.com`
   * (anthropic; `/v1/messages` is appended), `https://generativelanguage.googleapis.com/v1beta` (gemini),
   * `http://127.0.0.1:11434` (ollama). Defaults per kind when empty.
   */
  baseUrl?: string;
  /** Static extra headers (anthropic-beta, OpenAI-Organization, ...). */
  headers?: Record<string, string>;
  models?: (string | ModelSpec)[];
  /** Upstream response-header timeout in ms (default 600 s). */
  timeoutMs?: number;
  /** Idle timeout between stream events in ms (default 600 s). */
  streamIdleTimeoutMs?: number;
  /** Wait at most this long for the first useful stream event before calling it a failure (default 30 s). */
  readinessTimeoutMs?: number;
}

/** One credential of a connection. */
export interface ProviderAccount {
  id: string;
  apiKey?: string;
}

export interface CallOptions {
  egress: Egress;
  /** The connection's assigned outbound proxy (src/gateway/proxies); none: direct through the egress layer. */
  dispatcher?: import('undici').Dispatcher;
  /** Aborts the upstream request (client disconnected, combo timeout). */
  signal?: AbortLike;
  /** Milliseconds-since-epoch source for latency (defaults to Date.now). */
  now?: () => number;
  /** Policy for fetching media URLs server-side (image URLs for providers that need inline data). */
  media?: MediaPolicy;
}

export interface ModelCapabilities {
  chat: boolean;
  embeddings: boolean;
  image: boolean;
  thinking: boolean;
  /** Thinking can be turned off (no-thinking variant is meaningful). */
  thinkingDisable: boolean;
  /** Input modalities of chat. */
  modalities: EmbeddingModality[];
  /** Structured-item modalities of embeddings; empty = strings/tokens only. */
  embeddingModalities: EmbeddingModality[];
  contextLength?: number;
  maxOutputTokens?: number;
}

/** What the stream ended with. Never rejects. */
export interface StreamOutcome {
  usage: Usage;
  stopReason?: StopReason;
  /** Set when the stream failed (truncated, garbage, idle timeout, aborted). */
  error?: UpstreamError;
  /** True once any content chunk was produced. */
  producedContent: boolean;
}

export type UpstreamResult =
  | {
      stream: false;
      status: number;
      headers: Record<string, string>;
      response: CanonicalResponse;
      /** Milliseconds from the call to the full response. */
      latencyMs: number;
    }
  | {
      stream: true;
      status: number;
      headers: Record<string, string>;
      /**
       * Canonical chunks. callUpstream resolves only after the first useful chunk arrived (stream
       * readiness), so an empty 200 stream is an UpstreamError before anything reaches the client.
       * Iterating may throw UpstreamError (truncated/garbage/timeout) after that; iterate once.
       */
      chunks: AsyncIterable<CanonicalChunk>;
      /** Resolves when the stream ends, however it ends, with the usage known by then. */
      outcome: Promise<StreamOutcome>;
      /** Milliseconds from the call to the first useful chunk. */
      firstChunkMs: number;
      /** Stop reading and abort the upstream (e.g. the client left). */
      cancel(): void;
    };

export interface UpstreamModel {
  id: string;
  type?: 'chat' | 'embedding' | 'image';
  displayName?: string;
  contextLength?: number;
}

/** One provider kind's implementation. */
export interface ProviderAdapter {
  readonly kind: ProviderKind;
  readonly label: string;
  readonly defaultBaseUrl: string;
  /** How the key is sent: `authorization: Bearer`, `x-api-key`, `x-goog-api-key`, or none (local). */
  readonly authHeader: 'bearer' | 'x-api-key' | 'x-goog-api-key' | 'none';
  chat(conn: ProviderConnection, account: ProviderAccount, req: CanonicalRequest, opts: CallOptions): Promise<UpstreamResult>;
  embeddings(
    conn: ProviderConnection,
    account: ProviderAccount,
    req: CanonicalEmbeddingsRequest,
    opts: CallOptions,
  ): Promise<CanonicalEmbeddingsResponse>;
  listModels(conn: ProviderConnection, account: ProviderAccount, opts: CallOptions): Promise<UpstreamModel[]>;
  /**
   * A JSON operation the kind serves as the OpenAI wire does (`/moderations`, `/rerank`): the body
   * POSTed to the path under the base URL, the JSON answer returned. Absent: the kind cannot serve it.
   */
  jsonOperation?(conn: ProviderConnection, account: ProviderAccount, path: string, body: Record<string, unknown>, opts: CallOptions): Promise<unknown>;
  /** A multipart operation (an upload: transcriptions): the answer's content type and text. */
  formOperation?(conn: ProviderConnection, account: ProviderAccount, path: string, form: UpstreamForm, opts: CallOptions): Promise<{ contentType: string; text: string }>;
  /** The same with the answer as a stream (audio): resolves once its headers arrived. */
  streamOperation?(conn: ProviderConnection, account: ProviderAccount, path: string, body: Record<string, unknown>, opts: CallOptions): Promise<StreamOperationAnswer>;
  /**
   * Why the kind cannot serve this operation path with this body, when its operation functions cover
   * only some (Gemini: image generation and wav/pcm speech); undefined when it can. Absent: every path.
   */
  refuses?(path: string, body: Record<string, unknown>): string | undefined;
  /** Capabilities guessed from the model id when the operator declared nothing. */
  capabilities(modelId: string): ModelCapabilities;
}
