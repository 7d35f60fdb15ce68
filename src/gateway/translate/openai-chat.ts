/**
 * OpenAI Chat Completions, client side: `POST /v1/chat/completions` bodies in, chat.completion JSON
 * and chat.completion.chunk SSE out. The provider side (encoding for OpenAI-compatible upstreams)
 * reuses the part converters exported here.
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
  type ResponseFormat,
  type ThinkingConfig,
  type ToolChoice,
  type ToolDefinition,
  type Usage,
} from '../canonical.js';
import {
  argumentsText,
  extraFields,
  imageFromUrl,
  imageToUrl,
  invalid,
  isObject,
  newId,
  normaliseToolTurns,
  nowSeconds,
  optBoolean,
  optInteger,
  optNumber,
  optString,
  requireObject,
  stopList,
  stopToOpenAI,
} from './common.js';
import { sseData } from './sse.js';
import type { ParseOptions, RenderOptions, StreamEncoder, StreamOptions, WireFormat } from './types.js';

const KNOWN = new Set([
  'model',
  'messages',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'response_format',
  'stream',
  'stream_options',
  'user',
  'reasoning_effort',
  'reasoning',
  'thinking',
  'n',
  'functions',
  'function_call',
]);

// ----------------------------------------------------------------------------- request parsing

export function parseOpenAIContent(content: unknown, path: string): ContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(path, 'must be a string or an array of content parts');
  const parts: ContentPart[] = [];
  content.forEach((p, i) => {
    const pp = `${path}/${i}`;
    if (typeof p === 'string') {
      parts.push({ type: 'text', text: p });
      return;
    }
    if (!isObject(p)) throw invalid(pp, 'must be an object');
    switch (p.type) {
      case 'text':
      case 'input_text':
      case 'output_text':
        if (typeof p.text !== 'string') throw invalid(`${pp}/text`, 'must be a string');
        parts.push({ type: 'text', text: p.text });
        break;
      case 'image_url': {
        const iu = p.image_url;
        const url = typeof iu === 'string' ? iu : isObject(iu) ? iu.url : undefined;
        if (typeof url !== 'string' || url === '') throw invalid(`${pp}/image_url/url`, 'must be a non-empty string');
        const detail = isObject(iu) && typeof iu.detail === 'string' ? iu.detail : undefined;
        parts.push(imageFromUrl(url, detail));
        break;
      }
      case 'refusal':
        if (typeof p.refusal === 'string') parts.push({ type: 'text', text: p.refusal });
        break;
      default:
        throw invalid(`${pp}/type`, `content part type ${JSON.stringify(p.type)} is not supported (text, image_url)`);
    }
  });
  return parts;
}

function parseToolCalls(v: unknown, path: string): AssistantMessage['toolCalls'] {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid(path, 'must be an array');
  return v.map((c, i) => {
    const cp = `${path}/${i}`;
    if (!isObject(c)) throw invalid(cp, 'must be an object');
    const fn = c.function;
    if (!isObject(fn) || typeof fn.name !== 'string' || fn.name === '') throw invalid(`${cp}/function/name`, 'must be a non-empty string');
    if (fn.arguments !== undefined && fn.arguments !== null && typeof fn.arguments !== 'string' && !isObject(fn.arguments)) {
      throw invalid(`${cp}/function/arguments`, 'must be a JSON string');
    }
    return { id: typeof c.id === 'string' ? c.id : '', name: fn.name, arguments: argumentsText(fn.arguments) };
  });
}

export function parseOpenAITools(v: unknown, path: string): ToolDefinition[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid(path, 'must be an array');
  return v.map((t, i) => {
    const tp = `${path}/${i}`;
    if (!isObject(t)) throw invalid(tp, 'must be an object');
    if (t.type !== undefined && t.type !== 'function') throw invalid(`${tp}/type`, `tool type ${JSON.stringify(t.type)} is not supported (function)`);
    const fn = isObject(t.function) ? t.function : t; // tolerate flat {name, parameters}
    if (typeof fn.name !== 'string' || !/^[a-zA-Z0-9_.:-]{1,128}$/.test(fn.name)) {
      throw invalid(`${tp}/function/name`, 'must be 1-128 letters, digits, _ . : or -');
    }
    if (fn.parameters !== undefined && !isObject(fn.parameters)) throw invalid(`${tp}/function/parameters`, 'must be a JSON Schema object');
    const def: ToolDefinition = { name: fn.name, parameters: (fn.parameters as Record<string, unknown>) ?? { type: 'object', properties: {} } };
    if (typeof fn.description === 'string') def.description = fn.description;
    return def;
  });
}

export function parseOpenAIToolChoice(v: unknown, path: string): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none' || v === 'required') return v;
  if (v === 'any') return 'required';
  if (isObject(v)) {
    const fn = isObject(v.function) ? v.function : v;
    if (typeof fn.name === 'string' && fn.name !== '') return { name: fn.name };
    if (v.type === 'auto' || v.type === 'none' || v.type === 'required') return v.type;
  }
  throw invalid(path, 'must be "auto", "none", "required" or {type:"function",function:{name}}');
}

export function parseResponseFormat(v: unknown, path: string): ResponseFormat | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid(path, 'must be an object');
  if (v.type === 'text' || v.type === 'json_object') return { type: v.type };
  if (v.type === 'json_schema') {
    const js = isObject(v.json_schema) ? v.json_schema : v;
    if (!isObject(js.schema)) throw invalid(`${path}/json_schema/schema`, 'must be an object');
    const rf: ResponseFormat = { type: 'json_schema', schema: js.schema };
    if (typeof js.name === 'string') rf.name = js.name;
    if (typeof js.strict === 'boolean') rf.strict = js.strict;
    return rf;
  }
  throw invalid(`${path}/type`, 'must be "text", "json_object" or "json_schema"');
}

const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

/** reasoning_effort / reasoning{effort} / thinking{type,budget_tokens} → canonical thinking. */
export function parseOpenAIThinking(body: Record<string, unknown>): ThinkingConfig | undefined {
  const effort = body.reasoning_effort ?? (isObject(body.reasoning) ? body.reasoning.effort : undefined);
  if (effort !== undefined && effort !== null) {
    if (effort === 'none') return { enabled: false };
    if (typeof effort !== 'string' || !EFFORTS.has(effort)) throw invalid('body/reasoning_effort', 'must be none, minimal, low, medium or high');
    return { enabled: true, effort: effort as ThinkingConfig['effort'] };
  }
  const th = body.thinking;
  if (isObject(th)) {
    if (th.type === 'disabled') return { enabled: false };
    if (th.type === 'enabled') {
      const t: ThinkingConfig = { enabled: true };
      if (typeof th.budget_tokens === 'number') t.budgetTokens = th.budget_tokens;
      return t;
    }
  }
  return undefined;
}

