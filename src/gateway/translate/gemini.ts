/**
 * Gemini generateContent, client side: `POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent` bodies in (model and streaming come from the URL), GenerateContentResponse
 * JSON out, and SSE where every event is a full GenerateContentResponse (no [DONE]).
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
  type StopReason,
  type ThinkingConfig,
  type ToolChoice,
  type ToolDefinition,
  type Usage,
} from '../canonical.js';
import { extraFields, invalid, isObject, newId, normaliseToolTurns, parseArguments, requireObject, stopList, collectToolCall, type PendingToolCall } from './common.js';
import { geminiSchemaToJson } from './schema-convert.js';
import { sseData } from './sse.js';
import type { ParseOptions, RenderOptions, StreamEncoder, StreamOptions, WireFormat } from './types.js';

const KNOWN = new Set(['model', 'contents', 'systemInstruction', 'system_instruction', 'tools', 'toolConfig', 'tool_config', 'generationConfig', 'generation_config', 'safetySettings', 'safety_settings', 'cachedContent', 'labels']);

// ----------------------------------------------------------------------------- request parsing

interface PendingCall {
  id: string;
  name: string;
  answered: boolean;
}

function parseParts(v: unknown, path: string): Record<string, unknown>[] {
  if (!Array.isArray(v)) throw invalid(path, 'must be an array of parts');
  return v.map((p, i) => {
    if (!isObject(p)) throw invalid(`${path}/${i}`, 'must be an object');
    return p;
  });
}

function inlineData(p: Record<string, unknown>): Record<string, unknown> | undefined {
  const d = p.inlineData ?? p.inline_data;
  return isObject(d) ? d : undefined;
}

function fileData(p: Record<string, unknown>): Record<string, unknown> | undefined {
  const d = p.fileData ?? p.file_data;
  return isObject(d) ? d : undefined;
}

function mediaPart(p: Record<string, unknown>, path: string): ContentPart | undefined {
  const inline = inlineData(p);
  if (inline) {
    const mime = inline.mimeType ?? inline.mime_type;
    if (typeof mime !== 'string' || typeof inline.data !== 'string') throw invalid(`${path}/inlineData`, 'needs mimeType and data strings');
    if (!mime.startsWith('image/')) throw invalid(`${path}/inlineData/mimeType`, `${mime} is not supported (images only)`);
    return { type: 'image', source: { type: 'base64', mediaType: mime, data: inline.data } };
  }
  const file = fileData(p);
  if (file) {
    const uri = file.fileUri ?? file.file_uri;
    if (typeof uri !== 'string' || uri === '') throw invalid(`${path}/fileData/fileUri`, 'must be a non-empty string');
    return { type: 'image', source: { type: 'url', url: uri } };
  }
  return undefined;
}

function parseContents(v: unknown): Message[] {
  if (!Array.isArray(v)) throw invalid('body/contents', 'must be an array');
  if (v.length === 0) throw invalid('body/contents', 'must contain at least one content');
  const out: Message[] = [];
  const calls: PendingCall[] = [];
  let counter = 0;
  v.forEach((c, i) => {
    const cp = `body/contents/${i}`;
    if (!isObject(c)) throw invalid(cp, 'must be an object');
    const role = c.role ?? 'user';
    const parts = parseParts(c.parts, `${cp}/parts`);
    if (role === 'model' || role === 'assistant') {
      const a: AssistantMessage = { role: 'assistant', content: [] };
      parts.forEach((p, k) => {
        const pp = `${cp}/parts/${k}`;
        const fc = p.functionCall ?? p.function_call;
        if (isObject(fc)) {
          if (typeof fc.name !== 'string' || fc.name === '') throw invalid(`${pp}/functionCall/name`, 'must be a non-empty string');
          const id = typeof fc.id === 'string' && fc.id !== '' ? fc.id : `call_${counter++}`;
          calls.push({ id, name: fc.name, answered: false });
          (a.toolCalls ??= []).push({ id, name: fc.name, arguments: JSON.stringify(isObject(fc.args) ? fc.args : {}) });
        } else if (typeof p.text === 'string') {
          if (p.thought === true) a.reasoning = (a.reasoning ?? '') + p.text;
          else if (p.text !== '') a.content.push({ type: 'text', text: p.text });
        } else {
          const m = mediaPart(p, pp);
          if (m) a.content.push(m);
        }
        const sig = p.thoughtSignature ?? p.thought_signature;
        if (typeof sig === 'string') a.reasoningSignature = sig;
      });
      out.push(a);
      return;
    }
    if (role !== 'user' && role !== 'function' && role !== 'tool') throw invalid(`${cp}/role`, 'must be "user" or "model"');
    const rest: ContentPart[] = [];
    let hadResponse = false;
    parts.forEach((p, k) => {
      const pp = `${cp}/parts/${k}`;
      const fr = p.functionResponse ?? p.function_response;
      if (isObject(fr)) {
        hadResponse = true;
        if (typeof fr.name !== 'string' || fr.name === '') throw invalid(`${pp}/functionResponse/name`, 'must be a non-empty string');
        let call: PendingCall | undefined;
        if (typeof fr.id === 'string' && fr.id !== '') call = calls.find((x) => x.id === fr.id);
        call ??= calls.find((x) => !x.answered && x.name === fr.name);
        if (call) call.answered = true;
        const response = fr.response;
        const text =
          isObject(response) && Object.keys(response).length === 1 && typeof response.result === 'string'
            ? response.result
            : JSON.stringify(response ?? {});
        out.push({ role: 'tool', toolCallId: call?.id ?? (typeof fr.id === 'string' ? fr.id : `call_${fr.name}`), name: fr.name, content: [{ type: 'text', text }] });
      } else if (typeof p.text === 'string') {
        rest.push({ type: 'text', text: p.text });
      } else {
        const m = mediaPart(p, pp);
        if (!m) throw invalid(pp, 'must carry text, inlineData, fileData, functionCall or functionResponse');
        rest.push(m);
      }
    });
    if (rest.length > 0 || !hadResponse) out.push({ role: 'user', content: rest });
  });
  return normaliseToolTurns(out);
}

function parseSystem(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v || undefined;
  if (!isObject(v)) throw invalid('body/systemInstruction', 'must be a Content object');
  const parts = parseParts(v.parts, 'body/systemInstruction/parts');
  const text = parts.map((p) => (typeof p.text === 'string' ? p.text : '')).join('\n');
  return text === '' ? undefined : text;
}

function parseTools(v: unknown): ToolDefinition[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid('body/tools', 'must be an array');
  const defs: ToolDefinition[] = [];
  v.forEach((t, i) => {
    const tp = `body/tools/${i}`;
    if (!isObject(t)) throw invalid(tp, 'must be an object');
    const decls = t.functionDeclarations ?? t.function_declarations;
    if (decls === undefined) {
      const kind = Object.keys(t)[0] ?? 'empty';
      throw invalid(tp, `tool ${kind} is not supported by this gateway (functionDeclarations only)`);
    }
    if (!Array.isArray(decls)) throw invalid(`${tp}/functionDeclarations`, 'must be an array');
    decls.forEach((d, k) => {
      const dp = `${tp}/functionDeclarations/${k}`;
      if (!isObject(d) || typeof d.name !== 'string' || d.name === '') throw invalid(`${dp}/name`, 'must be a non-empty string');
      const js = d.parametersJsonSchema ?? d.parameters_json_schema;
      const params = isObject(js) ? js : isObject(d.parameters) ? (geminiSchemaToJson(d.parameters) as Record<string, unknown>) : { type: 'object', properties: {} };
      const def: ToolDefinition = { name: d.name, parameters: params };
      if (typeof d.description === 'string') def.description = d.description;
      defs.push(def);
    });
  });
  return defs;
}

function parseToolConfig(v: unknown): ToolChoice | undefined {
  if (!isObject(v)) return undefined;
  const fc = v.functionCallingConfig ?? v.function_calling_config;
  if (!isObject(fc)) return undefined;
  const names = fc.allowedFunctionNames ?? fc.allowed_function_names;
  switch (fc.mode) {
    case undefined:
    case 'AUTO':
    case 'MODE_UNSPECIFIED':
      return 'auto';
    case 'NONE':
      return 'none';
    case 'ANY':
    case 'VALIDATED':
      return Array.isArray(names) && names.length === 1 && typeof names[0] === 'string' ? { name: names[0] } : 'required';
    default:
      throw invalid('body/toolConfig/functionCallingConfig/mode', 'must be AUTO, ANY, NONE or VALIDATED');
  }
}

function num(g: Record<string, unknown>, key: string): number | undefined {
  const v = g[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(`body/generationConfig/${key}`, 'must be a number');
  return v;
}

export function parseGeminiRequest(raw: unknown, opts: ParseOptions = {}): CanonicalRequest {
  const body = requireObject(raw);
  const model = opts.model ?? body.model;
  if (typeof model !== 'string' || model.trim() === '') throw invalid('model', 'is required (in the URL)');
  const req: CanonicalRequest = { model: model.replace(/^models\//, ''), messages: parseContents(body.contents), stream: opts.stream ?? false };
  const system = parseSystem(body.systemInstruction ?? body.system_instruction);
  if (system !== undefined) req.system = system;
  const tools = parseTools(body.tools);
  if (tools && tools.length > 0) req.tools = tools;
  const tc = parseToolConfig(body.toolConfig ?? body.tool_config);
  if (tc !== undefined && req.tools) req.toolChoice = tc;
  const g = body.generationConfig ?? body.generation_config;
  if (g !== undefined && g !== null) {
    if (!isObject(g)) throw invalid('body/generationConfig', 'must be an object');
    const temperature = num(g, 'temperature');
    if (temperature !== undefined) {
      if (temperature < 0 || temperature > 2) throw invalid('body/generationConfig/temperature', 'must be between 0 and 2');
      req.temperature = temperature;
    }
    const topP = num(g, 'topP');
    if (topP !== undefined) req.topP = topP;
    const topK = num(g, 'topK');
    if (topK !== undefined) req.topK = Math.round(topK);
    const max = num(g, 'maxOutputTokens');
    if (max !== undefined) {
      if (!Number.isInteger(max) || max < 1) throw invalid('body/generationConfig/maxOutputTokens', 'must be a positive integer');
      req.maxTokens = max;
    }
    const cc = num(g, 'candidateCount');
    if (cc !== undefined && cc > 1) throw invalid('body/generationConfig/candidateCount', 'greater than 1 is not supported by this gateway');
    const stop = stopList(g.stopSequences, 'body/generationConfig/stopSequences');
    if (stop) req.stop = stop;
    const seed = num(g, 'seed');
    if (seed !== undefined) req.seed = Math.round(seed);
    const pp = num(g, 'presencePenalty');
    if (pp !== undefined) req.presencePenalty = pp;
    const fp = num(g, 'frequencyPenalty');
    if (fp !== undefined) req.frequencyPenalty = fp;
    const rf = parseResponseMime(g);
    if (rf) req.responseFormat = rf;
    const tcfg = g.thinkingConfig;
    if (isObject(tcfg)) {
      const th = parseThinking(tcfg);
      if (th) req.thinking = th;
    }
  }
  const extra = extraFields(body, KNOWN);
  if (extra) req.extra = extra;
  return req;
}

function parseResponseMime(g: Record<string, unknown>): ResponseFormat | undefined {
  if (g.responseMimeType !== 'application/json') return undefined;
  const js = g.responseJsonSchema ?? g.responseSchema;
  if (isObject(js)) return { type: 'json_schema', name: 'response', schema: (g.responseJsonSchema ? js : geminiSchemaToJson(js)) as Record<string, unknown> };
  return { type: 'json_object' };
}

function parseThinking(t: Record<string, unknown>): ThinkingConfig | undefined {
  const budget = t.thinkingBudget;
  if (typeof budget === 'number') {
    if (budget === 0) return { enabled: false };
    return budget < 0 ? { enabled: true } : { enabled: true, budgetTokens: budget };
  }
  const level = t.thinkingLevel;
  if (typeof level === 'string') {
    const l = level.toLowerCase();
    if (l === 'low' || l === 'medium' || l === 'high' || l === 'minimal') return { enabled: true, effort: l };
  }
  if (t.includeThoughts === true) return { enabled: true };
  return undefined;
}

// ----------------------------------------------------------------------------- response rendering

export function stopToGemini(r: StopReason): string {
  switch (r) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    case 'error':
      return 'OTHER';
    default:
      return 'STOP';
  }
}

/** Gemini usage: candidatesTokenCount excludes thoughts; total = prompt + candidates + thoughts. */
export function geminiUsage(u: Usage): Record<string, number> {
  const thoughts = u.reasoningTokens ?? 0;
  const out: Record<string, number> = {
    promptTokenCount: u.inputTokens,
    candidatesTokenCount: Math.max(0, u.outputTokens - thoughts),
    totalTokenCount: u.inputTokens + u.outputTokens,
  };
  if (u.cachedInputTokens) out.cachedContentTokenCount = u.cachedInputTokens;
  if (thoughts) out.thoughtsTokenCount = thoughts;
  return out;
}

