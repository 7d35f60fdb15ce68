/**
 * The media operations Gemini has, in OpenAI's wire shapes:
 * - image generation (`/images/generations`) through Imagen's `models/{model}:predict`: `n` becomes
 *   `sampleCount`, `size` the nearest aspect ratio Imagen offers; the images come back as `b64_json`
 *   (Gemini returns bytes, never URLs);
 * - speech (`/audio/speech`) through `generateContent` with `responseModalities: ["AUDIO"]` and the
 *   voice as `prebuiltVoiceConfig.voiceName`: Gemini answers 16-bit PCM, returned as `pcm` or wrapped
 *   in a WAV header for `wav`; it cannot make mp3, opus, aac or flac, so those are refused (another
 *   target of a combo serves them).
 * Everything else (moderations, rerank, video, music, transcriptions) Gemini does not serve.
 */
import { Readable } from 'node:stream';
import { postJson } from './call.js';
import { UpstreamError } from './errors.js';
import type { CallOptions, ProviderAccount, ProviderConnection, StreamOperationAnswer } from './types.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface GeminiEndpoint {
  /** `…/models/{model}:{method}` under the connection's base URL. */
  modelUrl(conn: ProviderConnection, model: string, method: string): string;
  headers(conn: ProviderConnection, account: ProviderAccount): Record<string, string>;
}

const SPEECH_FORMATS = new Set(['wav', 'pcm']);
const ASPECTS: [string, number][] = [
  ['1:1', 1],
  ['3:4', 3 / 4],
  ['4:3', 4 / 3],
  ['9:16', 9 / 16],
  ['16:9', 16 / 9],
];

/** The Imagen aspect ratio nearest to `WIDTHxHEIGHT` (none for `auto` or no size). */
export function aspectRatioOf(size: unknown): string | undefined {
  const m = typeof size === 'string' ? /^(\d+)x(\d+)$/.exec(size) : null;
  if (!m) return undefined;
  const r = Number(m[1]) / Number(m[2]);
  return ASPECTS.reduce((best, a) => (Math.abs(Math.log(a[1] / r)) < Math.abs(Math.log(best[1] / r)) ? a : best))[0];
}

/** Why Gemini cannot serve this operation, or undefined when it can. */
export function geminiRefuses(path: string, body: Obj): string | undefined {
  if (path === '/images/generations') return undefined;
  if (path === '/audio/speech') {
    const format = String(body.response_format ?? 'mp3');
    return SPEECH_FORMATS.has(format) ? undefined : `provider kind gemini makes speech as wav or pcm only, not ${format}`;
  }
  const what: Record<string, string> = { '/moderations': 'moderations', '/rerank': 'rerank', '/videos/generations': 'videos', '/music/generations': 'music', '/images/edits': 'image edits', '/audio/transcriptions': 'transcription' };
  return `provider kind gemini has no ${what[path] ?? path} endpoint`;
}

export async function geminiImages(e: GeminiEndpoint, conn: ProviderConnection, account: ProviderAccount, body: Obj, opts: CallOptions): Promise<unknown> {
  const aspect = aspectRatioOf(body.size);
  const parameters = { sampleCount: typeof body.n === 'number' ? body.n : 1, ...(aspect ? { aspectRatio: aspect } : {}) };
  const answer = await postJson(conn, e.modelUrl(conn, String(body.model), 'predict'), e.headers(conn, account), { instances: [{ prompt: body.prompt }], parameters }, opts);
  const predictions = isObject(answer) && Array.isArray(answer.predictions) ? answer.predictions : [];
  const data = predictions.filter((p): p is Obj => isObject(p) && typeof p.bytesBase64Encoded === 'string').map((p) => ({ b64_json: p.bytesBase64Encoded as string }));
  return { created: Math.floor((opts.now ?? Date.now)() / 1000), data };
}

/** A WAV file around 16-bit little-endian mono PCM at `rate` Hz. */
export function wavOf(pcm: Buffer, rate: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + pcm.length, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16); // fmt chunk size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28); // byte rate
  h.writeUInt16LE(2, 32); // block align
  h.writeUInt16LE(16, 34); // bits per sample
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([h, pcm]);
}

export async function geminiSpeech(e: GeminiEndpoint, conn: ProviderConnection, account: ProviderAccount, body: Obj, opts: CallOptions): Promise<StreamOperationAnswer> {
  const text = typeof body.instructions === 'string' && body.instructions ? `${body.instructions}: ${String(body.input)}` : String(body.input);
  const voice = typeof body.voice === 'string' ? body.voice : isObject(body.voice) && typeof body.voice.id === 'string' ? body.voice.id : undefined;
  const request = {
    contents: [{ role: 'user', parts: [{ text }] }],
    generationConfig: { responseModalities: ['AUDIO'], ...(voice ? { speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: voice } } } } : {}) },
  };
  const answer = await postJson(conn, e.modelUrl(conn, String(body.model), 'generateContent'), e.headers(conn, account), request, opts);
  const candidates = isObject(answer) && Array.isArray(answer.candidates) ? answer.candidates : [];
  const parts = isObject(candidates[0]) && isObject(candidates[0].content) && Array.isArray(candidates[0].content.parts) ? candidates[0].content.parts : [];
  const inline = parts.map((p) => (isObject(p) && isObject(p.inlineData) ? p.inlineData : undefined)).find((d) => d && typeof d.data === 'string');
  if (!inline) throw new UpstreamError('empty-response', 'Gemini answered without audio');
  const pcm = Buffer.from(inline.data as string, 'base64');
  const rate = Number(/rate=(\d+)/.exec(String(inline.mimeType ?? ''))?.[1] ?? 24000);
  const audio = body.response_format === 'pcm' ? pcm : wavOf(pcm, rate);
  return { headers: { 'content-type': body.response_format === 'pcm' ? 'audio/pcm' : 'audio/wav', 'content-length': String(audio.length) }, body: Readable.from([audio]) };
}
