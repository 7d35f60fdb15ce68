/**
 * Memory injection: the memories that reach a caller and match the latest user turn are added to
 * the request's system text as one "Memory context" block, within a token budget. Appended after
 * the client's own system text so a cached prompt prefix stays byte-stable.
 */
import type { CanonicalRequest, Message } from '../canonical.js';
import type { MemoryConfig } from './config.js';
import type { MemoryData } from './data.js';
import type { MemoryCaller, MemoryRecord } from './store.js';

/** Rough token count of memory text: four characters a token, as the budget is an estimate anyway. */
export const memoryTokens = (text: string): number => Math.ceil(text.length / 4);

function lastUserText(messages: Message[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    const text = m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(' ');
    if (text.trim()) return text.slice(0, 4000);
  }
  return undefined;
}

/** Memories for this request, in order, cut to the budget (the first always fits, cut short if need be). */
export function selectMemories(store: MemoryData, cfg: MemoryConfig, req: CanonicalRequest, caller: MemoryCaller, now: number): MemoryRecord[] | Promise<MemoryRecord[]> {
  const candidates = store.forCaller(caller, lastUserText(req.messages), now, cfg.maxItems);
  return candidates instanceof Promise ? candidates.then((c) => withinBudget(c, cfg)) : withinBudget(candidates, cfg);
}

function withinBudget(candidates: MemoryRecord[], cfg: MemoryConfig): MemoryRecord[] {
  const out: MemoryRecord[] = [];
  let used = 0;
  for (const m of candidates) {
    const t = memoryTokens(m.content) + 2;
    if (used + t > cfg.maxTokens) {
      if (out.length === 0) out.push({ ...m, content: m.content.slice(0, cfg.maxTokens * 4) });
      break;
    }
    out.push(m);
    used += t;
  }
  return out;
}

export function memoryBlock(memories: MemoryRecord[]): string {
  return `Memory context:\n${memories.map((m) => `- ${m.content.trim().replace(/\s*\n\s*/g, ' ')}`).join('\n')}`;
}

/** Add the block to the request (a new object; the client's request is left as it was). */
export function withMemories(req: CanonicalRequest, memories: MemoryRecord[]): CanonicalRequest {
  if (memories.length === 0) return req;
  const block = memoryBlock(memories);
  return { ...req, system: req.system ? `${req.system}\n\n${block}` : block };
}
