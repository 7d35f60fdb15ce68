/**
 * OpenAI-compatible upstreams (any base URL): `POST {base}/chat/completions`, `/embeddings`,
 * `GET /models`, `Authorization: Bearer`. Streams ask for usage (`stream_options.include_usage`).
 */
import {
  textOf,
  type CanonicalChunk,
  type CanonicalEmbeddingsRequest,
  type CanonicalEmbeddingsResponse,
  type CanonicalRequest,
  type CanonicalResponse,
  type ContentPart,
  type Usage,
} from '../canonical.js';
import { estimateTokens } from '../translate/tokens.js';
import { argumentsText, isObject, newId, nowSeconds, stopFromOpenAI } from '../translate/common.js';
import { openAIContent } from '../translate/openai-chat.js';
import { openaiCapabilities } from './capabilities.js';
import { getJson, postForm, postJson, postJsonForStream, runChat } from './call.js';
import { encodeEmbeddingItemsModalityKeyed } from './embedding-items.js';
import { UpstreamError } from './errors.js';
import { errorInfo, joinUrl, type UpstreamHttpResponse } from './http.js';
import { parseEventJson, sseEvents } from './stream.js';
import type { CallOptions, ProviderAccount, ProviderAdapter, ProviderConnection, UpstreamModel } from './types.js';

const DEFAULT_BASE = 'https://api.openai.com/v1';

function baseUrl(conn: ProviderConnection): string {
  return conn.baseUrl || DEFAULT_BASE;
}

function authHeaders(conn: ProviderConnection, account: ProviderAccount): Record<string, string> {
  const h: Record<string, string> = { ...(conn.headers ?? {}) };
  if (account.apiKey) h.authorization = `Bearer ${account.apiKey}`;
  return h;
}

/** Models that reject `max_tokens` and want `max_completion_tokens` (OpenAI reasoning models). */
function wantsMaxCompletionTokens(model: string): boolean {
  return /^(o\d|gpt-5)/i.test(model);
}

function effortFromBudget(budget: number): string {
  if (budget < 2048) return 'low';
  if (budget < 12_000) return 'medium';
  return 'high';
}

function toolResultText(parts: ContentPart[]): string {
  return parts.map((p) => (p.type === 'text' ? p.text : '[image]')).join('');
}

export function encodeOpenAIRequest(req: CanonicalRequest): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [];
  if (req.system) messages.push({ role: 'system', content: req.system });
  for (const m of req.messages) {
    switch (m.role) {
      case 'system':
        messages.push({ role: 'system', content: textOf(m.content) });
        break;
      case 'user':
        messages.push({ role: 'user', content: openAIContent(m.content) ?? '' });
        break;
      case 'assistant': {
        const a: Record<string, unknown> = { role: 'assistant', content: openAIContent(m.content) };
        if (m.toolCalls && m.toolCalls.length > 0) {
          a.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: argumentsText(c.arguments) } }));
        }
        messages.push(a);
        break;
      }
      case 'tool':
        messages.push({ role: 'tool', tool_call_id: m.toolCallId, content: toolResultText(m.content) });
        break;
    }
  }
  const body: Record<string, unknown> = {};
  // Same-family extension fields first, so canonical fields win. Reasoning fields among them are
  // dropped here (the only place they can come from): thinking below decides what is sent.
  if (req.sourceFormat === 'openai' && req.extra) {
    Object.assign(body, req.extra);
    delete body.reasoning;
    delete body.reasoning_effort;
  }
  body.model = req.model;
  body.messages = messages;
  body.stream = req.stream;
  if (req.stream) body.stream_options = { include_usage: true };
  if (req.maxTokens !== undefined) body[wantsMaxCompletionTokens(req.model) ? 'max_completion_tokens' : 'max_tokens'] = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop) body.stop = req.stop;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
  if (req.presencePenalty !== undefined) body.presence_penalty = req.presencePenalty;
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters },
    }));
    if (req.toolChoice !== undefined) {
      body.tool_choice = typeof req.toolChoice === 'string' ? req.toolChoice : { type: 'function', function: { name: req.toolChoice.name } };
    }
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  }
  if (req.responseFormat) {
    const rf = req.responseFormat;
    body.response_format =
      rf.type === 'json_schema'
        ? { type: 'json_schema', json_schema: { name: rf.name ?? 'response', schema: rf.schema, ...(rf.strict !== undefined ? { strict: rf.strict } : {}) } }
        : { type: rf.type };
  }
  // Thinking off: the reasoning fields stay dropped (seed: no-thinking variant on the chat-completions path).
  if (req.thinking?.enabled) {
    const effort = req.thinking.effort ?? (req.thinking.budgetTokens !== undefined ? effortFromBudget(req.thinking.budgetTokens) : undefined);
    if (effort) body.reasoning_effort = effort;
  }
  if (req.user !== undefined) body.user = req.user;
  return body;
}

