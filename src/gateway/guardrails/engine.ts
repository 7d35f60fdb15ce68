/**
 * Running the guardrails over a request: the text is seen as slots (the system text, each text part
 * of each message, or a JSON operation's prompt fields), each guardrail in priority order looks at
 * the slots it cares about, and its action blocks (a 400 naming it), redacts (the slots are
 * rewritten before anything goes upstream) or warns (logged and recorded). Hits are returned for the
 * request log as `name:action` pairs.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { PIECES_ITEMS } from '../../http/json-pieces.js';
import { ownTurn } from '../../http/turns.js';
import type { CanonicalRequest, ContentPart, Message } from '../canonical.js';
import type { GuardrailConfig, GuardrailName } from './config.js';
import { INJECTION_RULES, OverBudget, PII_RULES, SECRET_RULES, redact, scan, type Budget, type Finding } from './detectors.js';
import { runOnLane } from './lane.js';

export type SlotRole = 'system' | 'user' | 'assistant' | 'tool' | 'field';

export interface Slot {
  role: SlotRole;
  text: string;
}

export interface GuardrailResult {
  name: GuardrailName;
  action: GuardrailConfig['action'];
  fired: boolean;
  findings: { kind: string; slot: number }[];
}

export interface GuardrailRun {
  slots: Slot[];
  results: GuardrailResult[];
  /** The guardrail that blocked, if one did. */
  blockedBy?: GuardrailResult;
  /** `name:action` of every guardrail that fired. */
  hits: string[];
  changed: boolean;
}

const ROLES: Record<Exclude<GuardrailName, 'max-size'>, ReadonlySet<SlotRole>> = {
  secrets: new Set(['system', 'user', 'assistant', 'tool', 'field']),
  pii: new Set(['system', 'user', 'assistant', 'tool', 'field']),
  'prompt-injection': new Set(['user', 'tool', 'field']),
};
const RULES = { secrets: SECRET_RULES, pii: PII_RULES, 'prompt-injection': INJECTION_RULES };

const NONE_DISABLED: ReadonlySet<string> = new Set();

