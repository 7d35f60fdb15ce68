/**
 * Gateway API keys: GET/POST /api/keys, GET/PUT/PATCH/DELETE /api/keys/{id}, POST /api/keys/{id}/revoke.
 * The raw key is returned once, by POST; only its sha256 is stored.
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { conflict, notFound } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import type { Router } from '../../../http/router.js';
import { compile } from '../../../http/schema.js';
import { sha256Hex } from '../../config-file.js';
import type { GatewayServices } from '../../services.js';
import { KEY_SCOPES, type ApiKeyRecord, type KeyScope } from '../../types.js';
import { generateKey, keyPrefix } from '../../validate.js';
import { expiryOf, keyView, ok, readObject, validated } from '../common.js';

const Fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  models: Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 1000 }),
  scopes: Type.Array(Type.Union(KEY_SCOPES.map((s) => Type.Literal(s))), { maxItems: 10 }),
  enabled: Type.Boolean(),
  expiresAt: Type.Union([Type.String(), Type.Integer({ minimum: 0 }), Type.Null()]),
  /** Requests per minute (null: no limit). */
  rpm: Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()]),
};
const validateCreate = compile(
  Type.Object(
    {
      ...Fields,
      models: Type.Optional(Fields.models),
      scopes: Type.Optional(Fields.scopes),
      enabled: Type.Optional(Fields.enabled),
      expiresAt: Type.Optional(Fields.expiresAt),
      rpm: Type.Optional(Fields.rpm),
      key: Type.Optional(Type.String({ minLength: 16, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' })),
    },
    { additionalProperties: false },
  ),
);
const validateUpdate = compile(Type.Partial(Type.Object(Fields, { additionalProperties: false })));


export function keyRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const now = () => svc.clock.now();
  const find = (id: string): ApiKeyRecord => {
    const c = svc.state.catalog;
    const k = c.keysById.get(id) ?? [...c.keysById.values()].find((x) => x.name === id);
    if (!k) throw notFound(`key ${id} not found`);
    return k;
  };
  const apiKey = (id: string): ApiKeyRecord => {
    const k = find(id);
    if (k.source === 'file') throw conflict(`key ${k.name} is defined in gateway.yaml; edit the file and reload`);
    return k;
  };

  m(
    r.get('/api/keys', (ctx) => {
      const all = /^(1|true)$/i.test(ctx.query.get('all') ?? 'true');
      const keys = [...svc.state.catalog.keysById.values()].filter((k) => all || k.revokedAt === undefined);
      ok(ctx, { keys: keys.map((k) => keyView(k, now())) });
    }),
  );

  m(
    r.post('/api/keys', async (ctx) => {
      const body = validated(validateCreate, await readObject(ctx));
      const raw = body.key ?? generateKey();
      const hash = sha256Hex(raw);
      if (svc.state.catalog.keysByHash.has(hash)) throw conflict('that key already exists');
      const expiresAt = expiryOf(body.expiresAt);
      const k: ApiKeyRecord = {
        id: `key_${randomBytes(9).toString('base64url')}`,
        name: body.name,
        hash,
        prefix: keyPrefix(raw),
        models: body.models && body.models.length > 0 ? body.models : ['*'],
        scopes: (body.scopes && body.scopes.length > 0 ? [...new Set(body.scopes)] : ['inference']) as KeyScope[],
        enabled: body.enabled ?? true,
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        ...(typeof body.rpm === 'number' ? { rpm: body.rpm } : {}),
        createdAt: now(),
        source: 'api',
      };
      svc.state.db.saveKey(k);
      await svc.state.commit({ keys: true });
      svc.webhooks.emit('key.created', { id: k.id, name: k.name, prefix: k.prefix, models: k.models, scopes: k.scopes });
      ok(ctx, { ...keyView(k, now()), key: raw, notice: 'store this key now: it is not shown again' }, 201);
    }),
  );

  m(r.get('/api/keys/:id', (ctx) => ok(ctx, keyView(find(ctx.params.id!), now()))));

  const update = async (ctx: RequestContext) => {
    const prev = apiKey(ctx.params.id!);
    const body = validated(validateUpdate, await readObject(ctx));
    const next: ApiKeyRecord = {
      ...prev,
      name: body.name ?? prev.name,
      models: body.models ?? prev.models,
      scopes: (body.scopes ? [...new Set(body.scopes)] : prev.scopes) as KeyScope[],
      enabled: body.enabled ?? prev.enabled,
    };
    if (body.rpm === null) delete next.rpm;
    else if (body.rpm !== undefined) next.rpm = body.rpm;
    if (body.expiresAt !== undefined) {
      const t = expiryOf(body.expiresAt);
      if (t === undefined) delete next.expiresAt;
      else next.expiresAt = t;
    }
    svc.state.db.saveKey(next);
    await svc.state.commit({ keys: true });
    ok(ctx, keyView(next, now()));
  };
  m(r.put('/api/keys/:id', update));
  m(r.patch('/api/keys/:id', update));

  m(
    r.post('/api/keys/:id/revoke', async (ctx) => {
      const prev = apiKey(ctx.params.id!);
      const next: ApiKeyRecord = { ...prev, revokedAt: prev.revokedAt ?? now() };
      svc.state.db.saveKey(next);
      await svc.state.commit({ keys: true });
      if (prev.revokedAt === undefined) svc.webhooks.emit('key.revoked', { id: next.id, name: next.name, prefix: next.prefix });
      ok(ctx, keyView(next, now()));
    }),
  );

  m(
    r.delete('/api/keys/:id', async (ctx) => {
      const prev = apiKey(ctx.params.id!);
      svc.state.db.deleteKey(prev.id);
      await svc.state.commit({ keys: true });
      ok(ctx, { id: prev.id, deleted: true });
    }),
  );
}