/** Message i's content; the common case, a string, needs no path (the errors are about the other shapes). */
function messageContent(content: unknown, i: number): ContentPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return parseOpenAIContent(content, `body/messages/${i}/content`);
}

function parseMessages(v: unknown): { system?: string; messages: Message[] } {
  if (!Array.isArray(v)) throw invalid('body/messages', 'must be an array');
  if (v.length === 0) throw invalid('body/messages', 'must contain at least one message');
  const messages: Message[] = [];
  const leadingSystem: string[] = [];
  let seenOther = false;
  // A plain loop, the paths made only for an error: 60,000 messages are one pass of the event loop.
  for (let i = 0; i < v.length; i++) {
    const m: unknown = v[i];
    if (!isObject(m)) throw invalid(`body/messages/${i}`, 'must be an object');
    const role = m.role;
    switch (role) {
      case 'system':
      case 'developer': {
        const text = textOf(messageContent(m.content, i));
        if (!seenOther) leadingSystem.push(text);
        else messages.push({ role: 'system', content: [{ type: 'text', text }] });
        break;
      }
      case 'user':
        seenOther = true;
        messages.push({ role: 'user', content: messageContent(m.content, i) });
        break;
      case 'assistant': {
        seenOther = true;
        const a: AssistantMessage = { role: 'assistant', content: messageContent(m.content, i) };
        const calls = m.tool_calls === undefined || m.tool_calls === null ? undefined : parseToolCalls(m.tool_calls, `body/messages/${i}/tool_calls`);
        if (calls && calls.length > 0) a.toolCalls = calls;
        if (isObject(m.function_call) && typeof m.function_call.name === 'string') {
          a.toolCalls = [{ id: '', name: m.function_call.name, arguments: argumentsText(m.function_call.arguments) }];
        }
        const reasoning = m.reasoning_content ?? m.reasoning;
        if (typeof reasoning === 'string' && reasoning !== '') a.reasoning = reasoning;
        messages.push(a);
        break;
      }
      case 'tool':
      case 'function': {
        seenOther = true;
        const id = role === 'tool' ? m.tool_call_id : m.name;
        if (typeof id !== 'string' || id === '') throw invalid(`body/messages/${i}/tool_call_id`, 'is required on tool messages');
        const t: Message = { role: 'tool', toolCallId: id, content: messageContent(m.content, i) };
        if (typeof m.name === 'string') t.name = m.name;
        messages.push(t);
        break;
      }
      default:
        throw invalid(`body/messages/${i}/role`, 'must be one of system, developer, user, assistant, tool');
    }
  }
  // Legacy function_call turns: give the call ids and pair results by name.
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'assistant' && m.toolCalls) {
      m.toolCalls.forEach((c, k) => {
        if (c.id) return;
        c.id = `call_${i}_${k}`;
        const next = messages[i + 1 + k];
        if (next && next.role === 'tool' && next.toolCallId === c.name) next.toolCallId = c.id;
      });
    }
  }
  const out: { system?: string; messages: Message[] } = { messages: normaliseToolTurns(messages) };
  if (leadingSystem.length > 0) out.system = leadingSystem.join('\n\n');
  return out;
}