function decodeUsage(u: unknown): Partial<Usage> | undefined {
  if (!isObject(u)) return undefined;
  const out: Partial<Usage> = {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const input = num(u.prompt_tokens) ?? num(u.input_tokens);
  const output = num(u.completion_tokens) ?? num(u.output_tokens);
  if (input !== undefined) out.inputTokens = input;
  if (output !== undefined) out.outputTokens = output;
  const pd = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : isObject(u.input_tokens_details) ? u.input_tokens_details : undefined;
  const cached = pd ? num(pd.cached_tokens) : num(u.prompt_cache_hit_tokens);
  if (cached !== undefined) out.cachedInputTokens = cached;
  const cd = isObject(u.completion_tokens_details) ? u.completion_tokens_details : isObject(u.output_tokens_details) ? u.output_tokens_details : undefined;
  const reasoning = cd ? num(cd.reasoning_tokens) : undefined;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

function completeUsage(p: Partial<Usage> | undefined): Usage {
  // What `{inputTokens: 0, outputTokens: 0, ...p}` gives for decodeUsage's output (it never sets undefined), without the spread.
  const u: Usage = { inputTokens: p?.inputTokens ?? 0, outputTokens: p?.outputTokens ?? 0 };
  if (p?.cachedInputTokens !== undefined) u.cachedInputTokens = p.cachedInputTokens;
  if (p?.reasoningTokens !== undefined) u.reasoningTokens = p.reasoningTokens;
  return u;
}

export function decodeOpenAIResponse(json: unknown, requestedModel: string): CanonicalResponse {
  if (!isObject(json)) throw new UpstreamError('garbage', 'upstream answer is not a JSON object');
  if (json.error !== undefined && json.error !== null) {
    const info = errorInfo(json);
    throw new UpstreamError('http', `upstream reported an error: ${info.message ?? 'unknown'}`, { status: 502, upstreamMessage: info.message, upstreamCode: info.code });
  }
  if (!Array.isArray(json.choices) || json.choices.length === 0) throw new UpstreamError('garbage', 'upstream answer has no choices');
  const choice = json.choices[0];
  if (!isObject(choice) || !isObject(choice.message)) throw new UpstreamError('garbage', 'upstream choice has no message');
  const msg = choice.message;
  const content: ContentPart[] = [];
  if (typeof msg.content === 'string' && msg.content !== '') content.push({ type: 'text', text: msg.content });
  else if (Array.isArray(msg.content)) {
    for (const p of msg.content) if (isObject(p) && typeof p.text === 'string') content.push({ type: 'text', text: p.text });
  }
  const toolCalls = Array.isArray(msg.tool_calls)
    ? msg.tool_calls.filter(isObject).map((c) => {
        const fn = isObject(c.function) ? c.function : {};
        return { id: typeof c.id === 'string' && c.id ? c.id : newId('call_'), name: String(fn.name ?? ''), arguments: argumentsText(fn.arguments) };
      })
    : [];
  const res: CanonicalResponse = {
    id: typeof json.id === 'string' ? json.id : newId('chatcmpl-'),
    model: typeof json.model === 'string' ? json.model : requestedModel,
    created: typeof json.created === 'number' ? json.created : nowSeconds(),
    content,
    toolCalls,
    stopReason: toolCalls.length > 0 && (choice.finish_reason === 'stop' || choice.finish_reason == null) ? 'tool_calls' : stopFromOpenAI(choice.finish_reason),
    usage: completeUsage(decodeUsage(json.usage)),
  };
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') res.reasoning = reasoning;
  return res;
}

/**
 * OpenAI chunk stream → canonical chunks. Tool-call fragments are routed by index; fragments that
 * arrive before a call's id/name are held until they do (or until the stream ends).
 */
export async function* decodeOpenAIStream(res: UpstreamHttpResponse, what = 'openai'): AsyncGenerator<CanonicalChunk> {
  let started = false;
  let finished = false;
  let done = false;
  const calls = new Map<number, { announced: boolean; id?: string; name?: string; pending: string }>();
  let sawToolCall = false;
  let finishReason: unknown;
  for await (const ev of sseEvents(res.body)) {
    // After [DONE] the body is drained, not abandoned: breaking out of the loop would destroy the
    // undici body mid-read, and Node reports that as an AbortError on every stream.
    if (done) continue;
    const data = ev.data.trim();
    if (data === '') continue;
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    const obj = parseEventJson(data, what);
    if (obj.error !== undefined && obj.error !== null) {
      const info = errorInfo(obj);
      const code = isObject(obj.error) && typeof obj.error.code === 'number' ? obj.error.code : 502;
      throw new UpstreamError('http', `upstream stream error: ${info.message ?? 'unknown'}`, { status: code, upstreamMessage: info.message, upstreamCode: info.code });
    }
    if (!started) {
      started = true;
      yield { type: 'start', id: typeof obj.id === 'string' ? obj.id : undefined, model: typeof obj.model === 'string' ? obj.model : undefined };
    }
    const choices = Array.isArray(obj.choices) ? obj.choices : [];
    const choice = choices.find((c) => isObject(c) && (c.index === 0 || c.index === undefined)) as Record<string, unknown> | undefined;
    if (choice) {
      const delta = isObject(choice.delta) ? choice.delta : isObject(choice.message) ? choice.message : {};
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') yield { type: 'reasoning', text: reasoning };
      if (typeof delta.content === 'string' && delta.content !== '') yield { type: 'text', text: delta.content };
      if (Array.isArray(delta.tool_calls)) {
        for (const tc of delta.tool_calls) {
          if (!isObject(tc)) continue;
          sawToolCall = true;
          const index = typeof tc.index === 'number' ? tc.index : calls.size;
          const st = calls.get(index) ?? { announced: false, pending: '' };
          calls.set(index, st);
          const fn = isObject(tc.function) ? tc.function : {};
          if (typeof tc.id === 'string' && tc.id) st.id = tc.id;
          if (typeof fn.name === 'string' && fn.name && !st.announced) st.name = fn.name;
          const args = typeof fn.arguments === 'string' ? fn.arguments : isObject(fn.arguments) ? JSON.stringify(fn.arguments) : '';
          if (!st.announced) {
            st.pending += args;
            if (st.name) {
              st.announced = true;
              yield { type: 'tool_call', index, id: st.id ?? newId('call_'), name: st.name, argumentsDelta: st.pending || undefined };
              st.pending = '';
            }
          } else if (args) {
            yield { type: 'tool_call', index, argumentsDelta: args };
          }
        }
      }
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
        finishReason = choice.finish_reason;
        finished = true;
      }
    }
    const u = decodeUsage(obj.usage);
    if (u) yield { type: 'usage', usage: u };
  }
  // Calls whose name never came: still hand them out so nothing is lost.
  for (const [index, st] of calls) {
    if (!st.announced) yield { type: 'tool_call', index, id: st.id ?? newId('call_'), name: st.name ?? '', argumentsDelta: st.pending || undefined };
  }
  if (!finished && !done) throw new UpstreamError('truncated', `${what} stream ended without finish_reason or [DONE]`);
  const reason = sawToolCall && (finishReason === 'stop' || finishReason == null) ? 'tool_calls' : stopFromOpenAI(finishReason);
  yield { type: 'finish', stopReason: reason };
}

async function embeddings(
  conn: ProviderConnection,
  account: ProviderAccount,
  req: CanonicalEmbeddingsRequest,
  opts: CallOptions,
): Promise<CanonicalEmbeddingsResponse> {
  const body: Record<string, unknown> = {};
  if (req.input.kind !== 'items' && req.extra) Object.assign(body, req.extra);
  body.model = req.model;
  if (req.input.kind === 'items') body.input = await encodeEmbeddingItemsModalityKeyed(req.input.values, opts);
  else body.input = req.input.single ? req.input.values[0] : req.input.values;
  if (req.dimensions !== undefined) body.dimensions = req.dimensions;
  body.encoding_format = 'float';
  const json = await postJson(conn, joinUrl(baseUrl(conn), '/embeddings'), authHeaders(conn, account), body, opts);
  if (!isObject(json) || !Array.isArray(json.data)) throw new UpstreamError('garbage', 'upstream embeddings answer has no data array');
  const rows = json.data.filter(isObject).sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0));
  const vectors = rows.map((r) => {
    if (Array.isArray(r.embedding)) return r.embedding as number[];
    if (typeof r.embedding === 'string') return Array.from(new Float32Array(Buffer.from(r.embedding, 'base64').buffer.slice(0)));
    throw new UpstreamError('garbage', 'upstream embedding row has no vector');
  });
  const u = decodeUsage(json.usage);
  return { model: typeof json.model === 'string' ? json.model : req.model, vectors, usage: { inputTokens: u?.inputTokens ?? 0 } };
}

