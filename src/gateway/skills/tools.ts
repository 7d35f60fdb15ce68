/**
 * Skills in `auto` mode as tools: offered to the model on non-streaming chat requests; when the
 * model's answer calls only such tools, the gateway runs them in the sandbox, gives the model the
 * results and asks again (up to `skills.max_tool_rounds`). An answer that also calls the client's own
 * tools goes back to the client unchanged. Token usage of every round is summed into the answer.
 */
import type { CanonicalRequest, Message, ToolDefinition, Usage } from '../canonical.js';
import type { SkillService } from './service.js';
import type { SkillRecord } from './store.js';

function reachesKey(all: readonly SkillRecord[], apiKeyId: string | undefined): boolean {
  for (const s of all) if (s.apiKeyId === undefined || s.apiKeyId === apiKeyId) return true;
  return false;
}

/** The auto skills a caller may use, minus names the client's own tools already take. */
export function skillsToOffer(skills: SkillService, req: CanonicalRequest, apiKeyId: string | undefined): SkillRecord[] {
  if (req.stream || req.toolChoice === 'none') return [];
  const all = skills.store.auto();
  // Auto skills of other keys only: nothing to offer, and nothing built to find that out.
  if (!reachesKey(all, apiKeyId)) return [];
  const taken = new Set((req.tools ?? []).map((t) => t.name));
  const byName = new Map<string, SkillRecord>();
  // A key's own skill wins over a shared one of the same name.
  for (const s of all) {
    if (s.apiKeyId !== undefined && s.apiKeyId !== apiKeyId) continue;
    if (taken.has(s.name)) continue;
    const prev = byName.get(s.name);
    if (!prev || (prev.apiKeyId === undefined && s.apiKeyId !== undefined)) byName.set(s.name, s);
  }
  return [...byName.values()];
}

function toolOf(s: SkillRecord): ToolDefinition {
  const input = s.schema.input;
  const parameters = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { type: 'object', properties: {} };
  return { name: s.name, description: s.description || `skill ${s.name}`, parameters };
}

export function withSkillTools(req: CanonicalRequest, offered: SkillRecord[]): CanonicalRequest {
  if (offered.length === 0) return req;
  return { ...req, tools: [...(req.tools ?? []), ...offered.map(toolOf)] };
}

export function addUsage(a: Usage, b: Usage): Usage {
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const out: Usage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  for (const k of ['cachedInputTokens', 'cacheCreationInputTokens', 'reasoningTokens'] as const) {
    const v = sum(a[k], b[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * The next request after the model called skills: its answer as an assistant turn, then one tool
 * message per call with the skill's output (or its error, marked as one).
 */
export async function runSkillCalls(
  skills: SkillService,
  req: CanonicalRequest,
  answer: { content: Message['content']; toolCalls: { id: string; name: string; arguments: string }[] },
  offered: Map<string, SkillRecord>,
  caller: { apiKeyId?: string; sessionId?: string },
): Promise<CanonicalRequest> {
  const results: Message[] = await Promise.all(
    answer.toolCalls.map(async (call): Promise<Message> => {
      const s = offered.get(call.name)!;
      let input: unknown;
      try {
        input = JSON.parse(call.arguments || '{}');
      } catch {
        return { role: 'tool', toolCallId: call.id, name: call.name, isError: true, content: [{ type: 'text', text: 'the arguments are not valid JSON' }] };
      }
      const e = await skills.run(s, input, caller.apiKeyId, caller.sessionId);
      const text = e.status === 'success' ? (e.output ?? 'null') : `skill failed (${e.status}): ${e.error ?? ''}`;
      return { role: 'tool', toolCallId: call.id, name: call.name, ...(e.status === 'success' ? {} : { isError: true }), content: [{ type: 'text', text }] };
    }),
  );
  return { ...req, messages: [...req.messages, { role: 'assistant', content: answer.content, toolCalls: answer.toolCalls }, ...results] };
}
