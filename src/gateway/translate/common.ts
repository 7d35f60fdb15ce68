/** Small helpers shared by the wire-format modules. */
import { randomBytes } from 'node:crypto';
import { badRequest, HttpError } from '../../http/errors.js';
import type { CanonicalChunk, ContentPart, ImagePart, Message, StopReason, ToolCall, Usage } from '../canonical.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random id with a prefix, e.g. `chatcmpl-…`, `msg_…`, `call_…`. */
export function newId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let s = prefix;
  for (let i = 0; i < length; i++) s += ALPHABET[bytes[i]! % ALPHABET.length];
  return s;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parse JSON tool arguments into an object; anything unparsable or non-object becomes {}. */
export function parseArguments(text: string | undefined): Record<string, unknown> {
  if (!text || !text.trim()) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return isObject(v) ? v : { value: v };
  } catch {
    return {};
  }
}

/** JSON text of tool arguments given as object or string; "{}" when empty. */
export function argumentsText(v: unknown): string {
  if (v === undefined || v === null) return '{}';
  if (typeof v === 'string') return v.trim() === '' ? '{}' : v;
  return JSON.stringify(v);
}

/** `data:image/png;base64,AAA` → image part; other URLs stay URLs. */
export function imageFromUrl(url: string, detail?: string): ImagePart {
  const m = /^data:([^;,]+)?(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  const part: ImagePart = m
    ? { type: 'image', source: { type: 'base64', mediaType: m[1] || 'application/octet-stream', data: m[2]! } }
    : { type: 'image', source: { type: 'url', url } };
  if (detail) part.detail = detail;
  return part;
}

/** Image part → URL (data URL for inline images). */
export function imageToUrl(p: ImagePart): string {
  return p.source.type === 'url' ? p.source.url : `data:${p.source.mediaType};base64,${p.source.data}`;
}

/** Throw a 400 naming the path of the offending field. */
export function invalid(path: string, message: string): HttpError {
  return badRequest(`${path} ${message}`);
}

export function optNumber(body: Record<string, unknown>, key: string, path = 'body'): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(`${path}/${key}`, 'must be a number');
  return v;
}

export function optInteger(body: Record<string, unknown>, key: string, path = 'body', min = 0): number | undefined {
  const v = optNumber(body, key, path);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min) throw invalid(`${path}/${key}`, `must be an integer >= ${min}`);
  return v;
}

export function optString(body: Record<string, unknown>, key: string, path = 'body'): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`${path}/${key}`, 'must be a string');
  return v;
}

export function optBoolean(body: Record<string, unknown>, key: string, path = 'body'): boolean | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(`${path}/${key}`, 'must be a boolean');
  return v;
}

/** `stop` as string or string array → array (max 16, like the bigger providers allow). */
export function stopList(v: unknown, path: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) {
    if (v.length > 16) throw invalid(path, 'must have at most 16 entries');
    return v as string[];
  }
  throw invalid(path, 'must be a string or an array of strings');
}

/** The object of a JSON body or a 400. */
export function requireObject(body: unknown, what = 'body'): Record<string, unknown> {
  if (!isObject(body)) throw badRequest(`${what} must be a JSON object`);
  return body;
}

/** Copy fields not in `known` (extension fields, passed on to a same-family upstream). */
export function extraFields(body: Record<string, unknown>, known: ReadonlySet<string>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  // for-in over own keys: no entries array per request (JSON bodies have no inherited enumerable keys).
  for (const k in body) {
    if (known.has(k) || !Object.hasOwn(body, k)) continue;
    const v = body[k];
    if (v !== undefined) (out ??= {})[k] = v;
  }
  return out;
}

/**
 * Make the message list consistent for strict providers: every tool call has an id, every tool
 * result names its tool, tool results without a matching call are dropped, and calls without a
 * result get an empty one (Anthropic and OpenAI reject dangling calls).
 */
export function normaliseToolTurns(messages: Message[]): Message[] {
  const callNames = new Map<string, string>();
  let counter = 0;
  for (const m of messages) {
    if (m.role === 'assistant' && m.toolCalls) {
      for (const c of m.toolCalls) {
        if (!c.id) c.id = `call_${counter++}`;
        if (!c.arguments || !c.arguments.trim()) c.arguments = '{}';
        callNames.set(c.id, c.name);
      }
    }
  }
  const out: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      const name = callNames.get(m.toolCallId);
      if (name === undefined) continue; // orphaned result
      if (!m.name) m.name = name;
    }
    out.push(m);
    if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
      // Collect the results that follow; add empty ones for calls left unanswered.
      const answered = new Set<string>();
      let j = i + 1;
      while (j < messages.length && messages[j]!.role === 'tool') {
        answered.add((messages[j] as { toolCallId: string }).toolCallId);
        j++;
      }
      const missing = m.toolCalls.filter((c) => !answered.has(c.id));
      if (missing.length > 0 && j < messages.length) {
        // Only patch when the conversation continues past the calls (a trailing call is a legit request).
        for (let k = i + 1; k < j; k++) {
          const t = messages[k] as Message & { role: 'tool' };
          if (callNames.has(t.toolCallId)) {
            if (!t.name) t.name = callNames.get(t.toolCallId);
            out.push(t);
          }
        }
        for (const c of missing) out.push({ role: 'tool', toolCallId: c.id, name: c.name, content: [{ type: 'text', text: '' }] });
        i = j - 1;
      }
    }
  }
  return out;
}

export function textParts(text: string): ContentPart[] {
  return text === '' ? [] : [{ type: 'text', text }];
}

/** OpenAI finish_reason ↔ canonical. */
export function stopFromOpenAI(r: unknown): StopReason {
  switch (r) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export function stopToOpenAI(r: StopReason): string {
  return r === 'error' ? 'stop' : r;
}

export function totalUsage(u: Usage): number {
  return u.inputTokens + u.outputTokens;
}

export function toolCallsOf(calls: ToolCall[] | undefined): ToolCall[] {
  return calls ?? [];
}

/** Reject a value that is not an array; returns [] for undefined. */
export function optArray(body: Record<string, unknown>, key: string, path = 'body'): unknown[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid(`${path}/${key}`, 'must be an array');
  return v;
}

/** A tool call being assembled from streamed deltas. */
export interface PendingToolCall {
  id: string;
  name: string;
  args: string;
}

/**
 * Fold one tool-call delta into the calls collected by index, for client formats that send whole
 * calls (Gemini, Ollama) rather than deltas.
 */
export function collectToolCall(calls: Map<number, PendingToolCall>, c: Extract<CanonicalChunk, { type: 'tool_call' }>): void {
  const cur = calls.get(c.index) ?? { id: '', name: '', args: '' };
  if (c.id) cur.id = c.id;
  if (c.name) cur.name = c.name;
  if (c.argumentsDelta) cur.args += c.argumentsDelta;
  calls.set(c.index, cur);
}
