/**
 * Anthropic Messages, client side: `POST /v1/messages` bodies in, `message` JSON and the
 * message_start / content_block_* / message_delta / message_stop SSE family out.
 */
import type { HttpError } from '../../http/errors.js';
import {
  emptyUsage,
  mergeUsage,
  textOf,
  type AssistantMessage,
  type CanonicalChunk,
  type CanonicalRequest,
  type CanonicalResponse,
  type ContentPart,
  type Message,
  type StopReason,
  type ThinkingConfig,
  type ToolChoice,
  type ToolDefinition,
  type Usage,
} from '../canonical.js';
import {
  extraFields,
  invalid,
  isObject,
  newId,
  normaliseToolTurns,
  optBoolean,
  optInteger,
  optNumber,
  parseArguments,
  requireObject,
  stopList,
} from './common.js';
import { sseEvent } from './sse.js';
import type { ParseOptions, RenderOptions, StreamEncoder, StreamOptions, WireFormat } from './types.js';

const KNOWN = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
]);

// ----------------------------------------------------------------------------- request parsing

function parseImage(b: Record<string, unknown>, path: string): ContentPart {
  const src = b.source;
  if (!isObject(src)) throw invalid(`${path}/source`, 'must be an object');
  if (src.type === 'base64') {
    if (typeof src.data !== 'string' || src.data === '') throw invalid(`${path}/source/data`, 'must be a non-empty base64 string');
    if (typeof src.media_type !== 'string') throw invalid(`${path}/source/media_type`, 'must be a string');
    return { type: 'image', source: { type: 'base64', mediaType: src.media_type, data: src.data } };
  }
  if (src.type === 'url') {
    if (typeof src.url !== 'string' || src.url === '') throw invalid(`${path}/source/url`, 'must be a non-empty string');
    return { type: 'image', source: { type: 'url', url: src.url } };
  }
  throw invalid(`${path}/source/type`, 'must be "base64" or "url"');
}

/** Text/image blocks (tool_result content, system blocks). */
function parseSimpleBlocks(v: unknown, path: string): ContentPart[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v === '' ? [] : [{ type: 'text', text: v }];
  if (!Array.isArray(v)) throw invalid(path, 'must be a string or an array of content blocks');
  const out: ContentPart[] = [];
  v.forEach((b, i) => {
    const bp = `${path}/${i}`;
    if (!isObject(b)) throw invalid(bp, 'must be an object');
    if (b.type === 'text') {
      if (typeof b.text !== 'string') throw invalid(`${bp}/text`, 'must be a string');
      out.push({ type: 'text', text: b.text });
    } else if (b.type === 'image') {
      out.push(parseImage(b, bp));
    } else {
      throw invalid(`${bp}/type`, `block type ${JSON.stringify(b.type)} is not supported here (text, image)`);
    }
  });
  return out;
}

