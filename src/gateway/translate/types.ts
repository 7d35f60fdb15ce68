import type { HttpError } from '../../http/errors.js';
import type { CanonicalChunk, CanonicalRequest, CanonicalResponse, Usage } from '../canonical.js';

export interface ParseOptions {
  /** Model from the URL (Gemini `/v1beta/models/{model}:action`); overrides the body. */
  model?: string;
  /** Streaming decided by the URL (Gemini `:streamGenerateContent`); overrides the body. */
  stream?: boolean;
}

export interface RenderOptions {
  /** Model id to show the client (defaults to the response's model). */
  model?: string;
  /** Response id to show the client (defaults to the response's id). */
  id?: string;
}

export interface StreamOptions {
  /** Model id shown to the client. */
  model: string;
  /** Response/message id shown to the client (a fresh one is made when absent). */
  id?: string;
  /** Unix seconds for `created` fields (defaults to now). */
  created?: number;
  /** OpenAI clients: emit the trailing usage chunk (stream_options.include_usage). */
  includeUsage?: boolean;
  /** Prompt tokens estimated before the upstream said anything (Anthropic message_start.usage). */
  estimatedInputTokens?: number;
}

export interface StreamEncoder {
  /** Frames to write for one canonical chunk (possibly none: some are held back). */
  chunk(c: CanonicalChunk): string[];
  /** Frames that close the stream (held message_delta/usage, [DONE], done:true, ...). Idempotent. */
  end(): string[];
  /** Frames that report an error after the stream has started (upstream broke mid-way). Ends the stream. */
  error(message: string, status?: number): string[];
  /** Usage seen so far (for recording when the client disconnects). */
  usage(): Usage;
}

export interface WireFormat {
  readonly streamContentType: string;
  parseRequest(body: unknown, opts: ParseOptions): CanonicalRequest;
  renderResponse(res: CanonicalResponse, opts: RenderOptions): unknown;
  createStreamEncoder(opts: StreamOptions): StreamEncoder;
  renderErrorBody(err: HttpError): unknown;
}

/** One row of a model listing, in neutral form; renderModelList turns it into each format's list. */
export interface ModelListEntry {
  id: string;
  /** `model` for chat, `embedding`, `image`, `combo`. */
  type?: 'chat' | 'embedding' | 'image' | 'speech' | 'transcription' | 'rerank' | 'moderation' | 'video' | 'music' | 'combo';
  ownedBy?: string;
  /** Unix seconds. */
  created?: number;
  displayName?: string;
  contextLength?: number;
  maxOutputTokens?: number;
  thinking?: boolean;
}