/**
 * Gemini clients must echo thought signatures on the next turn: the signature goes on the first
 * function call, or on the last part when there is none (as Gemini itself does).
 */
function attachSignature(parts: Record<string, unknown>[], signature: string | undefined): void {
  if (!signature || parts.length === 0) return;
  const target = parts.find((p) => p.functionCall !== undefined) ?? parts[parts.length - 1]!;
  target.thoughtSignature = signature;
}

function partsOf(res: CanonicalResponse): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  if (res.reasoning) parts.push({ text: res.reasoning, thought: true });
  const text = textOf(res.content);
  if (text !== '') parts.push({ text });
  for (const c of res.toolCalls) parts.push({ functionCall: { id: c.id, name: c.name, args: parseArguments(c.arguments) } });
  if (parts.length === 0) parts.push({ text: '' });
  attachSignature(parts, res.reasoningSignature);
  return parts;
}

function renderResponse(res: CanonicalResponse, opts: RenderOptions): unknown {
  return {
    candidates: [{ content: { role: 'model', parts: partsOf(res) }, finishReason: stopToGemini(res.stopReason), index: 0 }],
    usageMetadata: geminiUsage(res.usage),
    modelVersion: opts.model ?? res.model,
    responseId: opts.id ?? res.id,
  };
}

