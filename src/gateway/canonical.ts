/**
 * The gateway's internal ("canonical") shapes. Every client wire format is parsed into these and
 * rendered back from them; every provider kind encodes from and decodes into them. Translation is
 * hub-and-spoke: client format -> canonical -> provider kind -> canonical -> client format, so any
 * client format reaches any provider kind.
 *
 * Conventions (decided once here so cost and usage code never double-counts):
 *  - Usage.inputTokens is the WHOLE prompt, cached reads and cache writes included (OpenAI
 *    `prompt_tokens` semantics). cachedInputTokens and cacheCreationInputTokens are subsets of it.
 *    (Anthropic's `input_tokens` excludes them; the Anthropic decoder adds them back.)
 *  - Usage.outputTokens is the whole completion, reasoning included (OpenAI `completion_tokens`);
 *    reasoningTokens is a subset of it.
 *  - Tool-call arguments are JSON text (OpenAI style); a call without arguments carries "{}".
 */

/** The client wire formats the gateway speaks. */
export type ClientFormat = 'openai' | 'openai-responses' | 'anthropic' | 'gemini' | 'ollama';

/** The upstream provider kinds. `openai` is any OpenAI-compatible base URL. */
export type ProviderKind = 'openai' | 'anthropic' | 'gemini' | 'ollama';

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image in a message: inline base64 data or a URL (providers that need inline data get it fetched). */
export interface ImagePart {
  type: 'image';
  source: { type: 'base64'; mediaType: string; data: string } | { type: 'url'; url: string };
  /** OpenAI `detail` hint (auto, low, high), kept when the client sent it. */
  detail?: string;
}

export type ContentPart = TextPart | ImagePart;

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** `auto` lets the model choose, `none` forbids tools, `required` forces some tool, `{name}` forces one. */
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments object ("{}" when there are none). */
  arguments: string;
}

export interface SystemMessage {
  role: 'system';
  content: TextPart[];
}

export interface UserMessage {
  role: 'user';
  content: ContentPart[];
}

export interface AssistantMessage {
  role: 'assistant';
  content: ContentPart[];
  toolCalls?: ToolCall[];
  /** Reasoning text of an earlier turn (replayed to providers that want it back). */
  reasoning?: string;
  /** Anthropic thinking signature or an opaque reasoning token, echoed between tool turns. */
  reasoningSignature?: string;
}

/** The result of one tool call, answering the assistant's ToolCall with the same id. */
export interface ToolMessage {
  role: 'tool';
  toolCallId: string;
  /** Tool name when the client format carries it (Gemini needs it; filled from the call when absent). */
  name?: string;
  content: ContentPart[];
  isError?: boolean;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface ThinkingConfig {
  /** false = reasoning explicitly off (the `-gateway-no-thinking/` variants). */
  enabled: boolean;
  budgetTokens?: number;
  effort?: 'minimal' | 'low' | 'medium' | 'high';
}

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name?: string; schema: Record<string, unknown>; strict?: boolean };

