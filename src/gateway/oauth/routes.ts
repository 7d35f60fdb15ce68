/**
 * OAuth logins (management auth, except the browser's redirect):
 *   GET  /api/oauth/providers                 the configured OAuth providers and their flows
 *   POST /api/oauth/{provider}/device         start a device-code flow: the user code and where to enter it
 *   POST /api/oauth/{provider}/poll           {flowId}: pending, authorized (the account), expired or denied
 *   POST /api/oauth/{provider}/authorize      start an authorization-code flow (PKCE): the URL to open
 *   GET  /api/oauth/{provider}/callback       the redirect (?code&state): finishes the flow (no auth: the state binds it)
 *   POST /api/oauth/{provider}/exchange       {flowId, code}: finish it with a code pasted by the user
 *   GET  /api/oauth/{provider}/status         its accounts: label, expiry, scopes, last error
 *   POST /api/oauth/{provider}/refresh        {accountId?}: refresh now (every account without one)
 *   POST /api/oauth/{provider}/logout         {accountId?}: forget the tokens and the account(s)
 */
import { Type } from '@sinclair/typebox';
import { badRequest, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { ok, readPlainObject, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';

const validatePoll = compile(Type.Object({ flowId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }));
const validateExchange = compile(Type.Object({ flowId: Type.String({ minLength: 1, maxLength: 100 }), code: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }));
const validateAccount = compile(Type.Object({ accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, { additionalProperties: false }));

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function oauthRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const o = svc.oauth;
  m(
    r.get('/api/oauth/providers', (ctx) =>
      ok(ctx, {
        providers: o.list().map((p) => ({ id: p.id, name: p.name, kind: p.kind, flows: [...(p.deviceAuthorizationUrl ? ['device'] : []), ...(p.authorizeUrl ? ['authorization-code'] : [])], accounts: o.accounts(p.id).length })),
      }),
    ),
  );
  m(
    r.post('/api/oauth/:provider/:action', async (ctx) => {
      const id = ctx.params.provider!;
      o.provider(id);
      switch (ctx.params.action) {
        case 'device':
          return ok(ctx, await o.startDevice(id));
        case 'poll': {
          const b = validated(validatePoll, await readPlainObject(ctx));
          return ok(ctx, await o.poll(id, b.flowId));
        }
        case 'authorize':
          return ok(ctx, o.startAuthorize(id));
        case 'exchange': {
          const b = validated(validateExchange, await readPlainObject(ctx));
          // A pasted code may carry the state after '#' (as some providers show it).
          return ok(ctx, await o.exchange(id, b.code.split('#')[0]!, { flowId: b.flowId }));
        }
        case 'refresh': {
          const b = validated(validateAccount, await readPlainObject(ctx, true));
          const ids = b.accountId ? [b.accountId] : o.accounts(id).map((a) => a.id);
          const refreshed = [];
          for (const a of ids) refreshed.push(await o.refresh(a));
          return ok(ctx, { provider: id, accounts: refreshed });
        }
        case 'logout': {
          const b = validated(validateAccount, await readPlainObject(ctx, true));
          return ok(ctx, { provider: id, loggedOut: await o.logout(id, b.accountId) });
        }
        default:
          throw notFound(`no OAuth action ${ctx.params.action} (device, poll, authorize, exchange, refresh, logout)`);
      }
    }),
  );
  r.get('/api/oauth/:provider/:action', async (ctx) => {
      const id = ctx.params.provider!;
      const action = ctx.params.action;
      // The route is public for the callback alone; the other GETs need management auth as usual.
      if (action !== 'callback' && svc.runtime.general.value.requireLogin) svc.auth.management(ctx);
      if (action === 'status') {
        const p = o.provider(id);
        return ok(ctx, { provider: p.id, name: p.name, accounts: o.accounts(p.id) });
      }
      if (action === 'authorize') return ok(ctx, o.startAuthorize(id));
      if (action !== 'callback') throw notFound(`no OAuth action GET ${action} (status, authorize, callback)`);
      // The browser's redirect: no management auth (the state binds it to the flow this gateway started).
      const error = ctx.query.get('error');
      const code = ctx.query.get('code');
      const state = ctx.query.get('state');
      const page = (status: number, title: string, text: string) => {
        ctx.res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        ctx.res.end(`<!doctype html><title>${esc(title)}</title><h1>${esc(title)}</h1><p>${esc(text)}</p>`);
      };
      if (error) return page(400, 'Sign-in failed', `${error}: ${ctx.query.get('error_description') ?? ''}`);
      if (!code || !state) throw badRequest('code and state are required');
      try {
        const r2 = await o.exchange(id, code, { state });
        page(200, 'Signed in', `${String(r2.label)} is now an account of ${id}. You can close this window.`);
      } catch (e) {
        page(400, 'Sign-in failed', (e as Error).message);
      }
  }).tag('auth', 'public');
}
