import type { RequestContext } from '../http/context.js';
import type { HttpError } from '../http/errors.js';
import { sendText } from '../http/respond.js';
import type { Router } from '../http/router.js';
import { authenticate, fanout, isMethod, METHODS, runMethod, unavailableReplies, unavailableReply } from './api.js';
import { StorageUnavailable } from '../store/unavailable.js';
import { Code } from './codes.js';
import { ReplyError, reply, toJson, type Reply } from './envelope.js';
import { decodeEnvelope } from './request.js';
import type { Services } from './service.js';

/**
 * HTTP status for a reply. Method results travel with 200 as in the origin (the envelope's Code
 * carries the outcome); a request that is not a valid envelope gets a 4xx.
 */
function statusOf(code: number): number {
  if (code === Code.BAD_METHOD || code === Code.BAD_JSON) return 400;
  if (code === Code.METHOD_NOT_FOUND) return 404;
  if (code === Code.INTERNAL) return 500;
  return 200;
}

export function sendReply(ctx: RequestContext, r: Reply, status = statusOf(r.Code)): void {
  sendText(ctx.res, status, toJson(r), 'application/json');
}

/** `POST /api` and `POST /api/{method}`, each with the per-IP rate limit. */
export function registerApiRoutes(router: Router, s: Services): void {
  const handler = async (ctx: RequestContext) => {
    let r: Reply;
    try {
      const env = await decodeEnvelope(ctx, s.config.bodyLimit, ctx.params.method, isMethod);
      const call = { method: env.method, value: env.value, form: env.form, accountId: undefined as number | undefined, client: clientKey(ctx) };
      if (METHODS[env.method]!.auth) {
        const who = await authenticate(s, env.value.Hash);
        if (typeof who !== 'number') return sendReply(ctx, who);
        call.accountId = who;
      }
      delete call.value.Hash;
      r = await runMethod(s, call);
      fanout(s, call, r);
    } catch (e) {
      if (e instanceof StorageUnavailable) r = unavailableReply('', e);
      else if (e instanceof ReplyError) r = reply('', e.code, e.value, e.message);
      else throw e;
    }
    sendReply(ctx, r, unavailableReplies.has(r) ? 503 : undefined);
  };
  const { limit, interval } = s.config.rateLimit;
  router.post('/api', handler).rateLimit(limit, interval);
  router.post('/api/:method', handler).rateLimit(limit, interval);
}

/** Per-client key: the client IP, or `unix` for the control socket. */
export function clientKey(ctx: { clientIp: string; viaSocket: boolean }): string {
  return ctx.clientIp || (ctx.viaSocket ? 'unix' : 'unknown');
}

/**
 * Errors raised outside the methods (unknown path, wrong HTTP method, body too large, rate limit)
 * in the envelope format, with the HTTP status kept.
 */
export function renderError(ctx: RequestContext, err: HttpError): void {
  let r: Reply;
  if (typeof err.code === 'number' && err.code > 0) r = reply('', err.code, null, err.message);
  else if (err.status === 429) r = reply('', Code.CONN_LIMIT, null, err.message || undefined);
  else if (err.status >= 500) r = reply('', Code.INTERNAL);
  else if (err.status === 405) r = reply('', Code.INCORRECT_QUERY, null, 'only POST is accepted');
  else r = reply('', Code.INCORRECT_QUERY, null, err.message);
  sendReply(ctx, r, err.status);
}