export interface CanonicalRequest {
  /** Model id as the client sent it (the router resolves it; providers receive the upstream model id). */
  model: string;
  /**
   * System instructions. Leading system messages of the client are hoisted here; a system
   * message in the middle of a conversation stays in `messages` (renderers that cannot place it
   * there fold it into the system text).
   */
  system?: string;
  messages: Message[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: ResponseFormat;
  thinking?: ThinkingConfig;
  /** True only when the client asked for a stream (`stream` absent means not streaming). */
  stream: boolean;
  /** OpenAI clients: `stream_options.include_usage` — whether the client wants the usage chunk. */
  includeUsage?: boolean;
  /** End-user id for abuse tracking (OpenAI `user`, Anthropic `metadata.user_id`). */
  user?: string;
  /**
   * Fields of the client body the canonical form does not model. Forwarded only when the provider
   * kind speaks the same wire family as the client (e.g. OpenAI `logit_bias` to an OpenAI upstream).
   */
  extra?: Record<string, unknown>;
  /** The wire format the request arrived in (set by parseRequest). */
  sourceFormat?: ClientFormat;
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

/**
 * Why generation stopped. `stop` natural end or stop sequence, `length` token limit, `tool_calls`
 * model wants tools run, `content_filter` refused/filtered, `error` upstream reported an error mid-way.
 */
export type StopReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

export interface Usage {
  /** Whole prompt incl. cached reads and cache writes. */
  inputTokens: number;
  /** Whole completion incl. reasoning. */
  outputTokens: number;
  /** Subset of inputTokens read from the provider's prompt cache. */
  cachedInputTokens?: number;
  /** Subset of inputTokens written to the provider's prompt cache. */
  cacheCreationInputTokens?: number;
  /** Subset of outputTokens spent on reasoning. */
  reasoningTokens?: number;
}

export interface CanonicalResponse {
  id: string;
  /** Model id the upstream reported (or the one requested). */
  model: string;
  /** Unix seconds. */
  created: number;
  /** Answer text (and images, rarely). */
  content: ContentPart[];
  reasoning?: string;
  reasoningSignature?: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  /** The stop sequence that ended generation, when the upstream says which. */
  stopSequence?: string;
  usage: Usage;
}

// ---------------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------------

/**
 * One event of a canonical stream. Providers emit these in order: at most one `start`, any number
 * of `text` / `reasoning` / `tool_call` deltas, one `finish`, and `usage` (possibly several times,
 * later values replace earlier ones field by field; it may come after `finish`, as OpenAI sends it).
 * The stream's end is the end of the iterable.
 */
export type CanonicalChunk =
  | { type: 'start'; id?: string; model?: string; usage?: Partial<Usage> }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; signature?: string }
  /**
   * A tool-call delta routed by `index` (0-based position of the call in this response). The first
   * delta for an index carries `id` and `name` when the upstream has sent them; argument fragments
   * that arrived before them are buffered by the provider decoder so `id`/`name` always come first.
   */
  | { type: 'tool_call'; index: number; id?: string; name?: string; argumentsDelta?: string }
  | { type: 'finish'; stopReason: StopReason; stopSequence?: string }
  | { type: 'usage'; usage: Partial<Usage> };

// ---------------------------------------------------------------------------------------------
// Embeddings
// ---------------------------------------------------------------------------------------------

export type EmbeddingModality = 'text' | 'image' | 'audio' | 'video' | 'document';

export type MediaSource = { type: 'url'; url: string } | { type: 'base64'; data: string; mediaType: string };

/** A structured embedding item (seed: Embeddings request). */
export type EmbeddingItem =
  | { type: 'text'; text: string }
  | { type: Exclude<EmbeddingModality, 'text'>; source: MediaSource };

export type EmbeddingInput =
  | { kind: 'strings'; values: string[]; single: boolean }
  | { kind: 'tokens'; values: number[][]; single: boolean }
  | { kind: 'items'; values: EmbeddingItem[] };

export interface CanonicalEmbeddingsRequest {
  model: string;
  input: EmbeddingInput;
  dimensions?: number;
  encodingFormat?: 'float' | 'base64';
  /** Non-input extension fields of a string/token request, passed through unchanged (seed rule 4). */
  extra?: Record<string, unknown>;
}

export interface CanonicalEmbeddingsResponse {
  model: string;
  /** One vector per input value/item, in order. */
  vectors: number[][];
  usage: { inputTokens: number };
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0 };
}

/** Merge a partial usage report into a running total (later non-undefined values replace earlier). */
export function mergeUsage(into: Usage, part: Partial<Usage> | undefined): Usage {
  if (!part) return into;
  for (const k of ['inputTokens', 'outputTokens', 'cachedInputTokens', 'cacheCreationInputTokens', 'reasoningTokens'] as const) {
    const v = part[k];
    if (typeof v === 'number' && Number.isFinite(v)) into[k] = v;
  }
  return into;
}

/** Concatenated text of text parts. */
export function textOf(parts: readonly ContentPart[] | undefined): string {
  if (!parts) return '';
  let s = '';
  for (const p of parts) if (p.type === 'text') s += p.text;
  return s;
}