// ----------------------------------------------------------------------------- streaming

function createStreamEncoder(opts: StreamOptions): StreamEncoder {
  const responseId = opts.id ?? newId('', 22);
  const usage = emptyUsage();
  const calls = new Map<number, PendingToolCall>();
  let stop: StopReason | null = null;
  let ended = false;
  let signature: string | undefined;

  const event = (parts: Record<string, unknown>[], extra: Record<string, unknown> = {}): string =>
    sseData({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
      ...(extra.finishReason ? { usageMetadata: geminiUsage(usage) } : {}),
      modelVersion: opts.model,
      responseId,
    });

  return {
    chunk(c: CanonicalChunk): string[] {
      if (ended) return [];
      switch (c.type) {
        case 'start':
          mergeUsage(usage, c.usage);
          return [];
        case 'text':
          return c.text ? [event([{ text: c.text }])] : [];
        case 'reasoning':
          if (c.signature) signature = c.signature;
          return c.text ? [event([{ text: c.text, thought: true }])] : [];
        case 'tool_call': {
          // Gemini sends whole function calls: collect argument deltas by index, emit at the end.
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
      const parts: Record<string, unknown>[] = [...calls.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([, v]) => ({ functionCall: { id: v.id || undefined, name: v.name, args: parseArguments(v.args) } }));
      if (parts.length === 0) parts.push({ text: '' });
      attachSignature(parts, signature);
      return [event(parts, { finishReason: stopToGemini(stop ?? 'stop') })];
    },
    error(message: string, status = 502): string[] {
      if (ended) return [];
      ended = true;
      return [sseData({ error: { code: status, message, status: geminiStatus(status) } })];
    },
    usage: () => ({ ...usage }),
  };
}

// ----------------------------------------------------------------------------- errors

export function geminiStatus(status: number): string {
  switch (status) {
    case 400:
    case 422:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 405:
      return 'UNIMPLEMENTED';
    case 409:
      return 'ABORTED';
    case 413:
      return 'INVALID_ARGUMENT';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}

function renderErrorBody(err: HttpError): unknown {
  return { error: { code: err.status, message: err.message, status: geminiStatus(err.status) } };
}

export const geminiGenerate: WireFormat = {
  streamContentType: 'text/event-stream',
  parseRequest: parseGeminiRequest,
  renderResponse,
  createStreamEncoder,
  renderErrorBody,
};
