/**
 * What the gateway adds to a chat request before routing it: the caller's relevant memories, and
 * the skills in `auto` mode offered as tools (non-streaming requests). `x-gateway-no-memory: true`
 * skips both.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CanonicalRequest } from '../../canonical.js';
import type { Principal } from '../../auth.js';
import type { GatewayServices } from '../../services.js';
import type { CompletionDeps, CompletionInput, CompletionStarted } from '../../completion.js';
import { startCompletion } from '../../completion.js';
import type { Resolution } from '../../routing/resolve.js';
import { selectMemories, withMemories } from '../../memory/inject.js';
import { addUsage, runSkillCalls, skillsToOffer, withSkillTools } from '../../skills/tools.js';
import type { SkillRecord } from '../../skills/store.js';

export function injectionSkipped(headers: IncomingHttpHeaders): boolean {
  return String(headers['x-gateway-no-memory'] ?? '').trim().toLowerCase() === 'true';
}

export interface Injected {
  request: CanonicalRequest;
  /** Skills offered as tools, by name (empty: none). */
  skills: Map<string, SkillRecord>;
}

const NONE = new Map<string, SkillRecord>();

/** Synchronous unless memories must be looked up in a shared database (then a promise). */
/** What adding memories and skills to a request reads. */
export type InjectDeps = Pick<GatewayServices, 'state' | 'memory' | 'clock' | 'prometheus' | 'log' | 'skills'>;

export function injectContext(svc: InjectDeps, headers: IncomingHttpHeaders, req: CanonicalRequest, principal: Principal, sessionId: string | undefined): Injected | Promise<Injected> {
  if (injectionSkipped(headers)) return { request: req, skills: NONE };
  const cfg = svc.state.fileConfig.memory;
  if (!cfg.inject || !svc.memory.any()) return withOfferedSkills(svc, req, principal);
  const caller = { apiKeyId: principal.key?.id, sessionId };
  // Memories only of other keys and sessions: no lookup.
  if (svc.memory.reaches?.(caller) === false) return withOfferedSkills(svc, req, principal);
  const memories = selectMemories(svc.memory, cfg, req, caller, svc.clock.now());
  if (!(memories instanceof Promise)) return withOfferedSkills(svc, withMemories(req, memories), principal);
  // Memories are an addition: the request never waits for them longer than MEMORY_DEADLINE_MS, and
  // while the shared database is away (or slow, or frozen) it goes on without them.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), MEMORY_DEADLINE_MS)));
  return Promise.race([memories, late]).then(
    (m) => {
      clearTimeout(timer);
      if (m !== 'late') return withOfferedSkills(svc, withMemories(req, m), principal);
      svc.prometheus.memorySkipped('late');
      memories.catch(() => {});
      return withOfferedSkills(svc, req, principal);
    },
    (e: unknown) => {
      clearTimeout(timer);
      svc.prometheus.memorySkipped('error');
      svc.log.warn({ err: (e as Error).message }, 'gateway: memories not added (the shared database did not answer)');
      return withOfferedSkills(svc, req, principal);
    },
  );
}

/** How long a chat request waits for its memories from the shared database before it goes on without them. */
export const MEMORY_DEADLINE_MS = 250;

function withOfferedSkills(svc: Pick<GatewayServices, 'skills'>, out: CanonicalRequest, principal: Principal): Injected {
  const offered = skillsToOffer(svc.skills, out, principal.key?.id);
  if (offered.length === 0) return { request: out, skills: NONE };
  return { request: withSkillTools(out, offered), skills: new Map(offered.map((s) => [s.name, s])) };
}

/**
 * While the model's (non-streamed) answer calls only offered skills: run them, send the results
 * back, and take the next answer. The last answer carries the usage of every round.
 */
export async function runSkillRounds(svc: CompletionDeps & Pick<GatewayServices, 'skills'>, first: CompletionStarted, input: CompletionInput, resolution: Resolution, skills: Map<string, SkillRecord>): Promise<CompletionStarted> {
  let cur = first;
  let req = input.canonical;
  const rounds = svc.state.fileConfig.skills.maxToolRounds;
  for (let i = 0; i < rounds; i++) {
    const r = cur.result;
    if (r.stream) return cur;
    const calls = r.response.toolCalls;
    if (calls.length === 0 || !calls.every((c) => skills.has(c.name))) return cur;
    req = await runSkillCalls(svc.skills, req, r.response, skills, { apiKeyId: input.principal.key?.id, sessionId: input.sessionId });
    const next = await startCompletion(svc, { ...input, canonical: req }, resolution);
    if (!next.result.stream) next.result.response.usage = addUsage(r.response.usage, next.result.response.usage);
    next.attempts.unshift(...cur.attempts);
    cur = { ...next, startedAt: first.startedAt };
  }
  return cur;
}
