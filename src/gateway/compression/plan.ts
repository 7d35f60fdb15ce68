/**
 * Which compression a request gets. With the master switch off, none (source `off`), whatever the
 * request asks. Otherwise the first that applies: the `X-Gateway-Compression` header (`off`,
 * `default`, `engine:<id>`, a mode name, or a compression combo by name, case-insensitive, then by
 * id; anything else is ignored), a compression combo assigned to the request's routing combo, the
 * active profile, the auto-trigger (estimated prompt tokens at or above autoTriggerTokens), the
 * default mode. Prompt-cache markers in the body downgrade aggressive and ultra to standard.
 */
import { ENGINES, pipelineOf, type Engine, type Step } from './modes.js';
import { MODES, type CompressionSettings, type Mode } from './settings.js';
import type { CompressionCombo } from './store.js';

export type PlanSource = 'request-header' | 'routing-override' | 'active-profile' | 'auto-trigger' | 'default' | 'off';

export interface Plan {
  /** A mode name, or `stacked` for a combo whose pipeline is not one mode's. */
  mode: Mode;
  source: PlanSource;
  steps: Step[];
  combo?: string;
}

const ENGINE_MODE: Record<Engine, Mode> = { lite: 'lite', caveman: 'standard', rtk: 'rtk', aggressive: 'aggressive', ultra: 'ultra' };

function modeOfSteps(steps: Step[]): Mode {
  for (const m of MODES) {
    const p = pipelineOf(m);
    if (p.length === steps.length && p.every((s, i) => s.engine === steps[i]!.engine)) return m;
  }
  return steps.length === 1 ? ENGINE_MODE[steps[0]!.engine] : 'stacked';
}

const fromMode = (mode: Mode, source: PlanSource): Plan => ({ mode, source, steps: pipelineOf(mode) });
const fromCombo = (c: CompressionCombo, source: PlanSource): Plan => ({ mode: modeOfSteps(c.pipeline), source, steps: c.pipeline, combo: c.name });

/** A combo by name (case-insensitive; the smallest id when several share it), then by id. */
export function findCombo(combos: readonly CompressionCombo[], ref: string, byName = true): CompressionCombo | undefined {
  const lower = ref.toLowerCase();
  if (byName && lower !== 'off' && lower !== 'default') {
    const named = combos.filter((c) => c.name.toLowerCase() === lower).sort((a, b) => (a.id < b.id ? -1 : 1));
    if (named.length > 0) return named[0];
  }
  return combos.find((c) => c.id === ref);
}

function fromHeader(s: CompressionSettings, value: string, combos: readonly CompressionCombo[]): Plan | undefined {
  const v = value.trim();
  const lower = v.toLowerCase();
  if (lower === 'off') return fromMode('off', 'request-header');
  if (lower === 'default') return fromMode(s.defaultMode, 'request-header');
  if (lower.startsWith('engine:')) {
    const id = lower.slice(7) as Engine;
    return (ENGINES as readonly string[]).includes(id) ? { mode: ENGINE_MODE[id], source: 'request-header', steps: [{ engine: id }] } : undefined;
  }
  if ((MODES as readonly string[]).includes(lower)) return fromMode(lower as Mode, 'request-header');
  const c = findCombo(combos, v);
  return c ? fromCombo(c, 'request-header') : undefined;
}

export interface PlanInput {
  header?: string;
  routingCombo?: string;
  estimatedTokens: () => number;
  cacheMarkers: () => boolean;
}

export function resolvePlan(s: CompressionSettings, combos: readonly CompressionCombo[], input: PlanInput): Plan {
  if (!s.enabled) return fromMode('off', 'off');
  let plan: Plan | undefined = input.header !== undefined ? fromHeader(s, input.header, combos) : undefined;
  if (!plan && input.routingCombo !== undefined) {
    const name = input.routingCombo.toLowerCase();
    const c = combos.find((x) => x.assignments.some((a) => a.toLowerCase() === name));
    if (c) plan = fromCombo(c, 'routing-override');
  }
  if (!plan && s.activeProfile) {
    const c = findCombo(combos, s.activeProfile);
    if (c) plan = fromCombo(c, 'active-profile');
  }
  if (!plan && s.autoTriggerTokens > 0 && input.estimatedTokens() >= s.autoTriggerTokens) plan = fromMode(s.autoMode, 'auto-trigger');
  plan ??= fromMode(s.defaultMode, 'default');
  if (plan.steps.some((x) => x.engine === 'aggressive' || x.engine === 'ultra') && input.cacheMarkers()) {
    const steps = plan.steps.map((x): Step => (x.engine === 'aggressive' || x.engine === 'ultra' ? { engine: 'caveman' } : x));
    plan = { ...plan, steps, mode: modeOfSteps(steps) };
  }
  return plan;
}

/** Whether a client body carries prompt-cache markers (`cache_control`) in its system or messages. */
export function hasCacheMarkers(body: unknown): boolean {
  if (!body || typeof body !== 'object') return false;
  const b = body as { system?: unknown; messages?: unknown; tools?: unknown };
  const scan = (v: unknown, depth: number): boolean => {
    if (depth > 4 || !v || typeof v !== 'object') return false;
    if (Array.isArray(v)) return v.some((x) => scan(x, depth + 1));
    if ('cache_control' in (v as object)) return true;
    return Object.values(v as object).some((x) => typeof x === 'object' && scan(x, depth + 1));
  };
  return scan(b.system, 0) || scan(b.messages, 0) || scan(b.tools, 0);
}
