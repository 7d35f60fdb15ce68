/**
 * Anthropic Messages upstreams: `POST {base}/v1/messages`, `GET /v1/models`, `x-api-key` and
 * `anthropic-version`. Anthropic has no embeddings API.
 */
import {
  textOf,
  type CanonicalChunk,
  type CanonicalRequest,
  type CanonicalResponse,
  type ContentPart,
  type StopReason,
  type Usage,
} from '../canonical.js';
import { estimateTokens } from '../translate/tokens.js';
import { isObject, newId, nowSeconds, parseArguments } from '../translate/common.js';
import { anthropicCapabilities } from './capabilities.js';
import { getJson, runChat } from './call.js';
import { UpstreamError } from './errors.js';
import { joinUrl, type UpstreamHttpResponse } from './http.js';
import { parseEventJson, sseEvents } from './stream.js';
import type { ProviderAccount, ProviderAdapter, ProviderConnection } from './types.js';

const DEFAULT_BASE = 'https://api.anthropic.com';
const API_VERSION = '2023-06-01';
const DEFAULT_MAX_TOKENS = 4096;
const EMPTY_TEXT = '(empty)';

/** `{base}/v1/<path>`, whether or not the configured base already ends in /v1. */
function url(conn: ProviderConnection, path: string): string {
  const base = (conn.baseUrl || DEFAULT_BASE).replace(/\/+$/, '');
  return joinUrl(/\/v1$/.test(base) ? base : `${base}/v1`, path);
}

function headers(conn: ProviderConnection, account: ProviderAccount): Record<string, string> {
  const h: Record<string, string> = { 'anthropic-version': API_VERSION, ...(conn.headers ?? {}) };
  if (account.apiKey) h['x-api-key'] = account.apiKey;
  return h;
}

function budgetFor(effort: string | undefined): number {
  switch (effort) {
    case 'minimal':
      return 1024;
    case 'low':
      return 2048;
    case 'high':
      return 24_576;
    default:
      return 8192;
  }
}

/** Not only white space (what `trim() !== ''` tells, without a trimmed copy of every text). */
const NOT_BLANK = /\S/;

/** The parts as Anthropic content blocks, appended to `out`. */
function blocksOf(parts: ContentPart[], out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  for (const p of parts) {
    if (p.type === 'text') {
      if (NOT_BLANK.test(p.text)) out.push({ type: 'text', text: p.text });
    } else if (p.source.type === 'base64') {
      out.push({ type: 'image', source: { type: 'base64', media_type: p.source.mediaType, data: p.source.data } });
    } else {
      out.push({ type: 'image', source: { type: 'url', url: p.source.url } });
    }
  }
  return out;
}

export function encodeAnthropicRequest(req: CanonicalRequest, defaultMaxTokens = DEFAULT_MAX_TOKENS): Record<string, unknown> {
  const system: string[] = req.system ? [req.system] : [];
  const messages: { role: 'user' | 'assistant'; content: Record<string, unknown>[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Record<string, unknown>[]) => {
    const last = messages[messages.length - 1];
    // Anthropic wants alternating roles: merge neighbours of the same role.
    if (last && last.role === role) {
      // tool_result blocks must come first in a user message.
      if (role === 'user' && blocks.some((b) => b.type === 'tool_result')) last.content = [...blocks.filter((b) => b.type === 'tool_result'), ...last.content, ...blocks.filter((b) => b.type !== 'tool_result')];
      else last.content.push(...blocks);
    } else messages.push({ role, content: blocks });
  };
  for (const m of req.messages) {
    switch (m.role) {
      case 'system':
        // A mid-conversation system message has no place in Messages: it joins the system prompt.
        system.push(textOf(m.content));
        break;
      case 'user':
        push('user', blocksOf(m.content));
        break;
      case 'assistant': {
        const blocks: Record<string, unknown>[] = [];
        if (m.reasoning && m.reasoningSignature) blocks.push({ type: 'thinking', thinking: m.reasoning, signature: m.reasoningSignature });
        blocksOf(m.content, blocks);
        if (m.toolCalls) for (const c of m.toolCalls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: parseArguments(c.arguments) });
        push('assistant', blocks);
        break;
      }
      case 'tool': {
        const content = blocksOf(m.content);
        const block: Record<string, unknown> = { type: 'tool_result', tool_use_id: m.toolCallId, content: content.length > 0 ? content : '' };
        if (m.isError) block.is_error = true;
        push('user', [block]);
        break;
      }
    }
  }
  if (messages.length === 0 || messages[0]!.role !== 'user') messages.unshift({ role: 'user', content: [{ type: 'text', text: EMPTY_TEXT }] });
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    // Empty messages are rejected; the final assistant message may be empty-ish (prefill) but not blockless.
    if (m.content.length === 0 && !(i === messages.length - 1 && m.role === 'assistant')) m.content.push({ type: 'text', text: EMPTY_TEXT });
  }
  if (messages.length > 1 && messages[messages.length - 1]!.role === 'assistant' && messages[messages.length - 1]!.content.length === 0) messages.pop();

  if (req.responseFormat && req.responseFormat.type !== 'text') {
    system.push(
      req.responseFormat.type === 'json_schema'
        ? `Respond with a single JSON value that matches this JSON Schema, and nothing else:\n${JSON.stringify(req.responseFormat.schema)}`
        : 'Respond with a single JSON object and nothing else.',
    );
  }

  const body: Record<string, unknown> = {};
  if (req.sourceFormat === 'anthropic' && req.extra) Object.assign(body, req.extra);
  body.model = req.model;
  let maxTokens = req.maxTokens ?? defaultMaxTokens;
  const systemText = system.filter((s) => s !== '').join('\n\n');
  if (systemText) body.system = systemText;
  body.messages = messages;
  if (req.thinking) {
    if (!req.thinking.enabled) body.thinking = { type: 'disabled' };
    else {
      const budget = Math.max(1024, req.thinking.budgetTokens ?? budgetFor(req.thinking.effort));
      if (maxTokens <= budget) maxTokens = budget + (req.maxTokens ?? defaultMaxTokens);
      body.thinking = { type: 'enabled', budget_tokens: budget };
    }
  }
  body.max_tokens = maxTokens;
  const thinkingOn = req.thinking?.enabled === true;
  // Extended thinking requires temperature 1 and no top_k.
  if (req.temperature !== undefined && !thinkingOn) body.temperature = Math.min(1, Math.max(0, req.temperature));
  if (req.topP !== undefined && !thinkingOn) body.top_p = req.topP;
  if (req.topK !== undefined && !thinkingOn) body.top_k = req.topK;
  if (req.stop && req.stop.length > 0) body.stop_sequences = req.stop;
  if (req.stream) body.stream = true;
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.parameters }));
    const tc = req.toolChoice;
    let choice: Record<string, unknown> | undefined;
    if (tc === 'none') choice = { type: 'none' };
    else if (tc === 'required') choice = { type: 'any' };
    else if (typeof tc === 'object') choice = { type: 'tool', name: tc.name };
    else if (req.parallelToolCalls === false) choice = { type: 'auto' };
    if (choice && choice.type !== 'none' && req.parallelToolCalls === false) choice.disable_parallel_tool_use = true;
    if (choice) body.tool_choice = choice;
  }
  if (req.user !== undefined) body.metadata = { user_id: req.user };
  return body;
}

