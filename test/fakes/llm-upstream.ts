/**
 * Mock LLM upstreams for every provider kind on one loopback server (127.0.0.1:0):
 *   OpenAI-compatible  {origin}/openai/v1      POST /chat/completions, /embeddings, /moderations, /rerank, /images/generations; GET /models
 *   Anthropic          {origin}/anthropic      POST /v1/messages; GET /v1/models
 *   Gemini             {origin}/gemini/v1beta  POST /models/{m}:generateContent|:streamGenerateContent|:embedContent|:batchEmbedContents; GET /models
 *   Ollama             {origin}/ollama         POST /api/chat, /api/embed; GET /api/tags
 * Behaviour is scripted per request (FIFO queue, optionally per kind) or by defaults: latency, error
 * statuses with Retry-After, empty / truncated / garbage streams, mid-stream error events, tool calls,
 * reasoning and usage. Every request is recorded for assertions.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type MockKind = 'openai' | 'anthropic' | 'gemini' | 'ollama';

export interface MockToolCall {
  name: string;
  arguments: Record<string, unknown>;
  id?: string;
}

export interface MockBehaviour {
  /** Delay before the response headers (ms). */
  latencyMs?: number;
  /** Delay between stream events (ms). */
  chunkDelayMs?: number;
  /** Non-2xx status: answer with an error body in the kind's format. */
  status?: number;
  retryAfter?: string;
  errorMessage?: string;
  /** Answer text (split into several stream events). */
  text?: string;
  reasoning?: string;
  toolCalls?: MockToolCall[];
  usage?: { input: number; output: number; cached?: number; reasoning?: number; /** Anthropic prompt-cache writes (part of input). */ cacheWrite?: number };
  finish?: 'stop' | 'length';
  /** Stream shape: normal, empty (200 then nothing), truncated (stops midway, no terminator),
   * garbage (not the format at all), error-event (an error event after some content). */
  stream?: 'normal' | 'empty' | 'truncated' | 'garbage' | 'error-event';
  /** Non-stream body replaced by this raw text (garbage tests). */
  rawBody?: string;
  /** Never answer (timeouts). The socket stays open until the server closes. */
  hang?: boolean;
  /** Omit usage from the answer (OpenAI streams without include_usage, for example). */
  noUsage?: boolean;
}

