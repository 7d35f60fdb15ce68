/**
 * Webhooks (management auth):
 *   GET    /api/webhooks                  every webhook (secrets masked)
 *   POST   /api/webhooks                  {url, events?, secret?, description?, enabled?} → 201, the secret shown once
 *   GET    /api/webhooks/events           the event types
 *   GET/PUT/PATCH/DELETE /api/webhooks/{id}
 *   POST   /api/webhooks/{id}/test        send a test payload now; what the receiver answered
 *   GET    /api/webhooks/{id}/deliveries  recent deliveries with every attempt (`limit`, 1–500, 50)
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { checkUserUrl, UrlRefusedError } from '../../egress/user-url.js';
import type { Egress } from '../../egress/index.js';
import type { Clock } from '../../http/clock.js';
import type { RequestContext } from '../../http/context.js';
import { badRequest, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { intQuery, ok, readObject, validated } from '../routes/common.js';
import { EVENT_DESCRIPTIONS, WEBHOOK_EVENTS } from './events.js';
import type { WebhookService } from './service.js';
import { generateSecret, maskSecret, validSecret } from './signature.js';
import type { WebhookRecord } from './store.js';

const fields = {
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  events: Type.Array(Type.String(), { minItems: 1, maxItems: 64 }),
  secret: Type.String(),
  description: Type.String({ maxLength: 500 }),
  enabled: Type.Boolean(),
};
const validateCreate = compile(
  Type.Object({ url: fields.url, events: Type.Optional(fields.events), secret: Type.Optional(fields.secret), description: Type.Optional(fields.description), enabled: Type.Optional(fields.enabled) }, { additionalProperties: false }),
);
const validatePatch = compile(
  Type.Object(
    { url: Type.Optional(fields.url), events: Type.Optional(fields.events), secret: Type.Optional(fields.secret), description: Type.Optional(fields.description), enabled: Type.Optional(fields.enabled) },
    { additionalProperties: false },
  ),
);

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

function view(w: WebhookRecord): Record<string, unknown> {
  return { id: w.id, url: w.url, events: w.events, secret: maskSecret(w.secret), description: w.description, enabled: w.enabled, createdAt: iso(w.createdAt), updatedAt: iso(w.updatedAt) };
}

export function webhookRoutes(r: Router, hooks: WebhookService, egress: Egress, clock: Clock): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const checkUrl = (url: string) => {
    try {
      checkUserUrl(url, egress, { allowHttp: true });
    } catch (e) {
      if (e instanceof UrlRefusedError) throw badRequest(`url: ${e.message}`);
      throw e;
    }
  };
  const checkEvents = (events: string[]) => {
    for (const e of events) if (e !== '*' && !(WEBHOOK_EVENTS as readonly string[]).includes(e)) throw badRequest(`events: unknown event type ${JSON.stringify(e)} (GET /api/webhooks/events lists them)`);
  };
  const checkSecret = (s: string) => {
    if (!validSecret(s)) throw badRequest('secret must be whsec_ followed by base64 of 16 to 64 bytes');
  };
  const find = (ctx: RequestContext): WebhookRecord => {
    const w = hooks.store.get(ctx.params.id!);
    if (!w) throw notFound(`webhook ${ctx.params.id} not found`);
    return w;
  };

  m(r.get('/api/webhooks', (ctx) => ok(ctx, { webhooks: hooks.store.list().map(view) })));
  m(r.get('/api/webhooks/events', (ctx) => ok(ctx, { events: WEBHOOK_EVENTS.map((type) => ({ type, description: EVENT_DESCRIPTIONS[type] })), wildcard: '*' })));
  m(
    r.post('/api/webhooks', async (ctx) => {
      const body = validated(validateCreate, await readObject(ctx));
      checkUrl(body.url);
      const events = body.events ?? ['*'];
      checkEvents(events);
      if (body.secret !== undefined) checkSecret(body.secret);
      const now = clock.now();
      const w: WebhookRecord = { id: `wh_${randomBytes(9).toString('base64url')}`, url: body.url, events, secret: body.secret ?? generateSecret(), description: body.description ?? '', enabled: body.enabled ?? true, createdAt: now, updatedAt: now };
      hooks.store.save(w);
      hooks.refresh();
      await hooks.store.settled();
      ok(ctx, { ...view(w), secret: w.secret, notice: 'store this secret now: it is not shown again' }, 201);
    }),
  );
  m(r.get('/api/webhooks/:id', (ctx) => ok(ctx, view(find(ctx)))));
  const update = async (ctx: RequestContext) => {
    const prev = find(ctx);
    const body = validated(validatePatch, await readObject(ctx));
    if (body.url !== undefined) checkUrl(body.url);
    if (body.events !== undefined) checkEvents(body.events);
    if (body.secret !== undefined) checkSecret(body.secret);
    const next: WebhookRecord = { ...prev, ...body, updatedAt: clock.now() };
    hooks.store.save(next);
    hooks.refresh();
    await hooks.store.settled();
    ok(ctx, view(next));
  };
  m(r.put('/api/webhooks/:id', update));
  m(r.patch('/api/webhooks/:id', update));
  m(
    r.delete('/api/webhooks/:id', async (ctx) => {
      const w = find(ctx);
      await hooks.remove(w.id);
      ok(ctx, { id: w.id, deleted: true });
    }),
  );
  m(
    r.post('/api/webhooks/:id/test', async (ctx) => {
      const out = await hooks.test(find(ctx));
      ok(ctx, { delivered: out.delivered, status: out.status ?? null, error: out.error ?? null, durationMs: Math.round(out.durationMs) });
    }),
  );
  m(
    r.get('/api/webhooks/:id/deliveries', async (ctx) => {
      const w = find(ctx);
      const limit = intQuery(ctx, 'limit', 50, 1, 500);
      ok(ctx, {
        deliveries: (await hooks.queue.deliveries(w.id, limit)).map((d) => ({
          id: d.id,
          event: d.event,
          status: d.status,
          attempts: d.attempts,
          nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
          lastStatus: d.lastStatus ?? null,
          lastError: d.lastError ?? null,
          createdAt: iso(d.createdAt),
          deliveredAt: iso(d.deliveredAt),
          attemptLog: d.attemptLog.map((a) => ({ attempt: a.attempt, at: iso(a.at), status: a.status ?? null, error: a.error ?? null, durationMs: a.durationMs })),
        })),
      });
    }),
  );
}