export function stopFromAnthropic(r: unknown): StopReason {
  switch (r) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Anthropic usage → canonical (input_tokens there excludes cache reads and writes). */
export function decodeAnthropicUsage(u: unknown): Partial<Usage> | undefined {
  if (!isObject(u)) return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const out: Partial<Usage> = {};
  const input = num(u.input_tokens);
  const read = num(u.cache_read_input_tokens);
  const created = num(u.cache_creation_input_tokens);
  if (input !== undefined) out.inputTokens = input + (read ?? 0) + (created ?? 0);
  if (read !== undefined) out.cachedInputTokens = read;
  if (created !== undefined) out.cacheCreationInputTokens = created;
  const output = num(u.output_tokens);
  if (output !== undefined) out.outputTokens = output;
  return out;
}

export function decodeAnthropicResponse(json: unknown, requestedModel: string): CanonicalResponse {
  if (!isObject(json)) throw new UpstreamError('garbage', 'upstream answer is not a JSON object');
  if (json.type === 'error') {
    const e = isObject(json.error) ? json.error : {};
    throw new UpstreamError('http', `upstream reported an error: ${String(e.message ?? 'unknown')}`, { status: 502, upstreamMessage: String(e.message ?? ''), upstreamCode: typeof e.type === 'string' ? e.type : undefined });
  }
  if (!Array.isArray(json.content)) throw new UpstreamError('garbage', 'upstream answer has no content array');
  const res: CanonicalResponse = {
    id: typeof json.id === 'string' ? json.id : newId('msg_'),
    model: typeof json.model === 'string' ? json.model : requestedModel,
    created: nowSeconds(),
    content: [],
    toolCalls: [],
    stopReason: stopFromAnthropic(json.stop_reason),
    usage: { inputTokens: 0, outputTokens: 0, ...(decodeAnthropicUsage(json.usage) ?? {}) },
  };
  if (typeof json.stop_sequence === 'string') res.stopSequence = json.stop_sequence;
  for (const b of json.content) {
    if (!isObject(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') {
      if (b.text !== '') res.content.push({ type: 'text', text: b.text });
    } else if (b.type === 'thinking') {
      if (typeof b.thinking === 'string') res.reasoning = (res.reasoning ?? '') + b.thinking;
      if (typeof b.signature === 'string') res.reasoningSignature = b.signature;
    } else if (b.type === 'tool_use') {
      res.toolCalls.push({ id: String(b.id ?? newId('toolu_')), name: String(b.name ?? ''), arguments: JSON.stringify(isObject(b.input) ? b.input : {}) });
    }
  }
  return res;
}

const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export async function* decodeAnthropicStream(res: UpstreamHttpResponse): AsyncGenerator<CanonicalChunk> {
  /** content block index → tool index (tool calls are numbered 0, 1, 2 … in order). */
  const toolIndex = new Map<number, number>();
  let tools = 0;
  let stopped = false;
  let stop: StopReason = 'stop';
  let stopSequence: string | undefined;
  for await (const ev of sseEvents(res.body)) {
    if (!ev.data.trim()) continue;
    const obj = parseEventJson(ev.data, 'anthropic');
    const type = obj.type ?? ev.event;
    switch (type) {
      case 'message_start': {
        const m = isObject(obj.message) ? obj.message : {};
        yield { type: 'start', id: typeof m.id === 'string' ? m.id : undefined, model: typeof m.model === 'string' ? m.model : undefined, usage: decodeAnthropicUsage(m.usage) };
        break;
      }
      case 'content_block_start': {
        const b = isObject(obj.content_block) ? obj.content_block : {};
        const index = Number(obj.index ?? 0);
        if (b.type === 'tool_use') {
          const ti = tools++;
          toolIndex.set(index, ti);
          const input = isObject(b.input) && Object.keys(b.input).length > 0 ? JSON.stringify(b.input) : undefined;
          yield { type: 'tool_call', index: ti, id: String(b.id ?? newId('toolu_')), name: String(b.name ?? ''), argumentsDelta: input };
        } else if (b.type === 'text' && typeof b.text === 'string' && b.text !== '') {
          yield { type: 'text', text: b.text };
        } else if (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking !== '') {
          yield { type: 'reasoning', text: b.thinking };
        }
        break;
      }
      case 'content_block_delta': {
        const d = isObject(obj.delta) ? obj.delta : {};
        const index = Number(obj.index ?? 0);
        if (d.type === 'text_delta' && typeof d.text === 'string') {
          if (d.text !== '') yield { type: 'text', text: d.text };
        } else if (d.type === 'thinking_delta' && typeof d.thinking === 'string') {
          yield { type: 'reasoning', text: d.thinking };
        } else if (d.type === 'signature_delta' && typeof d.signature === 'string') {
          yield { type: 'reasoning', text: '', signature: d.signature };
        } else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
          const ti = toolIndex.get(index);
          if (ti !== undefined && d.partial_json !== '') yield { type: 'tool_call', index: ti, argumentsDelta: d.partial_json };
        }
        break;
      }
      case 'message_delta': {
        const d = isObject(obj.delta) ? obj.delta : {};
        if (d.stop_reason !== undefined && d.stop_reason !== null) stop = stopFromAnthropic(d.stop_reason);
        if (typeof d.stop_sequence === 'string') stopSequence = d.stop_sequence;
        const u = decodeAnthropicUsage(obj.usage);
        if (u) {
          // message_delta usage may omit input_tokens; do not let the cache fields alone overwrite the prompt count.
          if (!(isObject(obj.usage) && typeof obj.usage.input_tokens === 'number')) delete u.inputTokens;
          yield { type: 'usage', usage: u };
        }
        break;
      }
      case 'message_stop':
        stopped = true;
        break;
      case 'error': {
        const e = isObject(obj.error) ? obj.error : {};
        const etype = typeof e.type === 'string' ? e.type : 'api_error';
        throw new UpstreamError('http', `upstream stream error: ${String(e.message ?? etype)}`, { status: ERROR_STATUS[etype] ?? 502, upstreamMessage: String(e.message ?? ''), upstreamCode: etype });
      }
      default:
        break; // ping, content_block_stop, unknown future events
    }
    if (stopped) break;
  }
  if (!stopped) throw new UpstreamError('truncated', 'anthropic stream ended without message_stop');
  const fin: CanonicalChunk = { type: 'finish', stopReason: stop };
  if (stopSequence) fin.stopSequence = stopSequence;
  yield fin;
}

export const anthropicProvider: ProviderAdapter = {
  kind: 'anthropic',
  label: 'Anthropic Messages',
  defaultBaseUrl: DEFAULT_BASE,
  authHeader: 'x-api-key',
  chat: (conn, account, req, opts) => {
    const caps = anthropicCapabilities(req.model);
    return runChat({
      conn,
      url: url(conn, '/messages'),
      headers: headers(conn, account),
      body: encodeAnthropicRequest(req, caps.maxOutputTokens ?? DEFAULT_MAX_TOKENS),
      stream: req.stream,
      opts,
      estimatePrompt: () => estimateTokens(req),
      decodeResponse: (json) => decodeAnthropicResponse(json, req.model),
      decodeStream: (res) => decodeAnthropicStream(res),
    });
  },
  embeddings: async () => {
    throw new UpstreamError('unsupported', 'Anthropic providers have no embeddings API');
  },
  listModels: async (conn, account, opts) => {
    const json = await getJson(conn, url(conn, '/models?limit=1000'), headers(conn, account), opts);
    if (!isObject(json) || !Array.isArray(json.data)) throw new UpstreamError('garbage', 'upstream model list has no data array');
    return json.data
      .filter(isObject)
      .filter((m) => typeof m.id === 'string')
      .map((m) => ({ id: m.id as string, type: 'chat' as const, ...(typeof m.display_name === 'string' ? { displayName: m.display_name } : {}) }));
  },
  capabilities: anthropicCapabilities,
};
