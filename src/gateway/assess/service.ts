/**
 * Assessment: every chat model in scope (all, one provider, or one model) is probed with a one-token
 * chat through the gateway's own routing (in-process, no cache, no memory), and categorised: its
 * latency class (fast under 1 s, standard under 5 s, slow, or unavailable with the error), its price
 * tier (free, standard, pro, ultra from its input price) and its declared or guessed capabilities. The
 * probes are ordinary attempts, so their latencies and failures go into the routing metrics the
 * latency, sla-aware and lkgp strategies read: a newly assessed model is measured before real traffic.
 * The latest result of each model is kept (gateway database settings) with the run that produced it.
 */
import { randomBytes } from 'node:crypto';
import { tierOf } from '../analytics/summaries.js';
import { mapLimit } from '../../http/map-limit.js';
import { chatOnce, type InProcessCall } from '../in-process.js';
import { modelCapabilities } from '../providers/index.js';
import type { GatewayServices } from '../services.js';
import { GatewayError } from '../errors.js';

export type AssessScope = { type: 'all' } | { type: 'provider'; providerId: string } | { type: 'model'; modelId: string };

export interface Assessment {
  model: string;
  provider: string;
  ok: boolean;
  latencyMs: number;
  category: 'fast' | 'standard' | 'slow' | 'unavailable';
  tier: 'free' | 'standard' | 'pro' | 'ultra';
  capabilities: Record<string, unknown>;
  error: string | null;
  assessedAt: string;
  runId: string;
}

export interface AssessRun {
  id: string;
  scope: AssessScope;
  trigger: string;
  startedAt: string;
  finishedAt: string;
  results: Assessment[];
  summary: { total: number; ok: number; unavailable: number; byCategory: Record<string, number>; byTier: Record<string, number> };
}

const SETTING = 'assess.latest';
const RUNS = 'assess.runs';
const MAX_MODELS = 200;

export class Assessor {
  constructor(private readonly svc: () => GatewayServices) {}

  private targets(scope: AssessScope): { provider: string; model: string }[] {
    const svc = this.svc();
    const out: { provider: string; model: string }[] = [];
    for (const rt of svc.state.catalog.providers.values()) {
      if (!rt.config.enabled) continue;
      if (scope.type === 'provider' && rt.config.id !== scope.providerId) continue;
      for (const m of rt.models.values()) {
        if (m.type !== 'chat' || m.hidden) continue;
        const ref = `${rt.config.id}/${m.id}`;
        if (scope.type === 'model' && scope.modelId !== ref && scope.modelId !== m.id) continue;
        out.push({ provider: rt.config.id, model: ref });
      }
    }
    if (out.length === 0) throw new GatewayError('invalid', scope.type === 'all' ? 'no chat models are configured' : scope.type === 'provider' ? `no enabled provider ${scope.providerId} with chat models` : `no chat model ${scope.modelId}`);
    if (out.length > MAX_MODELS) throw new GatewayError('invalid', `${out.length} models in scope; assess at most ${MAX_MODELS} at once (narrow the scope)`);
    return out;
  }

  async run(scope: AssessScope, trigger: string, call: InProcessCall): Promise<AssessRun> {
    const svc = this.svc();
    const targets = this.targets(scope);
    const id = `asr_${randomBytes(6).toString('hex')}`;
    const startedAt = new Date(svc.clock.now()).toISOString();
    const results = await mapLimit(targets, 4, async (t): Promise<Assessment> => {
      const t0 = svc.clock.now();
      let error: string | null = null;
      try {
        const r = await chatOnce(call, { model: t.model, messages: [{ role: 'user', content: 'Reply with OK.' }], max_tokens: 1, temperature: 0 }, `${id}-${t.model}`);
        if (r.error !== undefined) error = `HTTP ${r.status}: ${r.error}`;
      } catch (e) {
        error = (e as Error).message;
      }
      const latencyMs = svc.clock.now() - t0;
      const rt = svc.state.catalog.providers.get(t.provider)!;
      const modelId = t.model.slice(t.provider.length + 1);
      return {
        model: t.model,
        provider: t.provider,
        ok: error === null,
        latencyMs,
        category: error !== null ? 'unavailable' : latencyMs < 1000 ? 'fast' : latencyMs < 5000 ? 'standard' : 'slow',
        tier: tierOf(svc.state.catalog.pricing, t.provider, modelId),
        capabilities: { ...modelCapabilities(rt.conn, modelId) },
        error,
        assessedAt: new Date(svc.clock.now()).toISOString(),
        runId: id,
      };
    });
    results.sort((a, b) => a.model.localeCompare(b.model));
    const count = (key: 'category' | 'tier') => results.reduce<Record<string, number>>((m, r) => ((m[r[key]] = (m[r[key]] ?? 0) + 1), m), {});
    const run: AssessRun = {
      id,
      scope,
      trigger,
      startedAt,
      finishedAt: new Date(svc.clock.now()).toISOString(),
      results,
      summary: { total: results.length, ok: results.filter((r) => r.ok).length, unavailable: results.filter((r) => !r.ok).length, byCategory: count('category'), byTier: count('tier') },
    };
    const latest = this.latest();
    for (const r of results) latest[r.model] = r;
    svc.state.db.setSetting(SETTING, JSON.stringify(latest));
    const runs = this.runs();
    const { results: _r, ...summary } = run;
    runs.unshift(summary);
    svc.state.db.setSetting(RUNS, JSON.stringify(runs.slice(0, 20)));
    return run;
  }

  /** The latest assessment of every model assessed (models no longer configured left out). */
  latest(): Record<string, Assessment> {
    try {
      return JSON.parse(this.svc().state.db.getSetting(SETTING) ?? '{}') as Record<string, Assessment>;
    } catch {
      return {};
    }
  }

  runs(): Omit<AssessRun, 'results'>[] {
    try {
      return JSON.parse(this.svc().state.db.getSetting(RUNS) ?? '[]') as AssessRun[];
    } catch {
      return [];
    }
  }
}
