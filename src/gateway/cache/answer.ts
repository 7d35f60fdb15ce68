/**
 * A finished answer kept for reuse (response cache, idempotent replays): the canonical response and
 * who produced it. Stored canonical, so it can be rendered in any client format, as JSON or as a
 * stream. Streams are assembled into one while they pass through.
 */
import type { CanonicalChunk, CanonicalResponse, StopReason, ToolCall, Usage } from '../canonical.js';
import { mergeUsage } from '../canonical.js';

export interface StoredAnswer {
  response: CanonicalResponse;
  /** Provider id, upstream model id and `<provider>/<model>` that answered. */
  provider: string;
  modelId: string;
  ref: string;
  /** `single` or the combo strategy of the original request. */
  strategy: string;
  createdAt: number;
}

/** Collects a canonical stream into the response it amounts to. */
export class ResponseAssembler {
  private id?: string;
  private model?: string;
  private text = '';
  private reasoning = '';
  private signature?: string;
  private readonly calls = new Map<number, { id: string; name: string; args: string }>();
  private stop?: StopReason;
  private stopSequence?: string;
  private readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };
  /** Set when the answer got too large to keep. */
  overflow = false;

  constructor(private readonly maxChars = 4 << 20) {}

  push(c: CanonicalChunk): void {
    if (this.overflow) return;
    switch (c.type) {
      case 'start':
        if (c.id) this.id = c.id;
        if (c.model) this.model = c.model;
        mergeUsage(this.usage, c.usage);
        break;
      case 'text':
        this.text += c.text;
        break;
      case 'reasoning':
        this.reasoning += c.text;
        if (c.signature) this.signature = c.signature;
        break;
      case 'tool_call': {
        let call = this.calls.get(c.index);
        if (!call) this.calls.set(c.index, (call = { id: c.id ?? '', name: c.name ?? '', args: '' }));
        if (c.id) call.id = c.id;
        if (c.name) call.name = c.name;
        if (c.argumentsDelta) call.args += c.argumentsDelta;
        break;
      }
      case 'finish':
        this.stop = c.stopReason;
        if (c.stopSequence) this.stopSequence = c.stopSequence;
        break;
      case 'usage':
        mergeUsage(this.usage, c.usage);
        break;
    }
    if (this.text.length + this.reasoning.length > this.maxChars) this.overflow = true;
  }

  /** The assembled response, or undefined when the stream did not finish properly or grew too large. */
  result(fallbackModel: string, created: number): CanonicalResponse | undefined {
    if (this.overflow || this.stop === undefined || this.stop === 'error') return undefined;
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, t]) => ({ id: t.id, name: t.name, arguments: t.args === '' ? '{}' : t.args }));
    const r: CanonicalResponse = {
      id: this.id ?? `chatcmpl-${created}`,
      model: this.model ?? fallbackModel,
      created,
      content: this.text ? [{ type: 'text', text: this.text }] : [],
      toolCalls,
      stopReason: this.stop,
      usage: { ...this.usage },
    };
    if (this.reasoning) r.reasoning = this.reasoning;
    if (this.signature) r.reasoningSignature = this.signature;
    if (this.stopSequence) r.stopSequence = this.stopSequence;
    return r;
  }
}

/** A stored response as the canonical stream a provider would have produced. */
export function answerChunks(r: CanonicalResponse): CanonicalChunk[] {
  const out: CanonicalChunk[] = [{ type: 'start', id: r.id, model: r.model, usage: { inputTokens: r.usage.inputTokens } }];
  if (r.reasoning) out.push({ type: 'reasoning', text: r.reasoning, ...(r.reasoningSignature ? { signature: r.reasoningSignature } : {}) });
  for (const p of r.content) if (p.type === 'text' && p.text) out.push({ type: 'text', text: p.text });
  r.toolCalls.forEach((t, index) => out.push({ type: 'tool_call', index, id: t.id, name: t.name, argumentsDelta: t.arguments }));
  out.push({ type: 'finish', stopReason: r.stopReason, ...(r.stopSequence ? { stopSequence: r.stopSequence } : {}) });
  out.push({ type: 'usage', usage: { ...r.usage } });
  return out;
}