function parseMessages(v: unknown): Message[] {
  if (!Array.isArray(v)) throw invalid('body/messages', 'must be an array');
  if (v.length === 0) throw invalid('body/messages', 'must contain at least one message');
  const out: Message[] = [];
  v.forEach((m, i) => {
    const mp = `body/messages/${i}`;
    if (!isObject(m)) throw invalid(mp, 'must be an object');
    if (m.role !== 'user' && m.role !== 'assistant') throw invalid(`${mp}/role`, 'must be "user" or "assistant"');
    const blocks: unknown[] =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : (null as never);
    if (!blocks) throw invalid(`${mp}/content`, 'must be a string or an array of content blocks');
    if (m.role === 'assistant') {
      const a: AssistantMessage = { role: 'assistant', content: [] };
      blocks.forEach((b, k) => {
        const bp = `${mp}/content/${k}`;
        if (!isObject(b)) throw invalid(bp, 'must be an object');
        switch (b.type) {
          case 'text':
            if (typeof b.text !== 'string') throw invalid(`${bp}/text`, 'must be a string');
            if (b.text !== '') a.content.push({ type: 'text', text: b.text });
            break;
          case 'tool_use':
            if (typeof b.id !== 'string' || b.id === '') throw invalid(`${bp}/id`, 'must be a non-empty string');
            if (typeof b.name !== 'string' || b.name === '') throw invalid(`${bp}/name`, 'must be a non-empty string');
            if (b.input !== undefined && !isObject(b.input)) throw invalid(`${bp}/input`, 'must be an object');
            (a.toolCalls ??= []).push({ id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) });
            break;
          case 'thinking':
            if (typeof b.thinking === 'string') a.reasoning = (a.reasoning ?? '') + b.thinking;
            if (typeof b.signature === 'string') a.reasoningSignature = b.signature;
            break;
          case 'redacted_thinking':
            break;
          default:
            throw invalid(`${bp}/type`, `block type ${JSON.stringify(b.type)} is not supported in assistant messages`);
        }
      });
      out.push(a);
      return;
    }
    // user: tool_result blocks become tool messages (first), the rest one user message.
    const rest: ContentPart[] = [];
    blocks.forEach((b, k) => {
      const bp = `${mp}/content/${k}`;
      if (!isObject(b)) throw invalid(bp, 'must be an object');
      switch (b.type) {
        case 'text':
          if (typeof b.text !== 'string') throw invalid(`${bp}/text`, 'must be a string');
          rest.push({ type: 'text', text: b.text });
          break;
        case 'image':
          rest.push(parseImage(b, bp));
          break;
        case 'tool_result': {
          if (typeof b.tool_use_id !== 'string' || b.tool_use_id === '') throw invalid(`${bp}/tool_use_id`, 'must be a non-empty string');
          const t: Message = { role: 'tool', toolCallId: b.tool_use_id, content: parseSimpleBlocks(b.content, `${bp}/content`) };
          if (b.is_error === true) t.isError = true;
          out.push(t);
          break;
        }
        default:
          throw invalid(`${bp}/type`, `block type ${JSON.stringify(b.type)} is not supported (text, image, tool_result)`);
      }
    });
    if (rest.length > 0 || !blocks.some((b) => isObject(b) && b.type === 'tool_result')) out.push({ role: 'user', content: rest });
  });
  return normaliseToolTurns(out);
}

function parseTools(v: unknown): ToolDefinition[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid('body/tools', 'must be an array');
  return v.map((t, i) => {
    const tp = `body/tools/${i}`;
    if (!isObject(t)) throw invalid(tp, 'must be an object');
    if (t.type !== undefined && t.type !== 'custom' && t.type !== null) {
      throw invalid(`${tp}/type`, `server tool ${JSON.stringify(t.type)} is not supported by this gateway`);
    }
    if (typeof t.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(t.name)) throw invalid(`${tp}/name`, 'must be 1-128 letters, digits, _ or -');
    if (!isObject(t.input_schema)) throw invalid(`${tp}/input_schema`, 'is required (a JSON Schema object)');
    const d: ToolDefinition = { name: t.name, parameters: t.input_schema };
    if (typeof t.description === 'string') d.description = t.description;
    return d;
  });
}

function parseToolChoice(v: unknown): { choice?: ToolChoice; parallel?: boolean } {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw invalid('body/tool_choice', 'must be an object');
  const parallel = v.disable_parallel_tool_use === true ? false : undefined;
  switch (v.type) {
    case 'auto':
      return { choice: 'auto', parallel };
    case 'any':
      return { choice: 'required', parallel };
    case 'none':
      return { choice: 'none' };
    case 'tool':
      if (typeof v.name !== 'string' || v.name === '') throw invalid('body/tool_choice/name', 'is required for type "tool"');
      return { choice: { name: v.name }, parallel };
    default:
      throw invalid('body/tool_choice/type', 'must be auto, any, tool or none');
  }
}

function parseThinking(v: unknown): ThinkingConfig | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid('body/thinking', 'must be an object');
  if (v.type === 'disabled') return { enabled: false };
  if (v.type === 'enabled' || v.type === 'adaptive') {
    const t: ThinkingConfig = { enabled: true };
    if (v.budget_tokens !== undefined) {
      if (typeof v.budget_tokens !== 'number' || !Number.isInteger(v.budget_tokens) || v.budget_tokens < 0) {
        throw invalid('body/thinking/budget_tokens', 'must be a non-negative integer');
      }
      t.budgetTokens = v.budget_tokens;
    }
    return t;
  }
  throw invalid('body/thinking/type', 'must be "enabled" or "disabled"');
}

