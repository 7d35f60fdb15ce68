/**
 * Applying a compression pipeline to a chat request. Engines: `lite` (whitespace, duplicate
 * system prompts and repeated messages), `caveman` (rules on the configured roles' messages of at
 * least minMessageChars), `rtk` (tool results), `aggressive` (older turns compressed harder: every
 * user message, older assistant messages, older tool results with half the caps), `ultra`
 * (aggressive with ultra-intensity rules, and the middle of a long conversation dropped at a turn
 * boundary, so tool calls and their results stay together). The last user message is always kept.
 */
import type { CanonicalRequest, ContentPart, Message } from '../canonical.js';
import { caveman, type CavemanIntensity } from './caveman.js';
import { lite } from './lite.js';
import { rtk } from './rtk/index.js';
import type { CompressionSettings, Mode } from './settings.js';

export const ENGINES = ['lite', 'caveman', 'rtk', 'aggressive', 'ultra'] as const;
export type Engine = (typeof ENGINES)[number];

export interface Step {
  engine: Engine;
  intensity?: CavemanIntensity;
}

export function pipelineOf(mode: Mode): Step[] {
  switch (mode) {
    case 'off':
      return [];
    case 'lite':
      return [{ engine: 'lite' }];
    case 'standard':
      return [{ engine: 'lite' }, { engine: 'caveman' }];
    case 'aggressive':
      return [{ engine: 'lite' }, { engine: 'aggressive' }];
    case 'ultra':
      return [{ engine: 'lite' }, { engine: 'ultra' }];
    case 'rtk':
      return [{ engine: 'rtk' }];
    case 'stacked':
      return [{ engine: 'rtk' }, { engine: 'caveman' }];
  }
}

export interface Applied {
  request: CanonicalRequest;
  /** Rule family/name → times applied (caveman), and rtk:<filter> → tool results filtered. */
  rules: Map<string, number>;
  engines: Engine[];
}

const mapText = (parts: ContentPart[], f: (t: string) => string): ContentPart[] => parts.map((p) => (p.type === 'text' ? { ...p, text: f(p.text) } : p));

/** The command a tool call ran, when its arguments name one (`command`, `cmd`, `script`). */
function commandsById(messages: Message[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'assistant' || !m.toolCalls) continue;
    for (const c of m.toolCalls) {
      try {
        const a = JSON.parse(c.arguments || '{}') as Record<string, unknown>;
        const cmd = a.command ?? a.cmd ?? a.script;
        const text = Array.isArray(cmd) ? cmd.join(' ') : cmd;
        if (typeof text === 'string') out.set(c.id, text);
      } catch {
        // arguments that are not JSON name no command
      }
    }
  }
  return out;
}

function lastUserIndex(messages: Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return -1;
}

function liteRequest(req: CanonicalRequest, rules: Map<string, number>): CanonicalRequest {
  const system = req.system !== undefined ? lite(req.system) : undefined;
  const out: Message[] = [];
  let prevUser: string | undefined;
  for (const m of req.messages) {
    const text = m.content.map((p) => (p.type === 'text' ? p.text : '\u0000')).join('');
    // A system message repeating the system text, or a user message repeating the one before it.
    if (m.role === 'system' && system !== undefined && lite(text) === system) {
      rules.set('lite/duplicate-system', (rules.get('lite/duplicate-system') ?? 0) + 1);
      continue;
    }
    if (m.role === 'user' && !m.content.some((p) => p.type !== 'text') && text === prevUser) {
      rules.set('lite/repeated-message', (rules.get('lite/repeated-message') ?? 0) + 1);
      continue;
    }
    prevUser = m.role === 'user' ? text : undefined;
    out.push({ ...m, content: mapText(m.content, lite) } as Message);
  }
  return { ...req, ...(system !== undefined ? { system } : {}), messages: out };
}