export interface RecordedRequest {
  kind: MockKind;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface MockUpstream {
  origin: string;
  port: number;
  baseUrl(kind: MockKind): string;
  requests: RecordedRequest[];
  /** Behaviour for the next matching request (FIFO). `kind` limits it to one provider kind. */
  enqueue(b: MockBehaviour, kind?: MockKind): void;
  /** Behaviour when the queue has nothing. */
  defaults: MockBehaviour;
  /** Expected API key; requests with another one get 401 in the kind's format. */
  apiKey?: string;
  models: string[];
  /** The last transcription upload the mock read: its fields and the file's name and size. */
  lastForm?: { fields: Record<string, string>; file: { name: string; size: number }; files?: { field: string; name: string; size: number }[] };
  /** Requests whose response has not finished yet (streams in flight). */
  open(): number;
  /** Resolves when a client connection of a response closes early (client abort reached the mock). */
  aborted: number;
  reset(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function split(text: string, parts = 3): string[] {
  if (text.length <= parts) return [text];
  const size = Math.ceil(text.length / parts);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function vector(seed: string, dims: number): number[] {
  let h = 2166136261;
  for (const ch of seed) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  const out: number[] = [];
  for (let i = 0; i < dims; i++) {
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995);
    out.push(((h >>> 0) % 2000) / 1000 - 1);
  }
  return out;
}

function errorBody(kind: MockKind, status: number, message: string): unknown {
  switch (kind) {
    case 'openai':
      return { error: { message, type: status === 429 ? 'rate_limit_error' : 'api_error', code: null } };
    case 'anthropic':
      return { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : 'api_error', message } };
    case 'gemini':
      return { error: { code: status, message, status: status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL' } };
    case 'ollama':
      return { error: message };
  }
}

export async function startLlmUpstream(
  opts: { apiKey?: string; models?: string[]; defaults?: MockBehaviour; /** false: do not keep requests (benchmarks). */ record?: boolean } = {},
): Promise<MockUpstream> {
  const queue: { b: MockBehaviour; kind?: MockKind }[] = [];
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  const sockets = new Set<import('node:net').Socket>();

  const mock: MockUpstream = {
    origin: '',
    port: 0,
    baseUrl(kind) {
      return kind === 'openai' ? `${this.origin}/openai/v1` : kind === 'gemini' ? `${this.origin}/gemini/v1beta` : `${this.origin}/${kind}`;
    },
    requests,
    enqueue(b, kind) {
      queue.push({ b, kind });
    },
    defaults: opts.defaults ?? {},
    apiKey: opts.apiKey,
    models: opts.models ?? ['m1', 'm2'],
    open: () => inFlight,
    aborted: 0,
    reset() {
      queue.length = 0;
      requests.length = 0;
      this.defaults = opts.defaults ?? {};
      this.aborted = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };

  const take = (kind: MockKind): MockBehaviour => {
    const i = queue.findIndex((q) => q.kind === undefined || q.kind === kind);
    if (i < 0) return mock.defaults;
    return { ...mock.defaults, ...queue.splice(i, 1)[0]!.b };
  };

  const server: Server = createServer((req, res) => {
    inFlight++;
    let finished = false;
    res.on('finish', () => {
      finished = true;
    });
    res.on('close', () => {
      inFlight--;
      if (!finished) mock.aborted++;
    });
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) {
        res.statusCode = 500;
        res.end(JSON.stringify({ error: { message: `mock failure: ${err.message}` } }));
      } else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const kind = (path.split('/')[1] ?? '') as MockKind;
    if (!['openai', 'anthropic', 'gemini', 'ollama'].includes(kind)) {
      res.statusCode = 404;
      res.end('{"error":"unknown mock path"}');
      return;
    }
    const body = await readBody(req);
    if (opts.record !== false) requests.push({ kind, method: req.method ?? 'GET', path: path + url.search, headers: req.headers, body });
    const b = take(kind);
    if (b.hang) return; // leave the request open
    if (b.latencyMs) await sleep(b.latencyMs);

    if (mock.apiKey !== undefined) {
      const got =
        kind === 'anthropic'
          ? req.headers['x-api-key']
          : kind === 'gemini'
            ? req.headers['x-goog-api-key']
            : String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (got !== mock.apiKey) return json(res, 401, errorBody(kind, 401, 'invalid api key'));
    }
    if (b.status && b.status >= 300) {
      const headers: Record<string, string> = {};
      if (b.retryAfter !== undefined) headers['retry-after'] = b.retryAfter;
      return json(res, b.status, errorBody(kind, b.status, b.errorMessage ?? `mock error ${b.status}`), headers);
    }
    const rest = path.slice(kind.length + 1);
    const p = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    switch (kind) {
      case 'openai':
        if (req.method === 'GET' && rest === '/v1/models') return json(res, 200, { object: 'list', data: mock.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'mock' })) });
        if (rest === '/v1/chat/completions') return p.stream === true ? openaiStream(res, b, p) : json(res, 200, openaiJson(b, p), {}, b.rawBody);
        if (rest === '/v1/embeddings') return json(res, 200, openaiEmbeddings(p));
        if (rest === '/v1/moderations') {
          // Flags an input containing "kill"; one result per input, OpenAI's shape.
          const inputs = Array.isArray(p.input) ? p.input : [p.input];
          return json(res, 200, {
            id: 'modr-mock',
            model: p.model,
            results: inputs.map((x) => {
              const flagged = /kill/i.test(typeof x === 'string' ? x : JSON.stringify(x));
              return { flagged, categories: { violence: flagged }, category_scores: { violence: flagged ? 0.97 : 0.01 } };
            }),
          });
        }
        if (rest === '/v1/audio/transcriptions') {
          // A tiny multipart reader (ASCII test files): the fields and the file's name and size.
          const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(String(req.headers['content-type']))?.slice(1).find(Boolean) ?? '';
          const parts: Record<string, string> = {};
          let file = { name: '', size: -1 };
          for (const chunk of String(body ?? '').split(`--${boundary}`)) {
            const m = /^\r\nContent-Disposition: form-data; name="([^"]+)"(?:; filename="([^"]*)")?\r\n(?:Content-Type: [^\r]*\r\n)?\r\n([\s\S]*)\r\n$/.exec(chunk);
            if (!m) continue;
            if (m[2] !== undefined) file = { name: m[2], size: Buffer.byteLength(m[3]!) };
            else parts[m[1]!] = m[3]!;
          }
          const text = `transcript of ${file.name} (${file.size} bytes) by ${parts.model}${parts.language ? ` in ${parts.language}` : ''}`;
          mock.lastForm = { fields: parts, file };
          if (parts.response_format === 'text') return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
          if (parts.response_format === 'verbose_json') return json(res, 200, { task: 'transcribe', language: parts.language ?? 'english', duration: 12.5, text, segments: [] });
          if (parts.response_format === 'srt') return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`1\n00:00:00,000 --> 00:00:01,000\n${text}\n`);
          return json(res, 200, { text, usage: { type: 'tokens', input_tokens: 42, output_tokens: 7, total_tokens: 49 } });
        }
        if (rest === '/v1/images/edits') {
          // The same tiny multipart reader: every file part (name, field, size) and the text fields.
          const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(String(req.headers['content-type']))?.slice(1).find(Boolean) ?? '';
          const parts: Record<string, string> = {};
          const files: { field: string; name: string; size: number }[] = [];
          for (const chunk of String(body ?? '').split(`--${boundary}`)) {
            const m = /^\r\nContent-Disposition: form-data; name="([^"]+)"(?:; filename="([^"]*)")?\r\n(?:Content-Type: [^\r]*\r\n)?\r\n([\s\S]*)\r\n$/.exec(chunk);
            if (!m) continue;
            if (m[2] !== undefined) files.push({ field: m[1]!, name: m[2], size: Buffer.byteLength(m[3]!) });
            else parts[m[1]!] = m[3]!;
          }
          mock.lastForm = { fields: parts, file: files[0] ? { name: files[0].name, size: files[0].size } : { name: '', size: -1 }, files };
          const n = Number(parts.n ?? 1);
          const images = files.filter((f) => f.field !== 'mask').length;
          const masked = files.some((f) => f.field === 'mask');
          const data = Array.from({ length: n }, (_, i) => ({ url: `https://img.mock/edit-${i}.png`, revised_prompt: `${parts.prompt} (${images} image${images === 1 ? '' : 's'}${masked ? ', masked' : ''})` }));
          return json(res, 200, { created: 1, data, usage: { input_tokens: 10, output_tokens: 0, total_tokens: 10 } });
        }
        if (rest === '/v1/audio/speech') {
          // Deterministic "audio": the input repeated to 300 KB, written in 64 KB chunks.
          const audio = speechBytes(String(p.input));
          res.writeHead(200, { 'content-type': p.response_format === 'wav' ? 'audio/wav' : 'audio/mpeg' });
          for (let i = 0; i < audio.length; i += 65536) res.write(audio.subarray(i, i + 65536));
          return void res.end();
        }
        if (rest === '/v1/videos/generations' || rest === '/v1/music/generations') {
          const kindOf = rest.includes('videos') ? 'video' : 'audio';
          return json(res, 200, { created: 1, data: [{ url: `https://media.mock/${kindOf}.${kindOf === 'video' ? 'mp4' : 'mp3'}`, prompt: String(p.prompt) }] });
        }
        if (rest === '/v1/images/generations') {
          const n = typeof p.n === 'number' ? p.n : 1;
          const data = Array.from({ length: n }, (_, i) =>
            p.response_format === 'b64_json' ? { b64_json: Buffer.from(`png-${i}-${String(p.prompt)}`).toString('base64') } : { url: `https://img.mock/${i}.png`, revised_prompt: String(p.prompt) },
          );
          return json(res, 200, { created: 1, data, usage: { input_tokens: String(p.prompt).length, output_tokens: 0, total_tokens: String(p.prompt).length } });
        }
        if (rest === '/v1/rerank') {
          // Scores by shared words with the query, best first (Cohere/Jina shape).
          const q = new Set(String(p.query).toLowerCase().split(/\W+/));
          const docs = (p.documents as unknown[]).map((d) => (typeof d === 'string' ? d : JSON.stringify(d)));
          const scored = docs.map((d, index) => ({ index, relevance_score: d.toLowerCase().split(/\W+/).filter((w) => q.has(w)).length / Math.max(1, q.size) }));
          scored.sort((a, b2) => b2.relevance_score - a.relevance_score || a.index - b2.index);
          const top = scored.slice(0, typeof p.top_n === 'number' ? p.top_n : scored.length);
          return json(res, 200, { id: 'rr-mock', model: p.model, results: p.return_documents ? top.map((r) => ({ ...r, document: { text: docs[r.index] } })) : top, usage: { prompt_tokens: docs.join(' ').length, total_tokens: docs.join(' ').length } });
        }
        break;
      case 'anthropic':
        if (req.method === 'GET' && rest.startsWith('/v1/models')) return json(res, 200, { data: mock.models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })), has_more: false });
        if (rest === '/v1/messages') return p.stream === true ? anthropicStream(res, b, p) : json(res, 200, anthropicJson(b, p), {}, b.rawBody);
        break;
      case 'gemini': {
        if (req.method === 'GET' && rest === '/v1beta/models') {
          return json(res, 200, { models: mock.models.map((id) => ({ name: `models/${id}`, displayName: id, inputTokenLimit: 1000, supportedGenerationMethods: ['generateContent'] })) });
        }
        const m = /^\/v1beta\/models\/([^:]+):(\w+)$/.exec(rest);
        if (m) {
          const model = decodeURIComponent(m[1]!);
          if (m[2] === 'predict') {
            // Imagen: one prediction per sample, the "image" naming its prompt and aspect ratio.
            const params = (p.parameters ?? {}) as Record<string, unknown>;
            const prompt = String(((p.instances as Record<string, unknown>[] | undefined)?.[0] ?? {}).prompt);
            const n = Number(params.sampleCount ?? 1);
            return json(res, 200, { predictions: Array.from({ length: n }, (_, i) => ({ mimeType: 'image/png', bytesBase64Encoded: Buffer.from(`imagen-${i}-${prompt}-${String(params.aspectRatio ?? 'none')}`).toString('base64') })) });
          }
          const gc = (p.generationConfig ?? {}) as Record<string, unknown>;
          if (m[2] === 'generateContent' && Array.isArray(gc.responseModalities) && gc.responseModalities.includes('AUDIO')) {
            // Gemini TTS: 16-bit PCM at 24 kHz, base64 in inlineData; the "samples" are the text's bytes.
            const text = String((((p.contents as Record<string, unknown>[])[0]!.parts as Record<string, unknown>[])[0] ?? {}).text);
            const voice = (((gc.speechConfig as Record<string, any> | undefined)?.voiceConfig ?? {}).prebuiltVoiceConfig ?? {}).voiceName ?? '';
            const pcm = Buffer.from(`${voice}|${text}`.padEnd(64, '.'));
            return json(res, 200, { candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: 'audio/L16;codec=pcm;rate=24000', data: pcm.toString('base64') } }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } });
          }
          if (m[2] === 'generateContent') return json(res, 200, geminiJson(b, model), {}, b.rawBody);
          if (m[2] === 'streamGenerateContent') return geminiStream(res, b, model);
          if (m[2] === 'embedContent') return json(res, 200, { embedding: { values: vector(JSON.stringify(p.content), Number(p.outputDimensionality ?? 8)) } });
          if (m[2] === 'batchEmbedContents') {
            const reqs = Array.isArray(p.requests) ? p.requests : [];
            return json(res, 200, { embeddings: reqs.map((r) => ({ values: vector(JSON.stringify((r as Record<string, unknown>).content), Number((r as Record<string, unknown>).outputDimensionality ?? 8)) })) });
          }
        }
        break;
      }
      case 'ollama':
        if (req.method === 'GET' && rest === '/api/tags') return json(res, 200, { models: mock.models.map((id) => ({ name: id, model: id, size: 1, digest: 'x', details: {} })) });
        if (rest === '/api/chat') return p.stream === false ? json(res, 200, ollamaJson(b, p), {}, b.rawBody) : ollamaStream(res, b, p);
        if (rest === '/api/embed') {
          const input = Array.isArray(p.input) ? p.input : [p.input];
          return json(res, 200, { model: p.model, embeddings: input.map((s) => vector(String(s), Number(p.dimensions ?? 8))), prompt_eval_count: input.length * 3 });
        }
        break;
    }
    json(res, 404, errorBody(kind, 404, `mock has no route ${req.method} ${rest}`));
  }

  const usageOf = (b: MockBehaviour) => b.usage ?? { input: 11, output: 7 };
  const textOf = (b: MockBehaviour, kind: MockKind) => b.text ?? (b.toolCalls?.length ? '' : `Hello from ${kind}`);

  // ---------------------------------------------------------------- OpenAI
  function openaiJson(b: MockBehaviour, p: Record<string, unknown>): unknown {
    const u = usageOf(b);
    const message: Record<string, unknown> = { role: 'assistant', content: textOf(b, 'openai') || null };
    if (b.reasoning) message.reasoning_content = b.reasoning;
    if (b.toolCalls?.length) message.tool_calls = b.toolCalls.map((c, i) => ({ id: c.id ?? `call_m${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
    return {
      id: 'chatcmpl-mock',
      object: 'chat.completion',
      created: 1700000000,
      model: p.model,
      choices: [{ index: 0, message, finish_reason: b.toolCalls?.length ? 'tool_calls' : (b.finish ?? 'stop') }],
      ...(b.noUsage
        ? {}
        : {
            usage: {
              prompt_tokens: u.input,
              completion_tokens: u.output,
              total_tokens: u.input + u.output,
              prompt_tokens_details: { cached_tokens: u.cached ?? 0 },
              completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
            },
          }),
    };
  }

  async function openaiStream(res: ServerResponse, b: MockBehaviour, p: Record<string, unknown>): Promise<void> {
    if (startSse(res, b)) return;
    const base = { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1700000000, model: p.model };
    const send = async (obj: unknown) => {
      res.write(`data: ${JSON.stringify(obj)}\n\n`);
      if (b.chunkDelayMs) await sleep(b.chunkDelayMs);
    };
    await send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    if (b.reasoning) await send({ ...base, choices: [{ index: 0, delta: { reasoning_content: b.reasoning }, finish_reason: null }] });
    const pieces = split(textOf(b, 'openai'));
    for (const [i, t] of pieces.entries()) {
      if (t) await send({ ...base, choices: [{ index: 0, delta: { content: t }, finish_reason: null }] });
      if (i === 0 && b.stream === 'truncated') return void res.end();
      if (i === 0 && b.stream === 'error-event') {
        await send({ error: { message: 'mock mid-stream failure', type: 'server_error', code: 500 } });
        return void res.end();
      }
    }
    for (const [i, c] of (b.toolCalls ?? []).entries()) {
      const args = JSON.stringify(c.arguments);
      const half = Math.floor(args.length / 2);
      await send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: c.id ?? `call_m${i}`, type: 'function', function: { name: c.name, arguments: '' } }] }, finish_reason: null }] });
      await send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(0, half) } }] }, finish_reason: null }] });
      await send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] }, finish_reason: null }] });
    }
    await send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: b.toolCalls?.length ? 'tool_calls' : (b.finish ?? 'stop') }] });
    const so = p.stream_options as Record<string, unknown> | undefined;
    if (!b.noUsage && so?.include_usage === true) {
      const u = usageOf(b);
      await send({ ...base, choices: [], usage: { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output, prompt_tokens_details: { cached_tokens: u.cached ?? 0 } } });
    }
    res.end('data: [DONE]\n\n');
  }

  function openaiEmbeddings(p: Record<string, unknown>): unknown {
    const input = p.input;
    const items: unknown[] = Array.isArray(input) && !(input.length > 0 && typeof input[0] === 'number') ? input : [input];
    const dims = Number(p.dimensions ?? 8);
    return { object: 'list', model: p.model, data: items.map((it, index) => ({ object: 'embedding', index, embedding: vector(JSON.stringify(it), dims) })), usage: { prompt_tokens: items.length * 3, total_tokens: items.length * 3 } };
  }

  // ---------------------------------------------------------------- Anthropic
  function anthropicJson(b: MockBehaviour, p: Record<string, unknown>): unknown {
    const u = usageOf(b);
    const content: unknown[] = [];
    if (b.reasoning) content.push({ type: 'thinking', thinking: b.reasoning, signature: 'sig-mock' });
    const text = textOf(b, 'anthropic');
    if (text) content.push({ type: 'text', text });
    for (const [i, c] of (b.toolCalls ?? []).entries()) content.push({ type: 'tool_use', id: c.id ?? `toolu_m${i}`, name: c.name, input: c.arguments });
    return {
      id: 'msg_mock',
      type: 'message',
      role: 'assistant',
      model: p.model,
      content,
      stop_reason: b.toolCalls?.length ? 'tool_use' : b.finish === 'length' ? 'max_tokens' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: u.input - (u.cached ?? 0) - (u.cacheWrite ?? 0), output_tokens: u.output, cache_read_input_tokens: u.cached ?? 0, cache_creation_input_tokens: u.cacheWrite ?? 0 },
    };
  }

  async function anthropicStream(res: ServerResponse, b: MockBehaviour, p: Record<string, unknown>): Promise<void> {
    if (startSse(res, b)) return;
    const u = usageOf(b);
    const send = async (event: string, obj: unknown) => {
      res.write(`event: ${event}\ndata: ${JSON.stringify(obj)}\n\n`);
      if (b.chunkDelayMs) await sleep(b.chunkDelayMs);
    };
    await send('message_start', {
      type: 'message_start',
      message: { id: 'msg_mock', type: 'message', role: 'assistant', model: p.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: u.input - (u.cached ?? 0) - (u.cacheWrite ?? 0), output_tokens: 1, cache_read_input_tokens: u.cached ?? 0, cache_creation_input_tokens: u.cacheWrite ?? 0 } },
    });
    await send('ping', { type: 'ping' });
    let index = 0;
    if (b.reasoning) {
      await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: b.reasoning } });
      await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'sig-mock' } });
      await send('content_block_stop', { type: 'content_block_stop', index });
      index++;
    }
    const text = textOf(b, 'anthropic');
    if (text) {
      await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const [i, t] of split(text).entries()) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } });
        if (i === 0 && b.stream === 'truncated') return void res.end();
        if (i === 0 && b.stream === 'error-event') {
          await send('error', { type: 'error', error: { type: 'overloaded_error', message: 'mock overloaded' } });
          return void res.end();
        }
      }
      await send('content_block_stop', { type: 'content_block_stop', index });
      index++;
    }
    for (const [i, c] of (b.toolCalls ?? []).entries()) {
      const args = JSON.stringify(c.arguments);
      await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: c.id ?? `toolu_m${i}`, name: c.name, input: {} } });
      await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(0, 3) } });
      await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(3) } });
      await send('content_block_stop', { type: 'content_block_stop', index });
      index++;
    }
    await send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: b.toolCalls?.length ? 'tool_use' : b.finish === 'length' ? 'max_tokens' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: u.output },
    });
    await send('message_stop', { type: 'message_stop' });
    res.end();
  }

  // ---------------------------------------------------------------- Gemini
  function geminiUsage(b: MockBehaviour) {
    const u = usageOf(b);
    const thoughts = u.reasoning ?? 0;
    return { promptTokenCount: u.input, candidatesTokenCount: u.output - thoughts, thoughtsTokenCount: thoughts || undefined, totalTokenCount: u.input + u.output, cachedContentTokenCount: u.cached };
  }

  function geminiParts(b: MockBehaviour): unknown[] {
    const parts: unknown[] = [];
    if (b.reasoning) parts.push({ text: b.reasoning, thought: true });
    const text = textOf(b, 'gemini');
    if (text) parts.push({ text });
    for (const c of b.toolCalls ?? []) parts.push({ functionCall: { name: c.name, args: c.arguments } });
    return parts;
  }

  function geminiJson(b: MockBehaviour, model: string): unknown {
    return {
      candidates: [{ content: { role: 'model', parts: geminiParts(b) }, finishReason: b.finish === 'length' ? 'MAX_TOKENS' : 'STOP', index: 0 }],
      usageMetadata: geminiUsage(b),
      modelVersion: model,
      responseId: 'gem-mock',
    };
  }

  async function geminiStream(res: ServerResponse, b: MockBehaviour, model: string): Promise<void> {
    if (startSse(res, b)) return;
    const send = async (obj: unknown) => {
      res.write(`data: ${JSON.stringify(obj)}\r\n\r\n`);
      if (b.chunkDelayMs) await sleep(b.chunkDelayMs);
    };
    const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) => ({ candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], modelVersion: model, responseId: 'gem-mock' });
    if (b.reasoning) await send(chunk([{ text: b.reasoning, thought: true }]));
    for (const [i, t] of split(textOf(b, 'gemini')).entries()) {
      if (t) await send(chunk([{ text: t }]));
      if (i === 0 && b.stream === 'truncated') return void res.end();
      if (i === 0 && b.stream === 'error-event') {
        await send({ error: { code: 503, message: 'mock unavailable', status: 'UNAVAILABLE' } });
        return void res.end();
      }
    }
    const calls = (b.toolCalls ?? []).map((c) => ({ functionCall: { name: c.name, args: c.arguments } }));
    await send({ ...chunk(calls.length ? calls : [{ text: '' }], { finishReason: b.finish === 'length' ? 'MAX_TOKENS' : 'STOP' }), usageMetadata: geminiUsage(b) });
    res.end();
  }

  // ---------------------------------------------------------------- Ollama
  function ollamaJson(b: MockBehaviour, p: Record<string, unknown>): unknown {
    const u = usageOf(b);
    const message: Record<string, unknown> = { role: 'assistant', content: textOf(b, 'ollama') };
    if (b.reasoning) message.thinking = b.reasoning;
    if (b.toolCalls?.length) message.tool_calls = b.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } }));
    return { model: p.model, created_at: '2025-01-01T00:00:00Z', message, done: true, done_reason: b.finish ?? 'stop', prompt_eval_count: u.input, eval_count: u.output };
  }

  async function ollamaStream(res: ServerResponse, b: MockBehaviour, p: Record<string, unknown>): Promise<void> {
    if (b.stream === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      return void res.end('<html>this is not ndjson</html>\n');
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    if (b.stream === 'empty') return void res.end();
    const u = usageOf(b);
    const send = async (obj: unknown) => {
      res.write(`${JSON.stringify(obj)}\n`);
      if (b.chunkDelayMs) await sleep(b.chunkDelayMs);
    };
    const line = (message: Record<string, unknown>, done = false, extra: Record<string, unknown> = {}) => ({ model: p.model, created_at: '2025-01-01T00:00:00Z', message: { role: 'assistant', ...message }, done, ...extra });
    if (b.reasoning) await send(line({ content: '', thinking: b.reasoning }));
    for (const [i, t] of split(textOf(b, 'ollama')).entries()) {
      if (t) await send(line({ content: t }));
      if (i === 0 && b.stream === 'truncated') return void res.end();
      if (i === 0 && b.stream === 'error-event') {
        await send({ error: 'mock mid-stream failure' });
        return void res.end();
      }
    }
    if (b.toolCalls?.length) await send(line({ content: '', tool_calls: b.toolCalls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) }));
    await send(line({ content: '' }, true, { done_reason: b.finish ?? 'stop', prompt_eval_count: u.input, eval_count: u.output }));
    res.end();
  }

  /** Common SSE start; handles the empty and garbage shapes. Returns true when the response is done. */
  function startSse(res: ServerResponse, b: MockBehaviour): boolean {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (b.stream === 'empty') {
      res.end();
      return true;
    }
    if (b.stream === 'garbage') {
      res.end('data: {this is not json\n\n');
      return true;
    }
    return false;
  }

  function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, raw?: string): void {
    const text = raw ?? JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  mock.port = port;
  mock.origin = `http://127.0.0.1:${port}`;
  return mock;
}

/** The bytes the mock's speech endpoint answers for `input` (tests compare against them). */
export function speechBytes(input: string): Buffer {
  const unit = Buffer.from(`AUDIO[${input}]`);
  return Buffer.alloc(300 * 1024, unit);
}
