/**
 * POST /v1/web/fetch: `{url, provider?, format?}` → `{url, title, content, format, provider}`. The
 * page comes from the pool (pool.ts) or from the provider named; errors in OpenAI's error shape.
 */
import type { Egress } from '../../egress/index.js';
import { badRequest, HttpError } from '../../http/errors.js';
import type { Principal } from '../auth.js';
import { sendJson } from '../../http/respond.js';
import type { Route, Router } from '../../http/router.js';
import { readInferenceBody } from '../routes/inference/completion-route.js';
import { FETCH_PROVIDERS, type FetchProviderId, type WebFetchConfig } from './config.js';
import type { FetchPool } from './pool.js';
import { fetchWith, type PageFormat } from './providers.js';

const FORMATS: readonly PageFormat[] = ['markdown', 'text', 'html'];

/** The configured providers in the pool's fixed order. */
export function poolOrder(cfg: WebFetchConfig): FetchProviderId[] {
  return FETCH_PROVIDERS.filter((id) => (id === 'builtin' ? cfg.builtin.enabled : cfg.hosted[id] !== undefined));
}

export function webFetchRoutes(r: Router, deps: { config: () => WebFetchConfig; pool: FetchPool; egress: Egress }, k: (route: Route) => Route): void {
  k(
    r.post('/v1/web/fetch', async (ctx) => {
      const body = (await readInferenceBody(ctx)) as Record<string, unknown>;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
      const url = body.url;
      if (typeof url !== 'string' || url.length === 0 || url.length > 8192) throw badRequest('url is required (a string of at most 8192 characters)');
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw badRequest('url is not a valid URL');
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badRequest('url must be http or https');
      const format = (body.format ?? 'markdown') as PageFormat;
      if (!FORMATS.includes(format)) throw badRequest(`format must be one of ${FORMATS.join(', ')}`);
      const cfg = deps.config();
      const principal = ctx.state.principal as Principal | undefined;
      const policy = principal?.key ? cfg.policies[principal.key.name] : undefined;
      if (policy && !policy.enabled) throw new HttpError(403, `API key "${principal!.key!.name}" may not use web fetch`, { code: 'fetch_not_allowed' });
      const order = poolOrder(cfg).filter((id) => !policy?.providers || policy.providers.includes(id));
      let explicit: FetchProviderId | undefined;
      if (body.provider !== undefined) {
        if (typeof body.provider !== 'string' || !(FETCH_PROVIDERS as readonly string[]).includes(body.provider)) throw badRequest(`provider must be one of ${FETCH_PROVIDERS.join(', ')}`);
        explicit = body.provider as FetchProviderId;
        if (!poolOrder(cfg).includes(explicit)) throw badRequest(`web fetch provider ${explicit} is not configured`);
        if (!order.includes(explicit)) throw new HttpError(403, `API key "${principal?.key?.name}" may not use web fetch provider ${explicit}`, { code: 'fetch_not_allowed' });
      }
      if (order.length === 0) throw poolOrder(cfg).length === 0 ? badRequest('no web fetch provider is configured (gateway.yaml web_fetch)') : new HttpError(403, `API key "${principal?.key?.name}" may use no configured web fetch provider`, { code: 'fetch_not_allowed' });
      const { page, provider } = await deps.pool.run(order, explicit, (id) => fetchWith(id, cfg, deps.egress, parsed.href, format));
      sendJson(ctx.res, 200, { ...page, provider });
    }),
  );
}
