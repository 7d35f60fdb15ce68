/**
 * Client wire formats: parse a client body into the canonical request, render canonical responses,
 * streams and errors back in the client's format. One module per format; this file is the public API
 * the routes call.
 */
import type { HttpError } from '../../http/errors.js';
import type { CanonicalRequest, CanonicalResponse, ClientFormat } from '../canonical.js';
import { openaiChat } from './openai-chat.js';
import { openaiResponses } from './openai-responses.js';
import { anthropicMessages } from './anthropic.js';
import { geminiGenerate } from './gemini.js';
import { ollamaChat } from './ollama.js';
import type { ModelListEntry, ParseOptions, RenderOptions, StreamEncoder, StreamOptions, WireFormat } from './types.js';

export type { ModelListEntry, ParseOptions, RenderOptions, StreamEncoder, StreamOptions, WireFormat } from './types.js';
export { countTokens } from './tokens.js';
export { renderModelList } from './models.js';

const FORMATS: Record<ClientFormat, WireFormat> = {
  openai: openaiChat,
  'openai-responses': openaiResponses,
  anthropic: anthropicMessages,
  gemini: geminiGenerate,
  ollama: ollamaChat,
};

export function wireFormat(format: ClientFormat): WireFormat {
  return FORMATS[format];
}

/**
 * Validate and parse a client body. Throws HttpError 400 with a message naming the first problem.
 * `opts.model` / `opts.stream` carry what the URL says (Gemini puts both in the path; the URL wins).
 */
export function parseRequest(format: ClientFormat, body: unknown, opts: ParseOptions = {}): CanonicalRequest {
  const req = FORMATS[format].parseRequest(body, opts);
  req.sourceFormat = format;
  return req;
}

/** The JSON body of a non-streaming answer in the client's format. */
export function renderResponse(format: ClientFormat, res: CanonicalResponse, opts: RenderOptions = {}): unknown {
  return FORMATS[format].renderResponse(res, opts);
}

/**
 * A stateful encoder turning canonical chunks into the client's stream frames (SSE `data:` blocks or
 * NDJSON lines, each string ready to write and flush). Call `end()` once the upstream is done; it
 * flushes what was held back (Anthropic's message_delta waits for usage, OpenAI's usage chunk comes last).
 */
export function createStreamEncoder(format: ClientFormat, opts: StreamOptions): StreamEncoder {
  return FORMATS[format].createStreamEncoder(opts);
}

/** Error in the client's wire shape: OpenAI {error:{message,type,code}}, Anthropic {type:'error',error:{type,message}}, Gemini {error:{code,message,status}}, Ollama {error}. */
export function renderError(format: ClientFormat, err: HttpError): { status: number; body: unknown; headers: Record<string, string> } {
  return { status: err.status, body: FORMATS[format].renderErrorBody(err), headers: { ...(err.headers ?? {}) } };
}

/** Content type of the stream a format uses. */
export function streamContentType(format: ClientFormat): string {
  return FORMATS[format].streamContentType;
}