async function listModels(conn: ProviderConnection, account: ProviderAccount, opts: CallOptions): Promise<UpstreamModel[]> {
  const json = await getJson(conn, joinUrl(baseUrl(conn), '/models'), authHeaders(conn, account), opts);
  const data = isObject(json) && Array.isArray(json.data) ? json.data : Array.isArray(json) ? json : undefined;
  if (!data) throw new UpstreamError('garbage', 'upstream model list has no data array');
  return data.filter(isObject).filter((m) => typeof m.id === 'string').map((m) => {
    const caps = openaiCapabilities(m.id as string);
    const row: UpstreamModel = { id: m.id as string, type: caps.embeddings ? 'embedding' : caps.image ? 'image' : 'chat' };
    if (typeof m.context_length === 'number') row.contextLength = m.context_length;
    return row;
  });
}

export const openaiProvider: ProviderAdapter = {
  kind: 'openai',
  label: 'OpenAI-compatible',
  defaultBaseUrl: DEFAULT_BASE,
  authHeader: 'bearer',
  jsonOperation: (conn, account, path, body, opts) => postJson(conn, joinUrl(baseUrl(conn), path), authHeaders(conn, account), body, opts),
  formOperation: (conn, account, path, form, opts) => postForm(conn, joinUrl(baseUrl(conn), path), authHeaders(conn, account), form, opts),
  streamOperation: (conn, account, path, body, opts) => postJsonForStream(conn, joinUrl(baseUrl(conn), path), authHeaders(conn, account), body, opts),
  chat: (conn, account, req, opts) =>
    runChat({
      conn,
      url: joinUrl(baseUrl(conn), '/chat/completions'),
      headers: authHeaders(conn, account),
      body: encodeOpenAIRequest(req),
      stream: req.stream,
      opts,
      estimatePrompt: () => estimateTokens(req),
      decodeResponse: (json) => decodeOpenAIResponse(json, req.model),
      decodeStream: (res) => decodeOpenAIStream(res),
    }),
  embeddings,
  listModels,
  capabilities: openaiCapabilities,
};