function cavemanRequest(req: CanonicalRequest, s: CompressionSettings, rules: Map<string, number>, intensity: CavemanIntensity, everyUser: boolean, olderAssistants: boolean): CanonicalRequest {
  const roles = new Set(s.caveman.roles);
  const last = lastUserIndex(req.messages);
  const min = s.caveman.minMessageChars;
  const messages = req.messages.map((m, i) => {
    const older = i < req.messages.length - 2;
    const take = (m.role === 'user' && roles.has('user')) || (m.role === 'assistant' && (roles.has('assistant') || (olderAssistants && older)));
    if (!take) return m;
    const length = m.content.reduce((n, p) => n + (p.type === 'text' ? p.text.length : 0), 0);
    if (length < min && !(everyUser && m.role === 'user' && i !== last)) return m;
    return { ...m, content: mapText(m.content, (t) => caveman(t, m.role === 'assistant' ? 'lite' : intensity, s.caveman.language, rules)) } as Message;
  });
  const system = req.system !== undefined && roles.has('system') && req.system.length >= min ? caveman(req.system, intensity, s.caveman.language, rules) : req.system;
  return { ...req, ...(system !== undefined ? { system } : {}), messages };
}

function rtkRequest(req: CanonicalRequest, s: CompressionSettings, rules: Map<string, number>, onlyOlder: boolean, raw?: (output: string) => string | undefined): CanonicalRequest {
  const commands = commandsById(req.messages);
  const limits = onlyOlder ? { maxLines: Math.max(10, Math.floor(s.rtk.maxLines / 2)), maxChars: Math.max(500, Math.floor(s.rtk.maxChars / 2)), collapseRepeats: s.rtk.collapseRepeats } : s.rtk;
  const messages = req.messages.map((m, i) => {
    if (m.role !== 'tool') return m;
    if (onlyOlder && i >= req.messages.length - 2) return m;
    return {
      ...m,
      content: mapText(m.content, (t) => {
        const r = rtk(t, limits, commands.get(m.toolCallId));
        if (r.text === t.trim()) return t;
        rules.set(`rtk/${r.filter}`, (rules.get(`rtk/${r.filter}`) ?? 0) + 1);
        const id = raw?.(t);
        return id ? `${r.text}\n[raw output: ${id}]` : r.text;
      }),
    } as Message;
  });
  return { ...req, messages };
}

/** Keep the first user message and the last `keep` messages, cutting at an assistant message. */
function dropMiddle(req: CanonicalRequest, keep: number, rules: Map<string, number>): CanonicalRequest {
  const m = req.messages;
  if (m.length <= keep + 2 || m[0]!.role !== 'user') return req;
  let j = m.length - keep;
  while (j < m.length && m[j]!.role !== 'assistant') j++;
  if (j >= m.length - 1 || j <= 1) return req;
  const dropped = j - 1;
  rules.set('ultra/dropped-messages', (rules.get('ultra/dropped-messages') ?? 0) + dropped);
  const note = `[${dropped} earlier messages were left out to save context]`;
  return { ...req, system: req.system ? `${req.system}\n\n${note}` : note, messages: [m[0]!, ...m.slice(j)] };
}

export function applyPipeline(req: CanonicalRequest, steps: Step[], s: CompressionSettings, raw?: (output: string) => string | undefined): Applied {
  const rules = new Map<string, number>();
  let out = req;
  for (const step of steps) {
    switch (step.engine) {
      case 'lite':
        out = liteRequest(out, rules);
        break;
      case 'caveman':
        out = cavemanRequest(out, s, rules, step.intensity ?? s.caveman.intensity, false, false);
        break;
      case 'rtk':
        out = rtkRequest(out, s, rules, false, raw);
        break;
      case 'aggressive':
        out = rtkRequest(cavemanRequest(out, s, rules, step.intensity ?? 'full', true, true), s, rules, true, raw);
        break;
      case 'ultra':
        out = dropMiddle(rtkRequest(cavemanRequest(out, s, rules, 'ultra', true, true), s, rules, true, raw), 8, rules);
        break;
    }
  }
  return { request: out, rules, engines: steps.map((x) => x.engine) };
}
