/**
 * OpenAI Responses, client side: `POST /v1/responses` bodies in, `response` JSON and the `response.*`
 * SSE event family out. The gateway keeps no server-side conversation state, so
 * `previous_response_id` is refused with 400 (send the whole `input`).
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
} from './common.js';
import { openAIErrorType } from './openai-chat.js';
import { sseEvent } from './sse.js';
import type { ParseOptions, RenderOptions, StreamEncoder, StreamOptions, WireFormat } from './types.js';

const KNOWN = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_output_tokens',
  'temperature',
  'top_p',
  'stream',
  'reasoning',
  'text',
  'user',
  'previous_response_id',
  'store',
  'metadata',
  'truncation',
  'include',
  'stream_options',
]);

// ----------------------------------------------------------------------------- request parsing

function parseContent(v: unknown, path: string): ContentPart[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v === '' ? [] : [{ type: 'text', text: v }];
  if (!Array.isArray(v)) throw invalid(path, 'must be a string or an array of content parts');
  const out: ContentPart[] = [];
  v.forEach((p, i) => {
    const pp = `${path}/${i}`;
    if (!isObject(p)) throw invalid(pp, 'must be an object');
    switch (p.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        if (typeof p.text !== 'string') throw invalid(`${pp}/text`, 'must be a string');
        out.push({ type: 'text', text: p.text });
        break;
      case 'refusal':
        if (typeof p.refusal === 'string') out.push({ type: 'text', text: p.refusal });
        break;
      case 'input_image': {
        const url = typeof p.image_url === 'string' ? p.image_url : isObject(p.image_url) ? p.image_url.url : undefined;
        if (typeof url !== 'string' || url === '') throw invalid(`${pp}/image_url`, 'must be a URL or data URL (file_id is not supported)');
        out.push(imageFromUrl(url, typeof p.detail === 'string' ? p.detail : undefined));
        break;
      }
      default:
        throw invalid(`${pp}/type`, `content type ${JSON.stringify(p.type)} is not supported (input_text, input_image, output_text)`);
    }
  });
  return out;
}

function parseInput(v: unknown, instructions: string | undefined): { system?: string; messages: Message[] } {
  const system: string[] = [];
  if (instructions) system.push(instructions);
  const messages: Message[] = [];
  if (typeof v === 'string') {
    messages.push({ role: 'user', content: v === '' ? [] : [{ type: 'text', text: v }] });
    return { system: system.length ? system.join('\n\n') : undefined, messages };
  }
  if (!Array.isArray(v)) throw invalid('body/input', 'must be a string or an array of input items');
  if (v.length === 0) throw invalid('body/input', 'must contain at least one item');
  let pendingReasoning: { text?: string; signature?: string } | undefined;
  const lastAssistant = (): AssistantMessage => {
    const last = messages[messages.length - 1];
    if (last && last.role === 'assistant') return last;
    const a: AssistantMessage = { role: 'assistant', content: [] };
    if (pendingReasoning) {
      if (pendingReasoning.text) a.reasoning = pendingReasoning.text;
      if (pendingReasoning.signature) a.reasoningSignature = pendingReasoning.signature;
      pendingReasoning = undefined;
    }
    messages.push(a);
    return a;
  };
  v.forEach((item, i) => {
    const ip = `body/input/${i}`;
    if (!isObject(item)) throw invalid(ip, 'must be an object');
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        const content = parseContent(item.content, `${ip}/content`);
        switch (item.role) {
          case 'system':
          case 'developer':
            if (messages.length === 0) system.push(textOf(content));
            else messages.push({ role: 'system', content: [{ type: 'text', text: textOf(content) }] });
            break;
          case 'user':
            messages.push({ role: 'user', content });
            break;
          case 'assistant':
            lastAssistant().content.push(...content);
            break;
          default:
            throw invalid(`${ip}/role`, 'must be one of user, assistant, system, developer');
        }
        break;
      }
      case 'function_call': {
        if (typeof item.name !== 'string' || item.name === '') throw invalid(`${ip}/name`, 'must be a non-empty string');
        const id = typeof item.call_id === 'string' && item.call_id !== '' ? item.call_id : typeof item.id === 'string' ? item.id : '';
        if (!id) throw invalid(`${ip}/call_id`, 'is required');
        (lastAssistant().toolCalls ??= []).push({ id, name: item.name, arguments: argumentsText(item.arguments) });
        break;
      }
      case 'function_call_output': {
        if (typeof item.call_id !== 'string' || item.call_id === '') throw invalid(`${ip}/call_id`, 'is required');
        const content = typeof item.output === 'string' ? [{ type: 'text' as const, text: item.output }] : parseContent(item.output, `${ip}/output`);
        messages.push({ role: 'tool', toolCallId: item.call_id, content });
        break;
      }
      case 'reasoning': {
        const summary = Array.isArray(item.summary)
          ? item.summary.map((s) => (isObject(s) && typeof s.text === 'string' ? s.text : '')).join('\n')
          : '';
        pendingReasoning = { text: summary || undefined, signature: typeof item.encrypted_content === 'string' ? item.encrypted_content : undefined };
        break;
      }
      case 'item_reference':
        throw invalid(`${ip}/type`, 'item_reference needs stored responses, which this gateway does not keep');
      default:
        throw invalid(`${ip}/type`, `input item type ${JSON.stringify(type)} is not supported`);
    }
  });
  return { system: system.length ? system.join('\n\n') : undefined, messages: normaliseToolTurns(messages) };
}

function parseTools(v: unknown): ToolDefinition[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid('body/tools', 'must be an array');
  return v.map((t, i) => {
    const tp = `body/tools/${i}`;
    if (!isObject(t)) throw invalid(tp, 'must be an object');
    if (t.type !== 'function') throw invalid(`${tp}/type`, `tool type ${JSON.stringify(t.type)} is not supported by this gateway (function)`);
    if (typeof t.name !== 'string' || !/^[a-zA-Z0-9_.:-]{1,128}$/.test(t.name)) throw invalid(`${tp}/name`, 'must be 1-128 letters, digits, _ . : or -');
    if (t.parameters !== undefined && t.parameters !== null && !isObject(t.parameters)) throw invalid(`${tp}/parameters`, 'must be a JSON Schema object');
    const d: ToolDefinition = { name: t.name, parameters: (t.parameters as Record<string, unknown>) ?? { type: 'object', properties: {} } };
    if (typeof t.description === 'string') d.description = t.description;
    return d;
  });
}

function parseToolChoice(v: unknown): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none' || v === 'required') return v;
  if (isObject(v) && v.type === 'function' && typeof v.name === 'string' && v.name !== '') return { name: v.name };
  throw invalid('body/tool_choice', 'must be "auto", "none", "required" or {type:"function",name}');
}

function parseTextFormat(v: unknown): ResponseFormat | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid('body/text', 'must be an object');
  const f = v.format;
  if (f === undefined || f === null) return undefined;
  if (!isObject(f)) throw invalid('body/text/format', 'must be an object');
  if (f.type === 'text' || f.type === 'json_object') return { type: f.type };
  if (f.type === 'json_schema') {
    if (!isObject(f.schema)) throw invalid('body/text/format/schema', 'must be an object');
    const rf: ResponseFormat = { type: 'json_schema', schema: f.schema };
    if (typeof f.name === 'string') rf.name = f.name;
    if (typeof f.strict === 'boolean') rf.strict = f.strict;
    return rf;
  }
  throw invalid('body/text/format/type', 'must be text, json_object or json_schema');
}

function parseReasoning(v: unknown): ThinkingConfig | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw invalid('body/reasoning', 'must be an object');
  const e = v.effort;
  if (e === undefined || e === null) return undefined;
  if (e === 'none') return { enabled: false };
  if (e === 'minimal' || e === 'low' || e === 'medium' || e === 'high') return { enabled: true, effort: e };
  throw invalid('body/reasoning/effort', 'must be none, minimal, low, medium or high');
}

export function parseResponsesRequest(raw: unknown, opts: ParseOptions = {}): CanonicalRequest {
  const body = requireObject(raw);
  const model = opts.model ?? body.model;
  if (typeof model !== 'string' || model.trim() === '') throw invalid('body/model', 'is required (a string)');
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    throw invalid('body/previous_response_id', 'is not supported: this gateway stores no responses; send the whole conversation in input');
  }
  if (body.input === undefined || body.input === null) throw invalid('body/input', 'is required');
  const instructions = optString(body, 'instructions');
  const { system, messages } = parseInput(body.input, instructions);
  const req: CanonicalRequest = { model, messages, stream: opts.stream ?? optBoolean(body, 'stream') ?? false };
  if (system) req.system = system;
  const max = optInteger(body, 'max_output_tokens', 'body', 1);
  if (max !== undefined) req.maxTokens = max;
  const temperature = optNumber(body, 'temperature');
  if (temperature !== undefined) {
    if (temperature < 0 || temperature > 2) throw invalid('body/temperature', 'must be between 0 and 2');
    req.temperature = temperature;
  }
  const topP = optNumber(body, 'top_p');
  if (topP !== undefined) req.topP = topP;
  const tools = parseTools(body.tools);
  if (tools && tools.length > 0) req.tools = tools;
  const tc = parseToolChoice(body.tool_choice);
  if (tc !== undefined) req.toolChoice = tc;
  const ptc = optBoolean(body, 'parallel_tool_calls');
  if (ptc !== undefined) req.parallelToolCalls = ptc;
  const rf = parseTextFormat(body.text);
  if (rf) req.responseFormat = rf;
  const th = parseReasoning(body.reasoning);
  if (th) req.thinking = th;
  const user = optString(body, 'user');
  if (user !== undefined) req.user = user;
  req.includeUsage = true;
  const extra = extraFields(body, KNOWN);
  if (extra) req.extra = extra;
  return req;
}

// ----------------------------------------------------------------------------- response rendering

export function responsesUsage(u: Usage): Record<string, unknown> {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedInputTokens ?? 0 },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

function envelope(id: string, model: string, created: number, status: string, output: unknown[], usage: Usage | null, incomplete: string | null) {
  return {
    id,
    object: 'response',
    created_at: created,
    status,
    background: false,
    error: null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    instructions: null,
    max_output_tokens: null,
    model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: usage ? responsesUsage(usage) : null,
    user: null,
    metadata: {},
  };
}

function reasoningItem(id: string, text: string, signature?: string): Record<string, unknown> {
  const item: Record<string, unknown> = { type: 'reasoning', id, summary: text ? [{ type: 'summary_text', text }] : [] };
  if (signature) item.encrypted_content = signature;
  return item;
}

function messageItem(id: string, text: string, status = 'completed'): Record<string, unknown> {
  return { type: 'message', id, status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] };
}

function callItem(id: string, callId: string, name: string, args: string, status = 'completed'): Record<string, unknown> {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}

function renderResponse(res: CanonicalResponse, opts: RenderOptions): unknown {
  const output: unknown[] = [];
  if (res.reasoning || res.reasoningSignature) output.push(reasoningItem(newId('rs_'), res.reasoning ?? '', res.reasoningSignature));
  const text = textOf(res.content);
  if (text !== '' || res.toolCalls.length === 0) output.push(messageItem(newId('msg_'), text));
  for (const c of res.toolCalls) output.push(callItem(newId('fc_'), c.id, c.name, c.arguments));
  const incomplete = res.stopReason === 'length' ? 'max_output_tokens' : res.stopReason === 'content_filter' ? 'content_filter' : null;
  const out = envelope(opts.id ?? (res.id.startsWith('resp_') ? res.id : `resp_${res.id}`), opts.model ?? res.model, res.created, incomplete ? 'incomplete' : 'completed', output, res.usage, incomplete);
  return { ...out, output_text: text };
}

// ----------------------------------------------------------------------------- streaming

function createStreamEncoder(opts: StreamOptions): StreamEncoder {
  const id = opts.id ?? newId('resp_');
  const created = opts.created ?? nowSeconds();
  const usage = emptyUsage();
  let seq = 0;
  let started = false;
  let ended = false;
  let stop: CanonicalChunk & { type: 'finish' } = { type: 'finish', stopReason: 'stop' };
  const output: Record<string, unknown>[] = [];
  /** The item currently receiving deltas. */
  let current: { kind: 'reasoning' | 'message' | 'call'; index: number; item: Record<string, unknown>; text: string; toolIndex?: number } | null = null;

  const ev = (type: string, data: Record<string, unknown>) => sseEvent(type, { type, sequence_number: seq++, ...data });
  const begin = (out: string[]) => {
    if (started) return;
    started = true;
    const env = envelope(id, opts.model, created, 'in_progress', [], null, null);
    out.push(ev('response.created', { response: env }));
    out.push(ev('response.in_progress', { response: env }));
  };
  const closeCurrent = (out: string[]) => {
    if (!current) return;
    const c = current;
    current = null;
    const item = c.item;
    if (c.kind === 'message') {
      const part = { type: 'output_text', text: c.text, annotations: [], logprobs: [] };
      out.push(ev('response.output_text.done', { item_id: item.id, output_index: c.index, content_index: 0, text: c.text, logprobs: [] }));
      out.push(ev('response.content_part.done', { item_id: item.id, output_index: c.index, content_index: 0, part }));
      const done = messageItem(item.id as string, c.text);
      output[c.index] = done;
      out.push(ev('response.output_item.done', { output_index: c.index, item: done }));
    } else if (c.kind === 'reasoning') {
      const part = { type: 'summary_text', text: c.text };
      out.push(ev('response.reasoning_summary_text.done', { item_id: item.id, output_index: c.index, summary_index: 0, text: c.text }));
      out.push(ev('response.reasoning_summary_part.done', { item_id: item.id, output_index: c.index, summary_index: 0, part }));
      const done = reasoningItem(item.id as string, c.text, item.encrypted_content as string | undefined);
      output[c.index] = done;
      out.push(ev('response.output_item.done', { output_index: c.index, item: done }));
    } else {
      const args = c.text === '' ? '{}' : c.text;
      out.push(ev('response.function_call_arguments.done', { item_id: item.id, output_index: c.index, arguments: args }));
      const done = callItem(item.id as string, item.call_id as string, item.name as string, args);
      output[c.index] = done;
      out.push(ev('response.output_item.done', { output_index: c.index, item: done }));
    }
  };
  const open = (out: string[], kind: 'reasoning' | 'message' | 'call', item: Record<string, unknown>, toolIndex?: number) => {
    closeCurrent(out);
    const index = output.length;
    output.push(item);
    current = { kind, index, item, text: '', toolIndex };
    out.push(ev('response.output_item.added', { output_index: index, item }));
    if (kind === 'message') {
      out.push(ev('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }));
    } else if (kind === 'reasoning') {
      out.push(ev('response.reasoning_summary_part.added', { item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } }));
    }
  };

  const finalResponse = (status: string) => {
    const incomplete = stop.stopReason === 'length' ? 'max_output_tokens' : stop.stopReason === 'content_filter' ? 'content_filter' : null;
    return envelope(id, opts.model, created, incomplete && status === 'completed' ? 'incomplete' : status, output, usage, incomplete);
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
          if (current?.kind !== 'message') open(out, 'message', { type: 'message', id: newId('msg_'), status: 'in_progress', role: 'assistant', content: [] });
          current!.text += c.text;
          out.push(ev('response.output_text.delta', { item_id: current!.item.id, output_index: current!.index, content_index: 0, delta: c.text, logprobs: [] }));
          break;
        case 'reasoning':
          begin(out);
          if (current?.kind !== 'reasoning') open(out, 'reasoning', { type: 'reasoning', id: newId('rs_'), summary: [] });
          if (c.signature) current!.item.encrypted_content = c.signature;
          if (c.text) {
            current!.text += c.text;
            out.push(ev('response.reasoning_summary_text.delta', { item_id: current!.item.id, output_index: current!.index, summary_index: 0, delta: c.text }));
          }
          break;
        case 'tool_call':
          begin(out);
          if (current?.kind !== 'call' || current.toolIndex !== c.index) {
            open(out, 'call', { type: 'function_call', id: newId('fc_'), call_id: c.id || newId('call_'), name: c.name ?? '', arguments: '', status: 'in_progress' }, c.index);
          }
          if (c.argumentsDelta) {
            current!.text += c.argumentsDelta;
            out.push(ev('response.function_call_arguments.delta', { item_id: current!.item.id, output_index: current!.index, delta: c.argumentsDelta }));
          }
          break;
        case 'finish':
          begin(out);
          closeCurrent(out);
          stop = c;
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
      closeCurrent(out);
      ended = true;
      const res = finalResponse('completed');
      out.push(ev(res.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: res }));
      return out;
    },
    error(message: string, status = 502): string[] {
      if (ended) return [];
      ended = true;
      const out: string[] = [];
      begin(out);
      const res = { ...finalResponse('failed'), error: { code: openAIErrorType(status), message } };
      out.push(ev('response.failed', { response: res }));
      return out;
    },
    usage: () => ({ ...usage }),
  };
}

function renderErrorBody(err: HttpError): unknown {
  return { error: { message: err.message, type: openAIErrorType(err.status), param: null, code: err.code ?? null } };
}

export const openaiResponses: WireFormat = {
  streamContentType: 'text/event-stream',
  parseRequest: parseResponsesRequest,
  renderResponse,
  createStreamEncoder,
  renderErrorBody,
};
