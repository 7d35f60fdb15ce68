/**
 * Gemini upstreams: `POST {base}/models/{model}:generateContent` / `:streamGenerateContent?alt=sse`,
 * `:embedContent` / `:batchEmbedContents`, `GET /models`, auth `x-goog-api-key`.
 * Gemini wants inline media, so image URLs are fetched server-side (SSRF policy in media.ts).
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
  type Usage,
} from '../canonical.js';
import { estimateTokens } from '../translate/tokens.js';
import { isObject, newId, nowSeconds, parseArguments } from '../translate/common.js';
import { geminiCapabilities } from './capabilities.js';
import { getJson, postJson, runChat } from './call.js';
import { geminiImages, geminiRefuses, geminiSpeech, type GeminiEndpoint } from './gemini-media.js';
import { encodeEmbeddingItemsAsParts, inlineMedia } from './embedding-items.js';
import { UpstreamError } from './errors.js';
import { errorInfo, joinUrl, type UpstreamHttpResponse } from './http.js';
import { parseEventJson, sseEvents } from './stream.js';
import type { CallOptions, ProviderAccount, ProviderAdapter, ProviderConnection, UpstreamModel } from './types.js';

const DEFAULT_BASE = 'https://generativelanguage.googleapis.com/v1beta';

function base(conn: ProviderConnection): string {
  return conn.baseUrl || DEFAULT_BASE;
}

function headers(conn: ProviderConnection, account: ProviderAccount): Record<string, string> {
  const h: Record<string, string> = { ...(conn.headers ?? {}) };
  if (account.apiKey) h['x-goog-api-key'] = account.apiKey;
  return h;
}

const ENDPOINT: GeminiEndpoint = { modelUrl: (conn, model, method) => joinUrl(base(conn), `${modelPath(model)}:${method}`), headers };

function modelPath(model: string): string {
  return `/models/${encodeURIComponent(model.replace(/^models\//, ''))}`;
}

function budgetFor(effort: string | undefined): number {
  switch (effort) {
    case 'minimal':
      return 512;
    case 'low':
      return 2048;
    case 'high':
      return 24_576;
    default:
      return 8192;
  }
}

async function partsOf(parts: ContentPart[], opts: CallOptions): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const p of parts) {
    if (p.type === 'text') {
      if (p.text !== '') out.push({ text: p.text });
    } else if (p.source.type === 'base64') {
      out.push({ inlineData: { mimeType: p.source.mediaType, data: p.source.data } });
    } else if (/^gs:\/\/|generativelanguage\.googleapis\.com\/v1beta\/files\//.test(p.source.url)) {
      out.push({ fileData: { fileUri: p.source.url, mimeType: 'image/*' } });
    } else {
      const m = await inlineMedia(p.source, opts);
      out.push({ inlineData: { mimeType: m.mediaType, data: m.data } });
    }
  }
  return out;
}

function toolResponse(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    if (isObject(v)) return v;
  } catch {
    // plain text result
  }
  return { result: text };
}

export async function encodeGeminiRequest(req: CanonicalRequest, opts: CallOptions): Promise<Record<string, unknown>> {
  const system: string[] = req.system ? [req.system] : [];
  const contents: { role: 'user' | 'model'; parts: Record<string, unknown>[] }[] = [];
  const push = (role: 'user' | 'model', parts: Record<string, unknown>[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const m of req.messages) {
    switch (m.role) {
      case 'system':
        system.push(textOf(m.content));
        break;
      case 'user':
        push('user', await partsOf(m.content, opts));
        break;
      case 'assistant': {
        const parts = await partsOf(m.content, opts);
        const calls = (m.toolCalls ?? []).map((c) => ({ functionCall: { name: c.name, args: parseArguments(c.arguments) } }) as Record<string, unknown>);
        // Gemini 2.5+/3 checks the thought signature on the first function call of a turn.
        if (m.reasoningSignature) {
          const target = calls[0] ?? parts[0];
          if (target) target.thoughtSignature = m.reasoningSignature;
        }
        push('model', [...parts, ...calls]);
        break;
      }
      case 'tool':
        push('user', [{ functionResponse: { name: m.name ?? '', response: toolResponse(textOf(m.content)) } }]);
        break;
    }
  }
  if (contents.length === 0) contents.push({ role: 'user', parts: [{ text: ' ' }] });

  const body: Record<string, unknown> = {};
  if (req.sourceFormat === 'gemini' && req.extra) Object.assign(body, req.extra);
  delete body.model;
  body.contents = contents;
  const systemText = system.filter((s) => s !== '').join('\n\n');
  if (systemText) body.systemInstruction = { parts: [{ text: systemText }] };
  if (req.tools && req.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: req.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), parametersJsonSchema: t.parameters })),
      },
    ];
    const tc = req.toolChoice;
    if (tc !== undefined) {
      body.toolConfig = {
        functionCallingConfig:
          tc === 'none' ? { mode: 'NONE' } : tc === 'required' ? { mode: 'ANY' } : tc === 'auto' ? { mode: 'AUTO' } : { mode: 'ANY', allowedFunctionNames: [tc.name] },
      };
    }
  }
  const g: Record<string, unknown> = {};
  if (req.temperature !== undefined) g.temperature = req.temperature;
  if (req.topP !== undefined) g.topP = req.topP;
  if (req.topK !== undefined) g.topK = req.topK;
  if (req.maxTokens !== undefined) g.maxOutputTokens = req.maxTokens;
  if (req.stop && req.stop.length > 0) g.stopSequences = req.stop.slice(0, 5);
  if (req.seed !== undefined) g.seed = req.seed;
  if (req.presencePenalty !== undefined) g.presencePenalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) g.frequencyPenalty = req.frequencyPenalty;
  if (req.responseFormat && req.responseFormat.type !== 'text') {
    g.responseMimeType = 'application/json';
    if (req.responseFormat.type === 'json_schema') g.responseJsonSchema = req.responseFormat.schema;
  }
  if (req.thinking) {
    g.thinkingConfig = req.thinking.enabled
      ? { includeThoughts: true, thinkingBudget: req.thinking.budgetTokens ?? budgetFor(req.thinking.effort) }
      : { thinkingBudget: 0 };
  }
  if (Object.keys(g).length > 0) body.generationConfig = { ...(isObject(body.generationConfig) ? body.generationConfig : {}), ...g };
  return body;
}

export function stopFromGemini(r: unknown, hasCalls: boolean): StopReason {
  switch (r) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
      return 'content_filter';
    case 'MALFORMED_FUNCTION_CALL':
      return 'error';
    default:
      return hasCalls ? 'tool_calls' : 'stop';
  }
}

export function decodeGeminiUsage(u: unknown): Partial<Usage> | undefined {
  if (!isObject(u)) return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const out: Partial<Usage> = {};
  const prompt = num(u.promptTokenCount);
  const cand = num(u.candidatesTokenCount);
  const thoughts = num(u.thoughtsTokenCount);
  if (prompt !== undefined) out.inputTokens = prompt + (num(u.toolUsePromptTokenCount) ?? 0);
  if (cand !== undefined || thoughts !== undefined) out.outputTokens = (cand ?? 0) + (thoughts ?? 0);
  if (thoughts !== undefined) out.reasoningTokens = thoughts;
  const cached = num(u.cachedContentTokenCount);
  if (cached !== undefined) out.cachedInputTokens = cached;
  return out;
}

function streamError(obj: Record<string, unknown>): UpstreamError {
  const info = errorInfo(obj);
  const code = isObject(obj.error) && typeof obj.error.code === 'number' ? obj.error.code : 502;
  return new UpstreamError('http', `upstream reported an error: ${info.message ?? 'unknown'}`, { status: code, upstreamMessage: info.message, upstreamCode: info.code });
}

export function decodeGeminiResponse(json: unknown, requestedModel: string): CanonicalResponse {
  if (!isObject(json)) throw new UpstreamError('garbage', 'upstream answer is not a JSON object');
  if (json.error !== undefined) throw streamError(json);
  if (!Array.isArray(json.candidates)) {
    if (isObject(json.promptFeedback) && json.promptFeedback.blockReason) {
      throw new UpstreamError('empty-response', `upstream blocked the prompt (${String(json.promptFeedback.blockReason)})`);
    }
    throw new UpstreamError('garbage', 'upstream answer has no candidates');
  }
  const cand = isObject(json.candidates[0]) ? json.candidates[0] : {};
  const parts = isObject(cand.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
  const res: CanonicalResponse = {
    id: typeof json.responseId === 'string' ? json.responseId : newId('gen-'),
    model: typeof json.modelVersion === 'string' ? json.modelVersion : requestedModel,
    created: nowSeconds(),
    content: [],
    toolCalls: [],
    stopReason: 'stop',
    usage: { inputTokens: 0, outputTokens: 0, ...(decodeGeminiUsage(json.usageMetadata) ?? {}) },
  };
  let text = '';
  for (const p of parts) {
    if (!isObject(p)) continue;
    if (typeof p.thoughtSignature === 'string') res.reasoningSignature = p.thoughtSignature;
    if (isObject(p.functionCall)) {
      const fc = p.functionCall;
      res.toolCalls.push({ id: typeof fc.id === 'string' && fc.id ? fc.id : newId('call_'), name: String(fc.name ?? ''), arguments: JSON.stringify(isObject(fc.args) ? fc.args : {}) });
    } else if (typeof p.text === 'string') {
      if (p.thought === true) res.reasoning = (res.reasoning ?? '') + p.text;
      else text += p.text;
    }
  }
  if (text !== '') res.content.push({ type: 'text', text });
  res.stopReason = stopFromGemini(cand.finishReason, res.toolCalls.length > 0);
  return res;
}

export async function* decodeGeminiStream(res: UpstreamHttpResponse): AsyncGenerator<CanonicalChunk> {
  let started = false;
  let finish: unknown;
  let calls = 0;
  for await (const ev of sseEvents(res.body)) {
    const data = ev.data.trim();
    if (!data || data === '[DONE]') continue;
    const obj = parseEventJson(data, 'gemini');
    if (obj.error !== undefined) throw streamError(obj);
    if (!started) {
      started = true;
      yield { type: 'start', id: typeof obj.responseId === 'string' ? obj.responseId : undefined, model: typeof obj.modelVersion === 'string' ? obj.modelVersion : undefined };
    }
    const cand = Array.isArray(obj.candidates) && isObject(obj.candidates[0]) ? obj.candidates[0] : undefined;
    if (cand) {
      const parts = isObject(cand.content) && Array.isArray(cand.content.parts) ? cand.content.parts : [];
      for (const p of parts) {
        if (!isObject(p)) continue;
        const sig = typeof p.thoughtSignature === 'string' ? p.thoughtSignature : undefined;
        if (isObject(p.functionCall)) {
          const fc = p.functionCall;
          yield {
            type: 'tool_call',
            index: calls++,
            id: typeof fc.id === 'string' && fc.id ? fc.id : newId('call_'),
            name: String(fc.name ?? ''),
            argumentsDelta: JSON.stringify(isObject(fc.args) ? fc.args : {}),
          };
          if (sig) yield { type: 'reasoning', text: '', signature: sig };
        } else if (typeof p.text === 'string') {
          if (p.thought === true) yield { type: 'reasoning', text: p.text, ...(sig ? { signature: sig } : {}) };
          else {
            if (p.text !== '') yield { type: 'text', text: p.text };
            if (sig) yield { type: 'reasoning', text: '', signature: sig };
          }
        }
      }
      if (cand.finishReason !== undefined && cand.finishReason !== null && cand.finishReason !== 'FINISH_REASON_UNSPECIFIED') finish = cand.finishReason;
    } else if (isObject(obj.promptFeedback) && obj.promptFeedback.blockReason) {
      finish = 'PROHIBITED_CONTENT';
    }
    const u = decodeGeminiUsage(obj.usageMetadata);
    if (u) yield { type: 'usage', usage: u };
  }
  if (finish === undefined) throw new UpstreamError('truncated', 'gemini stream ended without a finishReason');
  yield { type: 'finish', stopReason: stopFromGemini(finish, calls > 0) };
}

async function embeddings(
  conn: ProviderConnection,
  account: ProviderAccount,
  req: CanonicalEmbeddingsRequest,
  opts: CallOptions,
): Promise<CanonicalEmbeddingsResponse> {
  const model = req.model.replace(/^models\//, '');
  const dims = req.dimensions !== undefined ? { outputDimensionality: req.dimensions } : {};
  if (req.input.kind === 'tokens') throw new UpstreamError('unsupported', 'Gemini embeddings take text, not token lists');
  if (req.input.kind === 'items') {
    const parts = await encodeEmbeddingItemsAsParts(req.input.values, opts);
    const json = await postJson(conn, joinUrl(base(conn), `${modelPath(model)}:embedContent`), headers(conn, account), { content: { parts }, ...dims }, opts);
    const values = isObject(json) && isObject(json.embedding) && Array.isArray(json.embedding.values) ? (json.embedding.values as number[]) : undefined;
    if (!values) throw new UpstreamError('garbage', 'upstream embedContent answer has no embedding');
    return { model, vectors: [values], usage: { inputTokens: 0 } };
  }
  const requests = req.input.values.map((text) => ({ model: `models/${model}`, content: { parts: [{ text }] }, ...dims }));
  const json = await postJson(conn, joinUrl(base(conn), `${modelPath(model)}:batchEmbedContents`), headers(conn, account), { requests }, opts);
  if (!isObject(json) || !Array.isArray(json.embeddings)) throw new UpstreamError('garbage', 'upstream batchEmbedContents answer has no embeddings');
  const vectors = json.embeddings.map((e) => {
    if (!isObject(e) || !Array.isArray(e.values)) throw new UpstreamError('garbage', 'upstream embedding has no values');
    return e.values as number[];
  });
  return { model, vectors, usage: { inputTokens: 0 } };
}

async function listModels(conn: ProviderConnection, account: ProviderAccount, opts: CallOptions): Promise<UpstreamModel[]> {
  const json = await getJson(conn, joinUrl(base(conn), '/models?pageSize=1000'), headers(conn, account), opts);
  if (!isObject(json) || !Array.isArray(json.models)) throw new UpstreamError('garbage', 'upstream model list has no models array');
  return json.models.filter(isObject).map((m) => {
    const id = String(m.name ?? '').replace(/^models\//, '');
    const methods = Array.isArray(m.supportedGenerationMethods) ? m.supportedGenerationMethods : [];
    const row: UpstreamModel = { id, type: methods.includes('embedContent') && !methods.includes('generateContent') ? 'embedding' : 'chat' };
    if (typeof m.displayName === 'string') row.displayName = m.displayName;
    if (typeof m.inputTokenLimit === 'number') row.contextLength = m.inputTokenLimit;
    return row;
  });
}

export const geminiProvider: ProviderAdapter = {
  kind: 'gemini',
  label: 'Gemini generateContent',
  defaultBaseUrl: DEFAULT_BASE,
  authHeader: 'x-goog-api-key',
  chat: async (conn, account, req, opts) => {
    const body = await encodeGeminiRequest(req, opts);
    const path = `${modelPath(req.model)}:${req.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
    return runChat({
      conn,
      url: joinUrl(base(conn), path),
      headers: headers(conn, account),
      body,
      stream: req.stream,
      opts,
      estimatePrompt: () => estimateTokens(req),
      decodeResponse: (json) => decodeGeminiResponse(json, req.model),
      decodeStream: (res) => decodeGeminiStream(res),
    });
  },
  embeddings,
  listModels,
  // Image generation (Imagen :predict) and speech (generateContent with audio out); nothing else.
  jsonOperation: (conn, account, path, body, opts) => {
    const refusal = geminiRefuses(path, body);
    if (refusal || path !== '/images/generations') throw new UpstreamError('unsupported', refusal ?? `gemini has no ${path}`);
    return geminiImages(ENDPOINT, conn, account, body, opts);
  },
  streamOperation: (conn, account, path, body, opts) => {
    const refusal = geminiRefuses(path, body);
    if (refusal || path !== '/audio/speech') throw new UpstreamError('unsupported', refusal ?? `gemini has no ${path}`);
    return geminiSpeech(ENDPOINT, conn, account, body, opts);
  },
  refuses: geminiRefuses,
  capabilities: geminiCapabilities,
};
