/**
 * Ollama upstreams: `POST {base}/api/chat` (NDJSON stream), `/api/embed`, `GET /api/tags`. No auth by
 * default; a configured key is sent as `Authorization: Bearer` (Ollama behind a proxy, Ollama cloud).
 * Images must be inline base64, so URLs are fetched server-side.
 */
import {
  textOf,
  type CanonicalChunk,
  type CanonicalEmbeddingsRequest,
  type CanonicalEmbeddingsResponse,
  type CanonicalRequest,
  type CanonicalResponse,
  type ContentPart,
  type StopReason,
} from '../canonical.js';
import { estimateTokens } from '../translate/tokens.js';
import { isObject, newId, nowSeconds, parseArguments } from '../translate/common.js';
import { ollamaCapabilities } from './capabilities.js';
import { getJson, postJson, runChat } from './call.js';
import { inlineMedia } from './embedding-items.js';
import { UpstreamError } from './errors.js';
import { joinUrl, type UpstreamHttpResponse } from './http.js';
import { ndjsonLines, parseEventJson } from './stream.js';
import type { CallOptions, ProviderAccount, ProviderAdapter, ProviderConnection, UpstreamModel } from './types.js';

const DEFAULT_BASE = 'http://127.0.0.1:11434';

/** `{base}/api/...`; a base configured with a trailing `/api` or `/v1` is accepted too. */
function url(conn: ProviderConnection, path: string): string {
  const b = (conn.baseUrl || DEFAULT_BASE).replace(/\/+$/, '').replace(/\/(api|v1)$/, '');
  return joinUrl(b, path);
}

function headers(conn: ProviderConnection, account: ProviderAccount): Record<string, string> {
  const h: Record<string, string> = { ...(conn.headers ?? {}) };
  if (account.apiKey) h.authorization = `Bearer ${account.apiKey}`;
  return h;
}

async function split(parts: ContentPart[], opts: CallOptions): Promise<{ content: string; images: string[] }> {
  let content = '';
  const images: string[] = [];
  for (const p of parts) {
    if (p.type === 'text') content += p.text;
    else images.push((await inlineMedia(p.source, opts)).data);
  }
  return { content, images };
}

export async function encodeOllamaRequest(req: CanonicalRequest, opts: CallOptions): Promise<Record<string, unknown>> {
  const messages: Record<string, unknown>[] = [];
  if (req.system) messages.push({ role: 'system', content: req.system });
  for (const m of req.messages) {
    switch (m.role) {
      case 'system':
        messages.push({ role: 'system', content: textOf(m.content) });
        break;
      case 'user': {
        const { content, images } = await split(m.content, opts);
        messages.push(images.length > 0 ? { role: 'user', content, images } : { role: 'user', content });
        break;
      }
      case 'assistant': {
        const { content, images } = await split(m.content, opts);
        const a: Record<string, unknown> = { role: 'assistant', content };
        if (images.length > 0) a.images = images;
        if (m.reasoning) a.thinking = m.reasoning;
        if (m.toolCalls && m.toolCalls.length > 0) {
          a.tool_calls = m.toolCalls.map((c) => ({ function: { name: c.name, arguments: parseArguments(c.arguments) } }));
        }
        messages.push(a);
        break;
      }
      case 'tool':
        messages.push({ role: 'tool', content: textOf(m.content), ...(m.name ? { tool_name: m.name } : {}) });
        break;
    }
  }
  const body: Record<string, unknown> = {};
  if (req.sourceFormat === 'ollama' && req.extra) Object.assign(body, req.extra);
  body.model = req.model;
  body.messages = messages;
  body.stream = req.stream; // Ollama streams when the field is absent: always say.
  if (req.tools && req.tools.length > 0 && req.toolChoice !== 'none') {
    body.tools = req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description ?? '', parameters: t.parameters } }));
  }
  if (req.responseFormat && req.responseFormat.type !== 'text') body.format = req.responseFormat.type === 'json_schema' ? req.responseFormat.schema : 'json';
  const o: Record<string, unknown> = isObject(body.options) ? { ...body.options } : {};
  if (req.temperature !== undefined) o.temperature = req.temperature;
  if (req.topP !== undefined) o.top_p = req.topP;
  if (req.topK !== undefined) o.top_k = req.topK;
  if (req.maxTokens !== undefined) o.num_predict = req.maxTokens;
  if (req.stop) o.stop = req.stop;
  if (req.seed !== undefined) o.seed = req.seed;
  if (req.presencePenalty !== undefined) o.presence_penalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) o.frequency_penalty = req.frequencyPenalty;
  if (Object.keys(o).length > 0) body.options = o;
  if (req.thinking) body.think = req.thinking.enabled ? (req.thinking.effort && req.thinking.effort !== 'minimal' ? req.thinking.effort : true) : false;
  return body;
}

function stopFromOllama(reason: unknown, hasCalls: boolean): StopReason {
  if (reason === 'length') return 'length';
  return hasCalls ? 'tool_calls' : 'stop';
}

function usageOf(obj: Record<string, unknown>) {
  const u: { inputTokens?: number; outputTokens?: number } = {};
  if (typeof obj.prompt_eval_count === 'number') u.inputTokens = obj.prompt_eval_count;
  if (typeof obj.eval_count === 'number') u.outputTokens = obj.eval_count;
  return u;
}

