/**
 * Ollama chat, client side: `POST /api/chat` (and `/v1/api/chat`) bodies in, one JSON object or NDJSON
 * lines out. Unlike OmniRoute, `done:true` is written exactly once, non-streaming answers carry the
 * content, and done_reason / eval_count / prompt_eval_count are filled.
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
} from '../canonical.js';
import { argumentsText, extraFields, invalid, isObject, normaliseToolTurns, parseArguments, requireObject, stopList, collectToolCall, type PendingToolCall } from './common.js';
import { parseOpenAITools } from './openai-chat.js';
import { ndjson } from './sse.js';
import type { ParseOptions, RenderOptions, StreamEncoder, StreamOptions, WireFormat } from './types.js';

const KNOWN = new Set(['model', 'messages', 'tools', 'format', 'options', 'stream', 'think', 'keep_alive']);

function guessImageType(b64: string): string {
  if (b64.startsWith('iVBOR')) return 'image/png';
  if (b64.startsWith('/9j/')) return 'image/jpeg';
  if (b64.startsWith('R0lGOD')) return 'image/gif';
  if (b64.startsWith('UklGR')) return 'image/webp';
  return 'image/png';
}

function parseMessages(v: unknown): { system?: string; messages: Message[] } {
  if (!Array.isArray(v)) throw invalid('body/messages', 'must be an array');
  if (v.length === 0) throw invalid('body/messages', 'must contain at least one message');
  const messages: Message[] = [];
  const system: string[] = [];
  let counter = 0;
  const pending: { id: string; name: string; answered: boolean }[] = [];
  v.forEach((m, i) => {
    const mp = `body/messages/${i}`;
    if (!isObject(m)) throw invalid(mp, 'must be an object');
    if (m.content !== undefined && m.content !== null && typeof m.content !== 'string') throw invalid(`${mp}/content`, 'must be a string');
    const text = typeof m.content === 'string' ? m.content : '';
    const content: ContentPart[] = text === '' ? [] : [{ type: 'text', text }];
    if (m.images !== undefined && m.images !== null) {
      if (!Array.isArray(m.images) || !m.images.every((x) => typeof x === 'string')) throw invalid(`${mp}/images`, 'must be an array of base64 strings');
      for (const img of m.images as string[]) {
        const data = img.replace(/^data:[^,]*,/, '');
        content.push({ type: 'image', source: { type: 'base64', mediaType: guessImageType(data), data } });
      }
    }
    switch (m.role) {
      case 'system':
        if (messages.length === 0) system.push(text);
        else messages.push({ role: 'system', content: [{ type: 'text', text }] });
        break;
      case 'user':
        messages.push({ role: 'user', content });
        break;
      case 'assistant': {
        const a: AssistantMessage = { role: 'assistant', content };
        if (typeof m.thinking === 'string' && m.thinking !== '') a.reasoning = m.thinking;
        if (m.tool_calls !== undefined && m.tool_calls !== null) {
          if (!Array.isArray(m.tool_calls)) throw invalid(`${mp}/tool_calls`, 'must be an array');
          a.toolCalls = m.tool_calls.map((c, k) => {
            const fn = isObject(c) ? c.function : undefined;
            if (!isObject(fn) || typeof fn.name !== 'string' || fn.name === '') throw invalid(`${mp}/tool_calls/${k}/function/name`, 'must be a non-empty string');
            const id = isObject(c) && typeof c.id === 'string' && c.id !== '' ? c.id : `call_${counter++}`;
            pending.push({ id, name: fn.name, answered: false });
            return { id, name: fn.name, arguments: argumentsText(fn.arguments) };
          });
        }
        messages.push(a);
        break;
      }
      case 'tool': {
        const name = typeof m.tool_name === 'string' ? m.tool_name : typeof m.name === 'string' ? m.name : undefined;
        let call = typeof m.tool_call_id === 'string' ? pending.find((p) => p.id === m.tool_call_id) : undefined;
        call ??= pending.find((p) => !p.answered && (name === undefined || p.name === name));
        if (!call) throw invalid(mp, 'is a tool result without a matching assistant tool call');
        call.answered = true;
        messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: content.length > 0 ? content : [{ type: 'text', text: '' }] });
        break;
      }
      default:
        throw invalid(`${mp}/role`, 'must be one of system, user, assistant, tool');
    }
  });
  const out: { system?: string; messages: Message[] } = { messages: normaliseToolTurns(messages) };
  if (system.length > 0) out.system = system.join('\n\n');
  return out;
}

function parseThink(v: unknown): ThinkingConfig | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === true) return { enabled: true };
  if (v === false) return { enabled: false };
  if (v === 'low' || v === 'medium' || v === 'high') return { enabled: true, effort: v };
  throw invalid('body/think', 'must be a boolean or low, medium, high');
}

export function parseOllamaRequest(raw: unknown, opts: ParseOptions = {}): CanonicalRequest {
  const body = requireObject(raw);
  const model = opts.model ?? body.model;
  if (typeof model !== 'string' || model.trim() === '') throw invalid('body/model', 'is required (a string)');
  const { system, messages } = parseMessages(body.messages);
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw invalid('body/stream', 'must be a boolean');
  const req: CanonicalRequest = { model, messages, stream: opts.stream ?? body.stream === true };
  if (system !== undefined) req.system = system;
  const tools = parseOpenAITools(body.tools, 'body/tools');
  if (tools && tools.length > 0) req.tools = tools;
  if (body.format !== undefined && body.format !== null && body.format !== '') {
    if (body.format === 'json') req.responseFormat = { type: 'json_object' };
    else if (isObject(body.format)) req.responseFormat = { type: 'json_schema', name: 'response', schema: body.format };
    else throw invalid('body/format', 'must be "json" or a JSON Schema object');
  }
  const o = body.options;
  if (o !== undefined && o !== null) {
    if (!isObject(o)) throw invalid('body/options', 'must be an object');
    const n = (k: string): number | undefined => {
      const x = o[k];
      if (x === undefined || x === null) return undefined;
      if (typeof x !== 'number' || !Number.isFinite(x)) throw invalid(`body/options/${k}`, 'must be a number');
      return x;
    };
    const t = n('temperature');
    if (t !== undefined) req.temperature = t;
    const tp = n('top_p');
    if (tp !== undefined) req.topP = tp;
    const tk = n('top_k');
    if (tk !== undefined) req.topK = Math.round(tk);
    const np = n('num_predict');
    if (np !== undefined && np > 0) req.maxTokens = Math.round(np);
    const seed = n('seed');
    if (seed !== undefined) req.seed = Math.round(seed);
    const pp = n('presence_penalty');
    if (pp !== undefined) req.presencePenalty = pp;
    const fp = n('frequency_penalty');
    if (fp !== undefined) req.frequencyPenalty = fp;
    const stop = stopList(o.stop, 'body/options/stop');
    if (stop) req.stop = stop;
  }
  const think = parseThink(body.think);
  if (think) req.thinking = think;
  const extra = extraFields(body, KNOWN);
  if (extra) req.extra = extra;
  return req;
}

export function stopToOllama(r: StopReason): string {
  return r === 'length' ? 'length' : r === 'error' ? 'error' : 'stop';
}

function renderResponse(res: CanonicalResponse, opts: RenderOptions): unknown {
  const message: Record<string, unknown> = { role: 'assistant', content: textOf(res.content) };
  if (res.reasoning) message.thinking = res.reasoning;
  if (res.toolCalls.length > 0) {
    message.tool_calls = res.toolCalls.map((c) => ({ id: c.id, function: { name: c.name, arguments: parseArguments(c.arguments) } }));
  }
  return {
    model: opts.model ?? res.model,
    created_at: new Date(res.created * 1000).toISOString(),
    message,
    done: true,
    done_reason: stopToOllama(res.stopReason),
    total_duration: 0,
    load_duration: 0,
    prompt_eval_count: res.usage.inputTokens,
    prompt_eval_duration: 0,
    eval_count: res.usage.outputTokens,
    eval_duration: 0,
  };
}

function createStreamEncoder(opts: StreamOptions): StreamEncoder {
  const usage = emptyUsage();
  const calls = new Map<number, PendingToolCall>();
  let stop: StopReason | null = null;
  let ended = false;
  const started = Date.now();
  const line = (message: Record<string, unknown>, done = false, extra: Record<string, unknown> = {}) =>
    ndjson({ model: opts.model, created_at: new Date().toISOString(), message: { role: 'assistant', ...message }, done, ...extra });

  return {
    chunk(c: CanonicalChunk): string[] {
      if (ended) return [];
      switch (c.type) {
        case 'start':
          mergeUsage(usage, c.usage);
          return [];
        case 'text':
          return c.text ? [line({ content: c.text })] : [];
        case 'reasoning':
          return c.text ? [line({ content: '', thinking: c.text })] : [];
        case 'tool_call': {
          // Ollama sends whole tool calls with parsed arguments: collect by index.
          collectToolCall(calls, c);
          return [];
        }
        case 'finish':
          stop = c.stopReason;
          return [];
        case 'usage':
          mergeUsage(usage, c.usage);
          return [];
      }
      return [];
    },
    end(): string[] {
      if (ended) return [];
      ended = true;
      const out: string[] = [];
      if (calls.size > 0) {
        const tool_calls = [...calls.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([, v]) => ({ id: v.id, function: { name: v.name, arguments: parseArguments(v.args) } }));
        out.push(line({ content: '', tool_calls }));
      }
      const total = (Date.now() - started) * 1e6;
      out.push(
        line({ content: '' }, true, {
          done_reason: stopToOllama(stop ?? 'stop'),
          total_duration: total,
          load_duration: 0,
          prompt_eval_count: usage.inputTokens,
          prompt_eval_duration: 0,
          eval_count: usage.outputTokens,
          eval_duration: total,
        }),
      );
      return out;
    },
    error(message: string): string[] {
      if (ended) return [];
      ended = true;
      return [ndjson({ error: message })];
    },
    usage: () => ({ ...usage }),
  };
}

function renderErrorBody(err: HttpError): unknown {
  return { error: err.message };
}

export const ollamaChat: WireFormat = {
  streamContentType: 'application/x-ndjson',
  parseRequest: parseOllamaRequest,
  renderResponse,
  createStreamEncoder,
  renderErrorBody,
};