export function parseAnthropicRequest(raw: unknown, opts: ParseOptions = {}): CanonicalRequest {
  const body = requireObject(raw);
  const model = opts.model ?? body.model;
  if (typeof model !== 'string' || model.trim() === '') throw invalid('body/model', 'is required (a string)');
  const messages = parseMessages(body.messages);
  const req: CanonicalRequest = { model, messages, stream: opts.stream ?? optBoolean(body, 'stream') ?? false };
  if (body.system !== undefined && body.system !== null) {
    const sys = parseSimpleBlocks(body.system, 'body/system');
    if (sys.some((p) => p.type !== 'text')) throw invalid('body/system', 'must contain text blocks only');
    const text = sys.map((p) => (p.type === 'text' ? p.text : '')).join('\n\n');
    if (text !== '') req.system = text;
  }
  const maxTokens = optInteger(body, 'max_tokens', 'body', 1);
  if (maxTokens !== undefined) req.maxTokens = maxTokens;
  const temperature = optNumber(body, 'temperature');
  if (temperature !== undefined) {
    if (temperature < 0 || temperature > 1) throw invalid('body/temperature', 'must be between 0 and 1');
    req.temperature = temperature;
  }
  const topP = optNumber(body, 'top_p');
  if (topP !== undefined) req.topP = topP;
  const topK = optInteger(body, 'top_k');
  if (topK !== undefined) req.topK = topK;
  const stop = stopList(body.stop_sequences, 'body/stop_sequences');
  if (stop) req.stop = stop;
  const tools = parseTools(body.tools);
  if (tools && tools.length > 0) req.tools = tools;
  const { choice, parallel } = parseToolChoice(body.tool_choice);
  if (choice !== undefined) req.toolChoice = choice;
  if (parallel !== undefined) req.parallelToolCalls = parallel;
  const thinking = parseThinking(body.thinking);
  if (thinking) req.thinking = thinking;
  if (body.metadata !== undefined && body.metadata !== null) {
    if (!isObject(body.metadata)) throw invalid('body/metadata', 'must be an object');
    if (typeof body.metadata.user_id === 'string') req.user = body.metadata.user_id;
  }
  const extra = extraFields(body, KNOWN);
  if (extra) req.extra = extra;
  return req;
}

// ----------------------------------------------------------------------------- response rendering

export function stopToAnthropic(r: StopReason, stopSequence?: string): string {
  switch (r) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return stopSequence ? 'stop_sequence' : 'end_turn';
  }
}

/** Anthropic usage: input_tokens excludes cache reads and writes. */
export function anthropicUsage(u: Usage): Record<string, number> {
  const cached = u.cachedInputTokens ?? 0;
  const created = u.cacheCreationInputTokens ?? 0;
  return {
    input_tokens: Math.max(0, u.inputTokens - cached - created),
    output_tokens: u.outputTokens,
    cache_creation_input_tokens: created,
    cache_read_input_tokens: cached,
  };
}

function renderResponse(res: CanonicalResponse, opts: RenderOptions): unknown {
  const content: Record<string, unknown>[] = [];
  if (res.reasoning) content.push({ type: 'thinking', thinking: res.reasoning, signature: res.reasoningSignature ?? '' });
  const text = textOf(res.content);
  if (text !== '' || (res.toolCalls.length === 0 && !res.reasoning)) content.push({ type: 'text', text });
  for (const c of res.toolCalls) content.push({ type: 'tool_use', id: toolUseId(c.id), name: c.name, input: parseArguments(c.arguments) });
  return {
    id: opts.id ?? (res.id.startsWith('msg_') ? res.id : `msg_${res.id}`),
    type: 'message',
    role: 'assistant',
    model: opts.model ?? res.model,
    content,
    stop_reason: stopToAnthropic(res.stopReason, res.stopSequence),
    stop_sequence: res.stopSequence ?? null,
    usage: anthropicUsage(res.usage),
  };
}

/** Anthropic tool ids must match ^[a-zA-Z0-9_-]+$; upstream ids from other providers may not. */
function toolUseId(id: string): string {
  const clean = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return clean === '' ? newId('toolu_') : clean;
}

// ----------------------------------------------------------------------------- streaming

