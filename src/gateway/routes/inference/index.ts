/**
 * Inference routes (auth K). Every chat-like route goes through serveCompletion; listings and token
 * counts answer locally.
 */
import { HttpError, notFound } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import { sendJson } from '../../../http/respond.js';
import type { Route, Router } from '../../../http/router.js';
import type { Principal } from '../../auth.js';
import type { ClientFormat } from '../../canonical.js';
import { resolveFor } from '../../completion.js';
import type { GatewayServices } from '../../services.js';
import { VERSION_BY_HANDLER } from '../../telemetry.js';
import { countTokens, parseRequest, renderModelList } from '../../translate/index.js';
import { chatPipeline, readInferenceBody, serveCompletion, type CompletionRoute } from './completion-route.js';
import { embeddingRoutes } from './embeddings.js';
import { jsonOperationRoutes } from './json-operations.js';
import { speechRoutes } from './speech.js';
import { transcriptionRoutes } from './transcriptions.js';
import { imageEditRoutes } from './image-edits.js';
import { findModelEntry, modelEntries } from './models.js';

const GEMINI_ACTIONS = new Set(['generateContent', 'streamGenerateContent', 'countTokens']);

export function inferenceRoutes(r: Router, svc: GatewayServices): void {
  const k = (route: Route) => route.tag('auth', 'inference');
  const list = (format: ClientFormat, filter?: (type: string | undefined) => boolean) => (ctx: RequestContext) => {
    const entries = modelEntries(svc.state.catalog).filter((e) => !filter || filter(e.type));
    sendJson(ctx.res, 200, renderModelList(format, entries));
  };
  /** Anthropic's SDK lists models on /v1/models too; it says so with its version header. */
  const v1Models = (ctx: RequestContext) => list(ctx.req.headers['anthropic-version'] ? 'anthropic' : 'openai')(ctx);

  // ----- OpenAI ------------------------------------------------------------------------------
  // Route descriptions are built once, not per request. Completion routes with a fixed path are
  // tagged VERSION_BY_HANDLER: serveCompletion writes X-Gateway-Version with its other headers.
  // (The tag needs a fixed path: the component's `before` knows the path, not yet the route.)
  // Every chat route runs the same stages, built once with the services they use.
  const chatPipe = chatPipeline(svc);
  const chat: CompletionRoute = { format: 'openai', endpoint: 'chat' };
  const responses: CompletionRoute = { format: 'openai-responses', endpoint: 'responses' };
  const messages: CompletionRoute = { format: 'anthropic', endpoint: 'messages' };
  const ollama: CompletionRoute = { format: 'ollama', endpoint: 'ollama' };
  k(r.post('/v1/chat/completions', (ctx) => serveCompletion(ctx, chatPipe, chat))).tag(VERSION_BY_HANDLER);
  k(r.post('/v1/responses', (ctx) => serveCompletion(ctx, chatPipe, responses))).tag(VERSION_BY_HANDLER);
  k(r.get('/v1/models', v1Models));
  k(
    r.get('/v1/models/*', (ctx) => {
      const entry = findModelEntry(svc.state.catalog, ctx.params['*'] ?? '');
      if (!entry) throw new HttpError(404, `model ${JSON.stringify(ctx.params['*'])} not found`, { code: 'model_not_found' });
      const listed = renderModelList('openai', [entry]) as { data: unknown[] };
      sendJson(ctx.res, 200, listed.data[0]);
    }),
  );

  // ----- Anthropic ---------------------------------------------------------------------------
  k(r.post('/v1/messages', (ctx) => serveCompletion(ctx, chatPipe, messages))).tag(VERSION_BY_HANDLER);
  k(
    r.post('/v1/messages/count_tokens', async (ctx) => {
      const req = parseRequest('anthropic', await readInferenceBody(ctx));
      resolveFor(svc, req.model, ctx.state.principal as Principal);
      sendJson(ctx.res, 200, { input_tokens: await countTokens(req) });
    }),
  );

  // ----- Gemini ------------------------------------------------------------------------------
  k(r.get('/v1beta/models', list('gemini')));
  k(
    r.get('/v1beta/models/*', (ctx) => {
      const entry = findModelEntry(svc.state.catalog, ctx.params['*'] ?? '');
      if (!entry) throw notFound(`model ${ctx.params['*']} not found`);
      sendJson(ctx.res, 200, (renderModelList('gemini', [entry]) as { models: unknown[] }).models[0]);
    }),
  );
  k(
    r.post('/v1beta/models/*', async (ctx) => {
      const path = ctx.params['*'] ?? '';
      const colon = path.lastIndexOf(':');
      const model = colon > 0 ? path.slice(0, colon) : '';
      const action = colon > 0 ? path.slice(colon + 1) : '';
      if (!model || !GEMINI_ACTIONS.has(action)) {
        throw notFound(`unknown generative-content call ${JSON.stringify(path)}; use {model}:generateContent, :streamGenerateContent or :countTokens`);
      }
      if (action === 'countTokens') {
        const body = (await readInferenceBody(ctx)) as Record<string, unknown>;
        // countTokens may wrap the request in generateContentRequest.
        const inner = body && typeof body === 'object' && body.generateContentRequest ? body.generateContentRequest : body;
        const req = parseRequest('gemini', inner, { model, stream: false });
        resolveFor(svc, req.model, ctx.state.principal as Principal);
        sendJson(ctx.res, 200, { totalTokens: await countTokens(req) });
        return;
      }
      await serveCompletion(ctx, chatPipe, { format: 'gemini', endpoint: 'gemini', parse: { model, stream: action === 'streamGenerateContent' } });
    }),
  );

  // ----- Ollama (both /api/* and /v1/api/* so the ollama client needs one host) ---------------
  for (const prefix of ['', '/v1']) {
    k(r.post(`${prefix}/api/chat`, (ctx) => serveCompletion(ctx, chatPipe, ollama))).tag(VERSION_BY_HANDLER);
    k(r.get(`${prefix}/api/tags`, list('ollama', (t) => t !== 'embedding')));
    k(r.get(`${prefix}/api/version`, (ctx) => sendJson(ctx.res, 200, { version: svc.version })));
  }

  // ----- Provider-scoped ---------------------------------------------------------------------
  k(
    r.post('/v1/providers/:provider/chat/completions', (ctx) =>
      serveCompletion(ctx, chatPipe, { format: 'openai', endpoint: 'chat', providerScope: scope(svc, ctx) }),
    ),
  );

  // ----- Editor aliases: the key is in the path ---------------------------------------------
  const ed = '/api/v1/editor/:token';
  k(r.get(`${ed}`, list('openai')));
  k(r.get(`${ed}/models`, list('openai')));
  k(r.post(`${ed}/chat/completions`, (ctx) => serveCompletion(ctx, chatPipe, chat)));
  k(r.post(`${ed}/responses`, (ctx) => serveCompletion(ctx, chatPipe, responses)));
  k(r.post(`${ed}/api/chat`, (ctx) => serveCompletion(ctx, chatPipe, ollama)));
  k(r.get(`${ed}/api/tags`, list('ollama', (t) => t !== 'embedding')));

  embeddingRoutes(r, svc, k, scope);
  jsonOperationRoutes(r, svc, k, scope);
  speechRoutes(r, svc, k, scope);
  transcriptionRoutes(r, svc, k, scope);
  imageEditRoutes(r, svc, k, scope);
}

/** The provider of a provider-scoped route; 404 when unknown. */
export function scope(svc: GatewayServices, ctx: RequestContext): string {
  const id = ctx.params.provider!;
  if (!svc.state.catalog.providers.has(id)) throw new HttpError(404, `provider ${id} not found`, { code: 'provider_not_found' });
  return id;
}
