/**
 * The MCP server's tools. Each answers from the gateway's real state by calling its own routes in
 * process: inference routes as the MCP caller's API key (its model allow-list, budgets and usage
 * log apply), management reads as the control socket does. Search and fetch are offered only when
 * configured.
 */
import { z } from 'zod';
import type { Principal } from '../../auth.js';
import { messageOf, type InProcessCall } from '../../in-process.js';
import type { GatewayServices } from '../../services.js';

export interface ToolContext {
  svc: GatewayServices;
  call: InProcessCall;
  principal: Principal;
}

export interface ToolOutcome {
  ok: boolean;
  text: string;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodRawShape;
  available?: (svc: GatewayServices) => boolean;
  run: (args: Record<string, unknown>, c: ToolContext) => Promise<ToolOutcome>;
}

/** An in-process answer as tool output: the JSON body, or the error message when it failed. */
async function answer(c: ToolContext, method: 'GET' | 'POST', url: string, body?: unknown, inference = false): Promise<ToolOutcome> {
  const r = await c.call({ method, url, body, ...(inference ? { principal: c.principal } : { trusted: true }) });
  if (r.status < 400) return { ok: true, text: r.body };
  return { ok: false, text: `HTTP ${r.status}: ${messageOf(r)}` };
}

const q = (params: Record<string, unknown>) => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
};

export const MCP_TOOLS: McpTool[] = [
  {
    name: 'list_models',
    title: 'List models',
    description: 'Models the caller may use: every provider model, alias and combo, as /v1/models lists them.',
    input: {},
    run: (_a, c) => answer(c, 'GET', '/v1/models', undefined, true),
  },
  {
    name: 'list_combos',
    title: 'List combos',
    description: 'Combos (routing groups): their strategy and ordered targets.',
    input: {},
    run: (_a, c) => answer(c, 'GET', '/api/combos'),
  },
  {
    name: 'chat_completion',
    title: 'Chat completion',
    description: 'Run a chat completion through the gateway’s routing (aliases, combos, fallback, caching, budgets) as the caller’s API key.',
    input: {
      model: z.string().min(1).describe('model id: provider/model, an alias or a combo'),
      messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).min(1),
      max_tokens: z.number().int().positive().optional(),
      temperature: z.number().min(0).max(2).optional(),
    },
    run: async (a, c) => {
      const out = await answer(c, 'POST', '/v1/chat/completions', { model: a.model, messages: a.messages, ...(a.max_tokens !== undefined ? { max_tokens: a.max_tokens } : {}), ...(a.temperature !== undefined ? { temperature: a.temperature } : {}) }, true);
      if (!out.ok) return out;
      const j = JSON.parse(out.text) as { model: string; choices: { message: { content: string | null }; finish_reason: string }[]; usage?: unknown };
      return { ok: true, text: JSON.stringify({ model: j.model, content: j.choices[0]?.message.content ?? '', finish_reason: j.choices[0]?.finish_reason, usage: j.usage }) };
    },
  },
  {
    name: 'usage_summary',
    title: 'Usage and cost',
    description: 'Requests, tokens and cost over the last days, grouped by model, provider, API key or modality.',
    input: { days: z.number().int().min(1).max(366).optional(), group_by: z.enum(['model', 'provider', 'apiKey', 'modality']).optional() },
    run: (a, c) => answer(c, 'GET', `/api/usage/history${q({ days: a.days ?? 7, groupBy: a.group_by ?? 'model' })}`),
  },
  {
    name: 'provider_health',
    title: 'Provider health',
    description: 'Circuit breakers, cool-downs and model lock-outs of every provider.',
    input: {},
    run: (_a, c) => answer(c, 'GET', '/api/monitoring/health'),
  },
  {
    name: 'cache_stats',
    title: 'Cache statistics',
    description: 'Response cache size, hit rate and idempotency window.',
    input: {},
    run: (_a, c) => answer(c, 'GET', '/api/cache/stats'),
  },
  {
    name: 'budget_status',
    title: 'Budget status',
    description: 'Spend against the budget of an API key (default: the caller’s), or every budget.',
    input: { api_key_id: z.string().optional().describe('an API key id; "all" for every budget') },
    run: (a, c) => {
      const id = a.api_key_id === 'all' ? undefined : ((a.api_key_id as string | undefined) ?? c.principal.key?.id);
      return answer(c, 'GET', `/api/usage/budget${q({ apiKeyId: id })}`);
    },
  },
  {
    name: 'web_search',
    title: 'Web search',
    description: 'Search the web through the configured search provider.',
    input: { query: z.string().min(1), max_results: z.number().int().min(1).max(50).optional() },
    available: (svc) => svc.state.fileConfig.search.providers.length > 0,
    run: (a, c) => answer(c, 'POST', '/v1/search', { query: a.query, ...(a.max_results !== undefined ? { max_results: a.max_results } : {}) }, true),
  },
  {
    name: 'web_fetch',
    title: 'Web fetch',
    description: 'Fetch a web page as markdown, text or HTML (the SSRF policy applies).',
    input: { url: z.string().url(), format: z.enum(['markdown', 'text', 'html']).optional() },
    available: (svc) => svc.state.fileConfig.webFetch.builtin.enabled || Object.keys(svc.state.fileConfig.webFetch.hosted).length > 0,
    run: (a, c) => answer(c, 'POST', '/v1/web/fetch', { url: a.url, format: a.format ?? 'markdown' }, true),
  },
];

export function availableTools(svc: GatewayServices): McpTool[] {
  return MCP_TOOLS.filter((t) => !t.available || t.available(svc));
}