export function parseOpenAIChatRequest(raw: unknown, opts: ParseOptions = {}): CanonicalRequest {
  const body = requireObject(raw);
  const model = opts.model ?? body.model;
  if (typeof model !== 'string' || model.trim() === '') throw invalid('body/model', 'is required (a string)');
  const { system, messages } = parseMessages(body.messages);
  const stream = opts.stream ?? optBoolean(body, 'stream') ?? false;
  const req: CanonicalRequest = { model, messages, stream };
  if (system !== undefined) req.system = system;
  const n = optInteger(body, 'n', 'body', 1);
  if (n !== undefined && n > 1) throw invalid('body/n', 'greater than 1 is not supported by this gateway');
  const maxTokens = optInteger(body, 'max_completion_tokens', 'body', 1) ?? optInteger(body, 'max_tokens', 'body', 1);
  if (maxTokens !== undefined) req.maxTokens = maxTokens;
  const temperature = optNumber(body, 'temperature');
  if (temperature !== undefined) {
    if (temperature < 0 || temperature > 2) throw invalid('body/temperature', 'must be between 0 and 2');
    req.temperature = temperature;
  }
  const topP = optNumber(body, 'top_p');
  if (topP !== undefined) {
    if (topP < 0 || topP > 1) throw invalid('body/top_p', 'must be between 0 and 1');
    req.topP = topP;
  }
  const topK = optInteger(body, 'top_k');
  if (topK !== undefined) req.topK = topK;
  const stop = stopList(body.stop, 'body/stop');
  if (stop) req.stop = stop;
  const seed = optInteger(body, 'seed', 'body', Number.MIN_SAFE_INTEGER);
  if (seed !== undefined) req.seed = seed;
  const fp = optNumber(body, 'frequency_penalty');
  if (fp !== undefined) req.frequencyPenalty = fp;
  const pp = optNumber(body, 'presence_penalty');
  if (pp !== undefined) req.presencePenalty = pp;
  const tools = parseOpenAITools(body.tools ?? legacyFunctions(body.functions), 'body/tools');
  if (tools && tools.length > 0) req.tools = tools;
  const tc = parseOpenAIToolChoice(body.tool_choice ?? legacyFunctionCall(body.function_call), 'body/tool_choice');
  if (tc !== undefined) req.toolChoice = tc;
  const ptc = optBoolean(body, 'parallel_tool_calls');
  if (ptc !== undefined) req.parallelToolCalls = ptc;
  const rf = parseResponseFormat(body.response_format, 'body/response_format');
  if (rf) req.responseFormat = rf;
  const thinking = parseOpenAIThinking(body);
  if (thinking) req.thinking = thinking;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    if (!isObject(body.stream_options)) throw invalid('body/stream_options', 'must be an object');
    if (body.stream_options.include_usage === true) req.includeUsage = true;
  }
  const user = optString(body, 'user');
  if (user !== undefined) req.user = user;
  const extra = extraFields(body, KNOWN);
  if (extra) req.extra = extra;
  return req;
}

function legacyFunctions(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  return v.map((f) => ({ type: 'function', function: f }));
}