function toolCallsOf(msg: Record<string, unknown>): { id: string; name: string; arguments: string }[] {
  if (!Array.isArray(msg.tool_calls)) return [];
  return msg.tool_calls.filter(isObject).map((c) => {
    const fn = isObject(c.function) ? c.function : {};
    const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(isObject(fn.arguments) ? fn.arguments : {});
    return { id: typeof c.id === 'string' && c.id ? c.id : newId('call_'), name: String(fn.name ?? ''), arguments: args };
  });
}

export function decodeOllamaResponse(json: unknown, requestedModel: string): CanonicalResponse {
  if (!isObject(json)) throw new UpstreamError('garbage', 'upstream answer is not a JSON object');
  if (typeof json.error === 'string') throw new UpstreamError('http', `upstream reported an error: ${json.error}`, { status: 502, upstreamMessage: json.error });
  if (!isObject(json.message)) throw new UpstreamError('garbage', 'upstream answer has no message');
  const msg = json.message;
  const toolCalls = toolCallsOf(msg);
  const res: CanonicalResponse = {
    id: newId('ollama-'),
    model: typeof json.model === 'string' ? json.model : requestedModel,
    created: typeof json.created_at === 'string' && !Number.isNaN(Date.parse(json.created_at)) ? Math.floor(Date.parse(json.created_at) / 1000) : nowSeconds(),
    content: typeof msg.content === 'string' && msg.content !== '' ? [{ type: 'text', text: msg.content }] : [],
    toolCalls,
    stopReason: stopFromOllama(json.done_reason, toolCalls.length > 0),
    usage: { inputTokens: 0, outputTokens: 0, ...usageOf(json) },
  };
  if (typeof msg.thinking === 'string' && msg.thinking !== '') res.reasoning = msg.thinking;
  return res;
}

export async function* decodeOllamaStream(res: UpstreamHttpResponse): AsyncGenerator<CanonicalChunk> {
  let started = false;
  let done = false;
  let calls = 0;
  for await (const line of ndjsonLines(res.body)) {
    // After done:true the body is drained rather than abandoned (see decodeOpenAIStream).
    if (done) continue;
    const obj = parseEventJson(line, 'ollama');
    if (typeof obj.error === 'string') throw new UpstreamError('http', `upstream stream error: ${obj.error}`, { status: 502, upstreamMessage: obj.error });
    if (!started) {
      started = true;
      yield { type: 'start', model: typeof obj.model === 'string' ? obj.model : undefined };
    }
    const msg = isObject(obj.message) ? obj.message : {};
    if (typeof msg.thinking === 'string' && msg.thinking !== '') yield { type: 'reasoning', text: msg.thinking };
    if (typeof msg.content === 'string' && msg.content !== '') yield { type: 'text', text: msg.content };
    for (const c of toolCallsOf(msg)) yield { type: 'tool_call', index: calls++, id: c.id, name: c.name, argumentsDelta: c.arguments };
    if (obj.done === true) {
      done = true;
      yield { type: 'usage', usage: usageOf(obj) };
      yield { type: 'finish', stopReason: stopFromOllama(obj.done_reason, calls > 0) };
    }
  }
  if (!done) throw new UpstreamError('truncated', 'ollama stream ended without done:true');
}

async function embeddings(
  conn: ProviderConnection,
  account: ProviderAccount,
  req: CanonicalEmbeddingsRequest,
  opts: CallOptions,
): Promise<CanonicalEmbeddingsResponse> {
  if (req.input.kind === 'tokens') throw new UpstreamError('unsupported', 'Ollama embeddings take text, not token lists');
  if (req.input.kind === 'items') throw new UpstreamError('unsupported', 'Ollama embeddings take text only');
  const body: Record<string, unknown> = { model: req.model, input: req.input.values };
  if (req.dimensions !== undefined) body.dimensions = req.dimensions;
  const json = await postJson(conn, url(conn, '/api/embed'), headers(conn, account), body, opts);
  if (!isObject(json) || !Array.isArray(json.embeddings)) throw new UpstreamError('garbage', 'upstream embed answer has no embeddings');
  return {
    model: typeof json.model === 'string' ? json.model : req.model,
    vectors: json.embeddings as number[][],
    usage: { inputTokens: typeof json.prompt_eval_count === 'number' ? json.prompt_eval_count : 0 },
  };
}

async function listModels(conn: ProviderConnection, account: ProviderAccount, opts: CallOptions): Promise<UpstreamModel[]> {
  const json = await getJson(conn, url(conn, '/api/tags'), headers(conn, account), opts);
  if (!isObject(json) || !Array.isArray(json.models)) throw new UpstreamError('garbage', 'upstream tags answer has no models array');
  return json.models.filter(isObject).map((m) => {
    const id = String(m.model ?? m.name ?? '');
    return { id, type: ollamaCapabilities(id).embeddings ? ('embedding' as const) : ('chat' as const) };
  });
}

export const ollamaProvider: ProviderAdapter = {
  kind: 'ollama',
  label: 'Ollama',
  defaultBaseUrl: DEFAULT_BASE,
  authHeader: 'none',
  chat: async (conn, account, req, opts) => {
    const body = await encodeOllamaRequest(req, opts);
    return runChat({
      conn,
      url: url(conn, '/api/chat'),
      headers: headers(conn, account),
      body,
      stream: req.stream,
      opts,
      estimatePrompt: () => estimateTokens(req),
      decodeResponse: (json) => decodeOllamaResponse(json, req.model),
      decodeStream: (res) => decodeOllamaStream(res),
    });
  },
  embeddings,
  listModels,
  capabilities: ollamaCapabilities,
};
