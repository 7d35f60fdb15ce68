/**
 * The reasoning cache: thinking text and signatures of answers that called tools, by tool call id,
 * so the next turn can hand them back. Clients on the OpenAI chat format have nowhere to keep an
 * Anthropic thinking signature or a Gemini thought signature, yet those providers want the
 * reasoning of a tool-calling turn returned with the tool's result (Anthropic refuses the turn
 * without it when thinking is on). When a request's assistant turn with tool calls arrives without
 * reasoning, the cached reasoning of its tool call is put back — only for an attempt on the provider
 * that produced it, since a signature means nothing to another. Memory only, bounded in entries and
 * bytes, entries expire after `ttlMs`.
 */
import type { AssistantMessage, CanonicalChunk, CanonicalRequest, CanonicalResponse } from '../canonical.js';

export interface ReasoningEntry {
  toolCallId: string;
  provider: string;
  model: string;
  reasoning: string;
  signature?: string;
  createdAt: number;
  hits: number;
}

const MAX_REASONING_CHARS = 256 * 1024;

export class ReasoningCache {
  private readonly entries = new Map<string, ReasoningEntry>();
  private bytes = 0;
  readonly stats = { stored: 0, restored: 0, evicted: 0 };

  constructor(
    private readonly now: () => number,
    readonly ttlMs = 24 * 3_600_000,
    readonly maxEntries = 10_000,
    readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  private static cost(e: ReasoningEntry): number {
    return e.reasoning.length * 2 + (e.signature?.length ?? 0) * 2 + 200;
  }

  private drop(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    this.bytes -= ReasoningCache.cost(e);
  }

  /** Keep the reasoning of an answer that called tools (nothing when it has no tool calls or no reasoning). */
  capture(provider: string, model: string, toolCallIds: readonly string[], reasoning: string | undefined, signature: string | undefined): void {
    if (toolCallIds.length === 0 || (!reasoning && !signature)) return;
    const now = this.now();
    const text = (reasoning ?? '').slice(0, MAX_REASONING_CHARS);
    for (const id of toolCallIds) {
      this.drop(id);
      const e: ReasoningEntry = { toolCallId: id, provider, model, reasoning: text, ...(signature ? { signature } : {}), createdAt: now, hits: 0 };
      this.entries.set(id, e);
      this.bytes += ReasoningCache.cost(e);
      this.stats.stored++;
    }
    // Oldest first out (Map order is insertion order).
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes && now - e.createdAt < this.ttlMs) break;
      this.drop(id);
      this.stats.evicted++;
    }
  }

  captureResponse(provider: string, model: string, r: CanonicalResponse): void {
    if (r.toolCalls.length > 0) this.capture(provider, model, r.toolCalls.map((t) => t.id), r.reasoning, r.reasoningSignature);
  }

  /**
   * The request with reasoning put back into assistant tool-call turns that lack it, from entries of
   * `provider`; the same object when nothing applies.
   */
  restore(req: CanonicalRequest, provider: string): CanonicalRequest {
    if (this.entries.size === 0) return req;
    let messages: CanonicalRequest['messages'] | undefined;
    const now = this.now();
    for (let i = 0; i < req.messages.length; i++) {
      const m = req.messages[i]!;
      if (m.role !== 'assistant' || !m.toolCalls?.length || m.reasoningSignature || m.reasoning) continue;
      const e = m.toolCalls.map((t) => this.entries.get(t.id)).find((x) => x !== undefined);
      if (!e || e.provider !== provider || now - e.createdAt >= this.ttlMs) continue;
      e.hits++;
      this.stats.restored++;
      messages ??= [...req.messages];
      const next: AssistantMessage = { ...m, ...(e.reasoning ? { reasoning: e.reasoning } : {}), ...(e.signature ? { reasoningSignature: e.signature } : {}) };
      messages[i] = next;
    }
    return messages ? { ...req, messages } : req;
  }

  list(filter: { toolCallId?: string; provider?: string } = {}): ReasoningEntry[] {
    const now = this.now();
    return [...this.entries.values()].filter((e) => now - e.createdAt < this.ttlMs && (filter.toolCallId === undefined || e.toolCallId === filter.toolCallId) && (filter.provider === undefined || e.provider === filter.provider));
  }

  /** Delete by tool call id, by provider, or everything; answers how many went. */
  delete(filter: { toolCallId?: string; provider?: string } = {}): number {
    let n = 0;
    for (const e of [...this.entries.values()]) {
      if ((filter.toolCallId === undefined || e.toolCallId === filter.toolCallId) && (filter.provider === undefined || e.provider === filter.provider)) {
        this.drop(e.toolCallId);
        n++;
      }
    }
    return n;
  }
}

/** Collects a stream's reasoning and tool call ids as its chunks go by (cheap: two type checks per chunk). */
export class ReasoningTap {
  private reasoning = '';
  private signature: string | undefined;
  private readonly ids: string[] = [];

  push(c: CanonicalChunk): void {
    if (c.type === 'reasoning') {
      if (this.reasoning.length < MAX_REASONING_CHARS) this.reasoning += c.text;
      if (c.signature) this.signature = c.signature;
    } else if (c.type === 'tool_call' && c.id && !this.ids.includes(c.id)) this.ids.push(c.id);
  }

  flush(cache: ReasoningCache, provider: string, model: string): void {
    cache.capture(provider, model, this.ids, this.reasoning || undefined, this.signature);
  }
}
