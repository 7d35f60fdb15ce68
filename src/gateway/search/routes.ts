/**
 * Web search routes:
 *   GET  /v1/search             the configured providers and what each supports
 *   POST /v1/search             `{query, provider?, max_results?, search_type?, time_range?, safe_search?}`
 *   GET  /v1/search/analytics   per-provider requests, upstream calls, cache hits, coalesced queries, errors, latency
 * A key's policy (gateway.yaml `search.policies`, by key name) may turn search off for it, limit its
 * providers and cap max_results.
 */
import { badRequest, HttpError } from '../../http/errors.js';
import { sendJson } from '../../http/respond.js';
import type { Route, Router } from '../../http/router.js';
import type { Principal } from '../auth.js';
import { readInferenceBody } from '../routes/inference/completion-route.js';
import type { SearchConfig } from './config.js';
import { CAPABILITIES, type SearchQuery, type TimeRange } from './providers.js';
import type { SearchService } from './service.js';

const TIME_RANGES: readonly TimeRange[] = ['day', 'week', 'month', 'year'];

export function searchRoutes(r: Router, deps: { config: () => SearchConfig; service: SearchService }, k: (route: Route) => Route): void {
  k(
    r.get('/v1/search', (ctx) => {
      const cfg = deps.config();
      sendJson(ctx.res, 200, {
        object: 'list',
        data: cfg.providers.map((p, i) => ({ id: p.id, kind: p.kind, default: p.isDefault || (i === 0 && !cfg.providers.some((x) => x.isDefault)), capabilities: CAPABILITIES[p.kind] })),
      });
    }),
  );

  k(
    r.post('/v1/search', async (ctx) => {
      const body = (await readInferenceBody(ctx)) as Record<string, unknown>;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
      const cfg = deps.config();
      if (typeof body.query !== 'string' || body.query.trim() === '' || body.query.length > 2000) throw badRequest('query is required (a string of 1 to 2000 characters)');
      if (body.max_results !== undefined && !(Number.isInteger(body.max_results) && (body.max_results as number) >= 1 && (body.max_results as number) <= 50)) throw badRequest('max_results must be an integer from 1 to 50');
      const searchType = body.search_type ?? 'web';
      if (searchType !== 'web' && searchType !== 'news') throw badRequest('search_type must be web or news');
      if (body.time_range !== undefined && !TIME_RANGES.includes(body.time_range as TimeRange)) throw badRequest(`time_range must be one of ${TIME_RANGES.join(', ')}`);
      if (body.safe_search !== undefined && typeof body.safe_search !== 'boolean') throw badRequest('safe_search must be a boolean');
      if (body.provider !== undefined && typeof body.provider !== 'string') throw badRequest('provider must be a string');
      if (cfg.providers.length === 0) throw badRequest('no search provider is configured (gateway.yaml search.providers)');
      const principal = ctx.state.principal as Principal | undefined;
      const policy = principal?.key ? cfg.policies[principal.key.name] : undefined;
      if (policy && !policy.enabled) throw new HttpError(403, `API key "${principal!.key!.name}" may not use web search`, { code: 'search_not_allowed' });
      const allowed = policy?.providers ? cfg.providers.filter((p) => policy.providers!.includes(p.id)) : cfg.providers;
      const provider = body.provider !== undefined ? cfg.providers.find((p) => p.id === body.provider) : (allowed.find((p) => p.isDefault) ?? allowed[0]);
      if (body.provider !== undefined && !provider) throw badRequest(`search provider ${String(body.provider)} is not configured`);
      if (!provider || !allowed.includes(provider)) throw new HttpError(403, `API key "${principal?.key?.name}" may not use search provider ${String(body.provider ?? '')}`.trim(), { code: 'search_not_allowed' });
      const cap = Math.min(CAPABILITIES[provider.kind].max_results, policy?.maxResults ?? 50);
      const q: SearchQuery = {
        query: body.query,
        maxResults: Math.min((body.max_results as number | undefined) ?? 10, cap),
        searchType,
        ...(body.time_range ? { timeRange: body.time_range as TimeRange } : {}),
        safeSearch: (body.safe_search as boolean | undefined) ?? true,
      };
      const a = await deps.service.search(cfg, provider, q);
      sendJson(ctx.res, 200, { object: 'search.results', query: body.query, provider: provider.id, results: a.results, cached: a.cached });
    }),
  );

  k(r.get('/v1/search/analytics', (ctx) => sendJson(ctx.res, 200, deps.service.analytics(deps.config()))));
}