function legacyFunctionCall(v: unknown): unknown {
  if (v === 'auto' || v === 'none') return v;
  if (isObject(v) && typeof v.name === 'string') return { type: 'function', function: { name: v.name } };
  return v;
}

// ----------------------------------------------------------------------------- response rendering

export function openAIUsage(u: Usage): Record<string, unknown> {
  const out: Record<string, unknown> = {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
  };
  if (u.cachedInputTokens !== undefined) out.prompt_tokens_details = { cached_tokens: u.cachedInputTokens };
  if (u.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: u.reasoningTokens };
  return out;
}

/** Canonical content parts → OpenAI message content (string when text only). */
export function openAIContent(parts: ContentPart[]): string | Record<string, unknown>[] | null {
  if (parts.length === 0) return null;
  if (parts.every((p) => p.type === 'text')) return textOf(parts);
  return parts.map((p) =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : { type: 'image_url', image_url: p.detail ? { url: imageToUrl(p), detail: p.detail } : { url: imageToUrl(p) } },
  );
}

function renderResponse(res: CanonicalResponse, opts: RenderOptions): unknown {
  const message: Record<string, unknown> = { role: 'assistant', content: res.content.length > 0 ? textOf(res.content) : null };
  if (res.reasoning) message.reasoning_content = res.reasoning;
  if (res.toolCalls.length > 0) {
    message.tool_calls = res.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  message.refusal = null;
  return {
    id: opts.id ?? (res.id.startsWith('chatcmpl') ? res.id : `chatcmpl-${res.id}`),
    object: 'chat.completion',
    created: res.created,
    model: opts.model ?? res.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: stopToOpenAI(res.stopReason) }],
    usage: openAIUsage(res.usage),
  };
}

// ----------------------------------------------------------------------------- streaming

function createStreamEncoder(opts: StreamOptions): StreamEncoder {
  const id = opts.id ?? newId('chatcmpl-');
  const created = opts.created ?? nowSeconds();
  const model = opts.model;
  const usage = emptyUsage();
  let started = false;
  let ended = false;
  const toolIds = new Map<number, string>();

  const frame = (delta: Record<string, unknown>, finish: string | null = null): string => {
    const obj: Record<string, unknown> = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (opts.includeUsage) obj.usage = null;
    return sseData(obj);
  };
  const begin = (out: string[]) => {
    if (started) return;
    started = true;
    out.push(frame({ role: 'assistant', content: '' }));
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
          if (c.text) out.push(frame({ content: c.text }));
          break;
        case 'reasoning':
          begin(out);
          if (c.text) out.push(frame({ reasoning_content: c.text }));
          break;
        case 'tool_call': {
          begin(out);
          const call: Record<string, unknown> = { index: c.index };
          if (!toolIds.has(c.index)) {
            const tid = c.id || `call_${newId('', 20)}`;
            toolIds.set(c.index, tid);
            call.id = tid;
            call.type = 'function';
            call.function = { name: c.name ?? '', arguments: c.argumentsDelta ?? '' };
          } else {
            call.function = { arguments: c.argumentsDelta ?? '' };
          }
          out.push(frame({ tool_calls: [call] }));
          break;
        }
        case 'finish':
          begin(out);
          out.push(frame({}, stopToOpenAI(c.stopReason)));
          break;
        case 'usage':
          mergeUsage(usage, c.usage);
          break;
      }
      return out;
    },
    end(): string[] {
      if (ended) return [];
      const out: string[] = [];
      begin(out);
      ended = true;
      if (opts.includeUsage) {
        out.push(sseData({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: openAIUsage(usage) }));
      }
      out.push('data: [DONE]\n\n');
      return out;
    },
    error(message: string, status = 502): string[] {
      if (ended) return [];
      ended = true;
      return [sseData({ error: { message, type: openAIErrorType(status), code: status } }), 'data: [DONE]\n\n'];
    },
    usage: () => ({ ...usage }),
  };
}

// ----------------------------------------------------------------------------- errors

export function openAIErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function renderOpenAIErrorBody(err: HttpError): unknown {
  const code = err.code ?? null;
  return { error: { message: err.message, type: openAIErrorType(err.status), param: null, code } };
}

export const openaiChat: WireFormat = {
  streamContentType: 'text/event-stream',
  parseRequest: parseOpenAIChatRequest,
  renderResponse,
  createStreamEncoder,
  renderErrorBody: renderOpenAIErrorBody,
};