function createStreamEncoder(opts: StreamOptions): StreamEncoder {
  const id = opts.id ?? newId('msg_');
  const usage = emptyUsage();
  if (opts.estimatedInputTokens) usage.inputTokens = opts.estimatedInputTokens;
  let started = false;
  let ended = false;
  let blockIndex = -1;
  let open: { kind: 'text' | 'thinking' | 'tool'; toolIndex?: number } | null = null;
  let stop: { reason: StopReason; seq?: string } | null = null;
  let signature: string | undefined;

  const begin = (out: string[]) => {
    if (started) return;
    started = true;
    const u = anthropicUsage(usage);
    out.push(
      sseEvent('message_start', {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: opts.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: u,
        },
      }),
    );
    out.push(sseEvent('ping', { type: 'ping' }));
  };
  const close = (out: string[]) => {
    if (!open) return;
    if (open.kind === 'thinking' && signature !== undefined) {
      out.push(sseEvent('content_block_delta', { type: 'content_block_delta', index: blockIndex, delta: { type: 'signature_delta', signature } }));
      signature = undefined;
    }
    out.push(sseEvent('content_block_stop', { type: 'content_block_stop', index: blockIndex }));
    open = null;
  };
  const openBlock = (out: string[], kind: 'text' | 'thinking' | 'tool', block: Record<string, unknown>, toolIndex?: number) => {
    close(out);
    blockIndex++;
    open = { kind, toolIndex };
    out.push(sseEvent('content_block_start', { type: 'content_block_start', index: blockIndex, content_block: block }));
  };
  const finish = (out: string[]) => {
    begin(out);
    close(out);
    const s = stop ?? { reason: 'stop' as StopReason };
    out.push(
      sseEvent('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopToAnthropic(s.reason, s.seq), stop_sequence: s.seq ?? null },
        usage: anthropicUsage(usage),
      }),
    );
    out.push(sseEvent('message_stop', { type: 'message_stop' }));
  };

  return {
    chunk(c: CanonicalChunk): string[] {
      if (ended) return [];
      const out: string[] = [];
      switch (c.type) {
        case 'start':
          mergeUsage(usage, c.usage);
          begin(out);
          break;
        case 'text':
          begin(out);
          if (!c.text) break;
          if (open?.kind !== 'text') openBlock(out, 'text', { type: 'text', text: '' });
          out.push(sseEvent('content_block_delta', { type: 'content_block_delta', index: blockIndex, delta: { type: 'text_delta', text: c.text } }));
          break;
        case 'reasoning':
          begin(out);
          if (!c.text) {
            // A bare signature (Gemini thought signatures ride on other parts): attach it to an open
            // thinking block, never open an empty one for it.
            if (c.signature && open?.kind === 'thinking') signature = c.signature;
            break;
          }
          if (open?.kind !== 'thinking') openBlock(out, 'thinking', { type: 'thinking', thinking: '', signature: '' });
          if (c.text) {
            out.push(
              sseEvent('content_block_delta', { type: 'content_block_delta', index: blockIndex, delta: { type: 'thinking_delta', thinking: c.text } }),
            );
          }
          if (c.signature) signature = c.signature;
          break;
        case 'tool_call': {
          begin(out);
          if (open?.kind !== 'tool' || open.toolIndex !== c.index) {
            openBlock(out, 'tool', { type: 'tool_use', id: toolUseId(c.id ?? ''), name: c.name ?? '', input: {} }, c.index);
          }
          if (c.argumentsDelta) {
            out.push(
              sseEvent('content_block_delta', {
                type: 'content_block_delta',
                index: blockIndex,
                delta: { type: 'input_json_delta', partial_json: c.argumentsDelta },
              }),
            );
          }
          break;
        }
        case 'finish':
          begin(out);
          close(out);
          stop = { reason: c.stopReason, seq: c.stopSequence };
          break;
        case 'usage':
          mergeUsage(usage, c.usage);
          break;
      }
      return out;
    },
    // message_delta carries the usage, so it is held until the upstream is done (OpenAI sends usage after finish_reason).
    end(): string[] {
      if (ended) return [];
      const out: string[] = [];
      finish(out);
      ended = true;
      return out;
    },
    error(message: string, status = 502): string[] {
      if (ended) return [];
      ended = true;
      return [sseEvent('error', { type: 'error', error: { type: anthropicErrorType(status), message } })];
    },
    usage: () => ({ ...usage }),
  };
}

// ----------------------------------------------------------------------------- errors

export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
    case 503:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

function renderErrorBody(err: HttpError): unknown {
  return { type: 'error', error: { type: anthropicErrorType(err.status), message: err.message } };
}

export const anthropicMessages: WireFormat = {
  streamContentType: 'text/event-stream',
  parseRequest: parseAnthropicRequest,
  renderResponse,
  createStreamEncoder,
  renderErrorBody,
};