/** Names from `x-gateway-disabled-guardrails: a, b`. */
export function disabledFromHeaders(headers: IncomingHttpHeaders): ReadonlySet<string> {
  const v = headers['x-gateway-disabled-guardrails'];
  if (v === undefined) return NONE_DISABLED;
  const text = Array.isArray(v) ? v.join(',') : (v ?? '');
  return new Set(
    text
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
}

/** A result's findings until the first one (shared: nothing is pushed into it). */
const NO_FINDINGS: GuardrailResult['findings'] = Object.freeze([]) as unknown as GuardrailResult['findings'];

/**
 * The guardrails over `slots`, in order. Allocates per fired guardrail, not per slot: `run.slots`
 * is the caller's array until a redaction rewrites a slot (then a copy, the caller's left as it was).
 * With a budget, throws OverBudget (before the costly part) when the scan would do more work.
 */
export function runGuardrails(config: readonly GuardrailConfig[], slots: Slot[], disabled: ReadonlySet<string>, budget?: Budget): GuardrailRun {
  const run: GuardrailRun = { slots, results: [], hits: [], changed: false };
  /** Rewrite slot i (copying the slots on the first rewrite). */
  const rewrite = (i: number, text: string): void => {
    if (!run.changed) {
      run.slots = run.slots.map((s) => ({ ...s }));
      run.changed = true;
    }
    run.slots[i]!.text = text;
  };
  for (const g of config) {
    if (!g.enabled || disabled.has(g.name)) continue;
    const result: GuardrailResult = { name: g.name, action: g.action, fired: false, findings: NO_FINDINGS };
    if (g.name === 'max-size') {
      let total = 0;
      for (const s of run.slots) total += s.text.length;
      const max = g.maxChars ?? Infinity;
      if (total > max) {
        result.fired = true;
        result.findings = [{ kind: `${total} characters > ${max}`, slot: -1 }];
        if (g.action === 'redact') {
          // Keep the first max characters, across the slots in order.
          let left = max;
          for (let i = 0; i < run.slots.length; i++) {
            const text = run.slots[i]!.text;
            if (text.length > left) rewrite(i, text.slice(0, left));
            left -= run.slots[i]!.text.length;
          }
        }
      }
    } else {
      const roles = ROLES[g.name];
      const rules = RULES[g.name];
      for (let i = 0; i < run.slots.length; i++) {
        const s = run.slots[i]!;
        if (!roles.has(s.role) || s.text.length === 0) continue;
        const found: Finding[] = scan(s.text, rules, budget);
        if (found.length === 0) continue;
        if (!result.fired) {
          result.fired = true;
          result.findings = [];
        }
        for (const f of found) result.findings.push({ kind: f.kind, slot: i });
        if (g.action === 'redact') rewrite(i, redact(s.text, found));
      }
    }
    run.results.push(result);
    if (!result.fired) continue;
    run.hits.push(`${g.name}:${g.action}`);
    if (g.action === 'block') {
      run.blockedBy = result;
      break;
    }
  }
  return run;
}

/**
 * How much RE2 work (in characters, see detectors.ts) a request's guardrails may do on the event
 * loop: about a millisecond or two. A request that needs more is scanned on the guardrail thread.
 */
const LOOP_BUDGET = 1000;
/** Texts longer than this (in total) go to the thread at once: finding their regions alone costs milliseconds. */
const LOOP_TEXT_MAX = 16_384;

/** runGuardrails, on the loop when cheap, else on the guardrail thread (same result either way). */
export async function guardrailsFor(config: readonly GuardrailConfig[], slots: Slot[], disabled: ReadonlySet<string>): Promise<GuardrailRun> {
  let total = 0;
  for (const s of slots) total += s.text.length;
  try {
    // A long text gets no budget: max-size still decides on the loop, the first scan goes to the thread.
    return runGuardrails(config, slots, disabled, { left: total <= LOOP_TEXT_MAX ? LOOP_BUDGET : -1 });
  } catch (e) {
    if (!(e instanceof OverBudget)) throw e;
  }
  // Thousands of slots: packing them for the thread is a step of its own, in a turn of its own.
  if (slots.length > PIECES_ITEMS) await ownTurn();
  return runOnLane(config, slots, disabled);
}

/** A request a guardrail blocked ('invalid': a 400 in the client's format), naming the guardrail. */
export class GuardrailBlocked extends GatewayError {
  constructor(readonly guardrail: GuardrailName, kinds: string) {
    super('invalid', `request blocked by guardrail ${guardrail} (${kinds})`, { code: 'guardrail_blocked' });
  }
}

export function blockedError(r: GuardrailResult): GuardrailBlocked {
  return new GuardrailBlocked(r.name, [...new Set(r.findings.map((f) => f.kind))].join(', '));
}

// ---- canonical requests ----

function textSlots(req: CanonicalRequest): Slot[] {
  const out: Slot[] = [];
  if (req.system) out.push({ role: 'system', text: req.system });
  for (const m of req.messages) for (const p of m.content) if (p.type === 'text') out.push({ role: m.role, text: p.text });
  return out;
}

function withSlots(req: CanonicalRequest, slots: Slot[]): CanonicalRequest {
  let i = 0;
  const next: CanonicalRequest = { ...req };
  if (req.system) next.system = slots[i++]!.text;
  next.messages = req.messages.map((m) => ({ ...m, content: m.content.map((p): ContentPart => (p.type === 'text' ? { ...p, text: slots[i++]!.text } : p)) }) as Message);
  return next;
}

export interface GuardedRequest {
  request: CanonicalRequest;
  hits: string[];
}

/** Guard a chat request: throws the block, returns the (possibly redacted) request and the hits. */
export async function guardRequest(config: readonly GuardrailConfig[], headers: IncomingHttpHeaders, req: CanonicalRequest, log: Logger, requestId: string): Promise<GuardedRequest> {
  const run = await guardrailsFor(config, textSlots(req), disabledFromHeaders(headers));
  report(run, log, requestId);
  if (run.blockedBy) throw blockedError(run.blockedBy);
  return { request: run.changed ? withSlots(req, run.slots) : req, hits: run.hits };
}

/** Guard an answer's text (secrets and PII; a `block` action redacts an answer, as it already cost). */
/** The rails that look at answers (secrets and PII; block redacts), per configuration (it changes only on reload). */
const NO_HITS = Object.freeze([]) as unknown as string[];
const OUTPUT_RAILS = new WeakMap<readonly GuardrailConfig[], GuardrailConfig[]>();

export async function guardAnswer(config: readonly GuardrailConfig[], headers: IncomingHttpHeaders, content: ContentPart[]): Promise<{ content: ContentPart[]; hits: string[] }> {
  let outputRails = OUTPUT_RAILS.get(config);
  if (!outputRails) OUTPUT_RAILS.set(config, (outputRails = config.filter((g) => g.name === 'secrets' || g.name === 'pii').map((g) => (g.action === 'block' ? { ...g, action: 'redact' as const } : g))));
  const slots: Slot[] = [];
  for (const p of content) if (p.type === 'text') slots.push({ role: 'assistant', text: p.text });
  if (slots.length === 0) return { content, hits: NO_HITS };
  const run = await guardrailsFor(outputRails, slots, disabledFromHeaders(headers));
  if (!run.changed) return { content, hits: run.hits.length === 0 ? NO_HITS : run.hits.map((h) => `output:${h}`) };
  let i = 0;
  return { content: content.map((p) => (p.type === 'text' ? { ...p, text: run.slots[i++]!.text } : p)), hits: run.hits.map((h) => `output:${h}`) };
}

// ---- JSON operations (embeddings, images, rerank, moderations, speech, video, music) ----

const GUARDED_FIELDS = ['input', 'prompt', 'query', 'documents', 'instructions'];

/** Guard the prompt fields of a JSON operation's body; returns the body to send (rewritten when redacted). */
export async function guardBody(config: readonly GuardrailConfig[], headers: IncomingHttpHeaders, body: Record<string, unknown>, log: Logger, requestId: string): Promise<{ body: Record<string, unknown>; hits: string[] }> {
  const slots: Slot[] = [];
  const visit = (v: unknown): void => {
    if (typeof v === 'string') slots.push({ role: 'field', text: v });
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) visit(x);
  };
  for (const f of GUARDED_FIELDS) if (f in body) visit(body[f]);
  if (slots.length === 0) return { body, hits: [] };
  const run = await guardrailsFor(config, slots, disabledFromHeaders(headers));
  report(run, log, requestId);
  if (run.blockedBy) throw blockedError(run.blockedBy);
  if (!run.changed) return { body, hits: run.hits };
  let i = 0;
  const rewrite = (v: unknown): unknown => {
    if (typeof v === 'string') return run.slots[i++]!.text;
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rewrite(x)]));
    return v;
  };
  const out = { ...body };
  for (const f of GUARDED_FIELDS) if (f in body) out[f] = rewrite(body[f]);
  return { body: out, hits: run.hits };
}

function report(run: GuardrailRun, log: Logger, requestId: string): void {
  for (const r of run.results) {
    if (!r.fired) continue;
    // What was found, never the text itself.
    log.warn({ requestId, guardrail: r.name, action: r.action, kinds: [...new Set(r.findings.map((f) => f.kind))] }, `gateway: guardrail ${r.name} fired (${r.action})`);
  }
}
