/**
 * Registered keys and their helpers (a Bearer API key with the `keys` or `management` scope, or the
 * control socket):
 *   GET/POST /api/v1/registered-keys; GET/DELETE /api/v1/registered-keys/{id}; POST …/{id}/revoke
 *   GET  /v1/quotas/check        would issuing now be allowed (`provider`, `accountId`)
 *   POST /v1/issues/report       file a quota or issuance failure with the configured tracker (503 without one)
 */
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { HttpError } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { expiryOf, ok, readPlainObject, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import type { Issuer } from './service.js';
import { fileIssue } from './tracker.js';

const Usd = Type.Number({ exclusiveMinimum: 0, maximum: 1e9 });
const validateIssue = compile(
  Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      provider: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      expiresAt: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 0 })])),
      dailyBudget: Type.Optional(Usd),
      hourlyBudget: Type.Optional(Usd),
    },
    { additionalProperties: false },
  ),
);
const validateReport = compile(
  Type.Object(
    {
      title: Type.String({ minLength: 1, maxLength: 256 }),
      body: Type.Optional(Type.String({ maxLength: 60_000 })),
      kind: Type.Optional(Type.Union([Type.Literal('quota'), Type.Literal('key-issuance'), Type.Literal('other')])),
      provider: Type.Optional(Type.String({ maxLength: 256 })),
      accountId: Type.Optional(Type.String({ maxLength: 256 })),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    },
    { additionalProperties: false },
  ),
);

export function registeredKeyRoutes(r: Router, svc: GatewayServices): void {
  const pub = (route: ReturnType<Router['get']>) => route.tag('auth', 'public');
  const issuerOf = (ctx: RequestContext): Issuer => {
    const p = svc.auth.scoped(ctx, ['keys', 'management'], 'Registered keys');
    if (!p.key) return { id: 'control-socket', models: ['*'], all: true };
    return { id: p.key.id, models: p.key.models, all: p.key.scopes.includes('management') };
  };
  const reg = () => svc.registeredKeys;

  pub(r.get('/api/v1/registered-keys', (ctx) => {
    const keys = reg().list(issuerOf(ctx));
    ok(ctx, { keys, total: keys.length });
  }));
  pub(
    r.post('/api/v1/registered-keys', async (ctx) => {
      const issuer = issuerOf(ctx);
      const b = validated(validateIssue, await readPlainObject(ctx));
      const expiresAt = expiryOf(b.expiresAt);
      const res = await reg().issue(issuer, { ...b, ...(expiresAt !== undefined ? { expiresAt } : { expiresAt: undefined }) });
      ok(ctx, res.body, res.status);
    }),
  );
  pub(r.get('/api/v1/registered-keys/:id', (ctx) => ok(ctx, reg().get(issuerOf(ctx), ctx.params.id!))));
  const revoke = async (ctx: RequestContext) => {
    const k = await reg().revoke(issuerOf(ctx), ctx.params.id!);
    svc.webhooks.emit('key.revoked', { id: k.id, name: k.name, prefix: k.prefix });
    ok(ctx, { id: k.id, revoked: true, deleted: true });
  };
  pub(r.delete('/api/v1/registered-keys/:id', revoke));
  pub(r.post('/api/v1/registered-keys/:id/revoke', revoke));

  pub(
    r.get('/v1/quotas/check', (ctx) => {
      const issuer = issuerOf(ctx);
      ok(ctx, reg().check(issuer, ctx.query.get('provider') || undefined, ctx.query.get('accountId') || ctx.query.get('account_id') || undefined));
    }),
  );
  pub(
    r.post('/v1/issues/report', async (ctx) => {
      const issuer = issuerOf(ctx);
      const b = validated(validateReport, await readPlainObject(ctx));
      const cfg = svc.issueTracker;
      if (!cfg) throw new HttpError(503, 'no issue tracker is configured (ctl.yaml gateway.issue_tracker)', { code: 'tracker_not_configured' });
      const kind = b.kind ?? 'other';
      const lines = [
        b.body ?? '',
        '',
        '---',
        `Reported by ctl gateway ${svc.version} at ${new Date(svc.clock.now()).toISOString()}`,
        `- kind: ${kind}`,
        `- reporter: ${issuer.id === 'control-socket' ? 'control socket' : `API key ${issuer.id}`}`,
        ...(b.provider ? [`- provider: ${b.provider}`] : []),
        ...(b.accountId ? [`- account: ${b.accountId}`] : []),
        ...(b.details ? ['', '```json', JSON.stringify(b.details, null, 2).slice(0, 20_000), '```'] : []),
      ];
      const issue = await fileIssue(svc.egress, cfg, { title: b.title, body: lines.join('\n').trim(), labels: kind === 'other' ? [] : [kind] });
      ok(ctx, { reported: true, repository: cfg.repository, issue }, 201);
    }),
  );
}
