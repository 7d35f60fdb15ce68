/**
 * The A2A server's built-in skills. Each reads the gateway's real state through its own routes (in
 * process, as the control socket), and smart-routing answers the conversation through routing.
 */
import type { InProcessCall } from '../../in-process.js';
import { messageOf } from '../../in-process.js';
import type { GatewayServices } from '../../services.js';
import type { A2aMessage, Artifact } from './store.js';

export interface SkillRun {
  svc: GatewayServices;
  call: InProcessCall;
  messages: A2aMessage[];
  metadata: Record<string, unknown>;
}

export interface SkillResult {
  artifacts: Artifact[];
  metadata: Record<string, unknown>;
}

export interface A2aSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  run: (r: SkillRun) => Promise<SkillResult>;
}

export class SkillFailure extends Error {}

async function get<T>(r: SkillRun, url: string): Promise<T> {
  const res = await r.call({ method: 'GET', url, trusted: true });
  if (res.status >= 400) throw new SkillFailure(`${url}: HTTP ${res.status}: ${messageOf(res)}`);
  return JSON.parse(res.body) as T;
}

const lastUser = (messages: A2aMessage[]) => [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';

/** The model smart-routing uses: metadata.model, else the first combo, else the first chat model. */
function defaultModel(svc: GatewayServices): string | undefined {
  const c = svc.state.catalog;
  const combo = c.combos.keys().next();
  if (!combo.done) return combo.value;
  for (const p of c.ordered) {
    if (!p.config.enabled) continue;
    for (const m of p.models.values()) if (m.type === 'chat' && !m.hidden) return `${p.config.id}/${m.id}`;
  }
  return undefined;
}

export const A2A_SKILLS: A2aSkill[] = [
  {
    id: 'smart-routing',
    name: 'Smart routing',
    description: 'Answers the conversation through the gateway’s routing (combos, fallback, budgets); metadata.model picks the model or combo.',
    tags: ['chat', 'routing'],
    run: async (r) => {
      const model = typeof r.metadata.model === 'string' ? r.metadata.model : defaultModel(r.svc);
      if (!model) throw new SkillFailure('no model or combo is configured to answer with');
      const messages = r.messages.map((m) => ({ role: m.role === 'agent' ? 'assistant' : m.role, content: m.content }));
      const res = await r.call({ method: 'POST', url: '/v1/chat/completions', body: { model, messages }, principal: { trusted: true } });
      if (res.status >= 400) throw new SkillFailure(`${model}: HTTP ${res.status}: ${messageOf(res)}`);
      const j = JSON.parse(res.body) as { model: string; choices: { message: { content: string | null } }[]; usage?: unknown };
      const provider = res.headers['x-gateway-provider'];
      return { artifacts: [{ type: 'text', text: j.choices[0]?.message.content ?? '' }], metadata: { model: j.model, ...(provider ? { provider } : {}), usage: j.usage ?? null } };
    },
  },
  {
    id: 'quota-management',
    name: 'Quota management',
    description: 'Budgets and their spend, token limits, and accounts cooling down after rate limits.',
    tags: ['quota', 'budget'],
    run: async (r) => {
      const [budgets, limits, cooldowns] = await Promise.all([
        get<{ budgets: { apiKeyId: string; spent?: number; limit?: number }[] }>(r, '/api/usage/budget'),
        get<unknown>(r, '/api/usage/token-limits'),
        get<unknown>(r, '/api/rate-limits'),
      ]);
      const text = `${budgets.budgets.length} budget(s) set; token limits and cool-downs in the data artifact.`;
      return { artifacts: [{ type: 'text', text }, { type: 'data', data: { budgets: budgets.budgets, tokenLimits: limits, rateLimits: cooldowns } }], metadata: {} };
    },
  },
  {
    id: 'provider-discovery',
    name: 'Provider discovery',
    description: 'The providers configured, their kind and state, and the models they serve.',
    tags: ['providers', 'models'],
    run: async (r) => {
      const p = await get<{ providers: { id: string; kind: string; enabled: boolean; models?: { id: string }[] }[] }>(r, '/api/providers');
      const list = p.providers.map((x) => ({ id: x.id, kind: x.kind, enabled: x.enabled, models: (x.models ?? []).map((m) => m.id) }));
      const text = list.length === 0 ? 'No providers are configured.' : list.map((x) => `${x.id} (${x.kind}${x.enabled ? '' : ', disabled'}): ${x.models.join(', ') || 'no models declared'}`).join('\n');
      return { artifacts: [{ type: 'text', text }, { type: 'data', data: { providers: list } }], metadata: { providers: list.length } };
    },
  },
  {
    id: 'cost-analysis',
    name: 'Cost analysis',
    description: 'Spend, tokens and requests by model over the last days (metadata.days, or "N days" in the message; default 7).',
    tags: ['cost', 'usage'],
    run: async (r) => {
      const asked = typeof r.metadata.days === 'number' ? r.metadata.days : Number(/(\d{1,3})\s*days?/i.exec(lastUser(r.messages))?.[1] ?? 7);
      const days = Math.min(366, Math.max(1, Math.floor(asked) || 7));
      const h = await get<{ totals: { requests: number; cost: number; tokensIn: number; tokensOut: number }; history: { group: string; cost: number; requests: number }[] }>(r, `/api/usage/history?days=${days}&groupBy=model`);
      const byModel = new Map<string, { cost: number; requests: number }>();
      for (const row of h.history) {
        const m = byModel.get(row.group) ?? { cost: 0, requests: 0 };
        m.cost += row.cost;
        m.requests += row.requests;
        byModel.set(row.group, m);
      }
      const top = [...byModel.entries()].sort((a, b) => b[1].cost - a[1].cost);
      const text = `Last ${days} day(s): ${h.totals.requests} requests, $${h.totals.cost.toFixed(4)}${top.length ? `; by cost: ${top.map(([m, v]) => `${m || '(none)'} $${v.cost.toFixed(4)} (${v.requests})`).join(', ')}` : ''}.`;
      return { artifacts: [{ type: 'text', text }, { type: 'data', data: { days, totals: h.totals, byModel: Object.fromEntries(top) } }], metadata: { days } };
    },
  },
  {
    id: 'health-report',
    name: 'Health report',
    description: 'Provider health: breakers, cool-downs, lock-outs and the overall status.',
    tags: ['health'],
    run: async (r) => {
      const h = await get<{ status: string; configuredCount: number; activeCount: number }>(r, '/api/monitoring/health');
      return { artifacts: [{ type: 'text', text: `Status ${h.status}: ${h.activeCount} of ${h.configuredCount} provider(s) taking traffic.` }, { type: 'data', data: h }], metadata: { status: h.status } };
    },
  },
];
