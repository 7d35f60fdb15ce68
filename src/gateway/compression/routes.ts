/**
 * Compression management (management auth):
 *   GET/PUT /api/settings/compression                 the settings (PUT changes the fields given)
 *   POST /api/compression/preview                     {mode, messages} or {mode, text}: before, after, tokens, savings, rules
 *   GET  /api/compression/language-packs, /api/compression/rules
 *   GET/PUT /api/context/caveman/config, /api/context/rtk/config
 *   GET  /api/context/rtk/filters; POST /api/context/rtk/test {output, command?}; GET /api/context/rtk/raw-output/{id}
 *   GET/POST /api/context/combos; GET/PUT/DELETE /api/context/combos/{id}; GET/PUT /api/context/combos/{id}/assignments
 *   GET  /api/context/analytics (`days`, 1); GET /api/analytics/compression (`days`, 1)
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { badRequest, HttpError, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import type { CanonicalRequest } from '../canonical.js';
import { intQuery, ok, readPlainObject, validated } from '../routes/common.js';
import { countText, promptText } from '../translate/tokens.js';
import { LANGUAGE_PACKS } from './caveman.js';
import { applyPipeline, ENGINES, pipelineOf, type Step } from './modes.js';
import { findCombo } from './plan.js';
import { rtk, rtkFilters } from './rtk/index.js';
import type { CompressionService } from './service.js';
import { MODES, type Mode } from './settings.js';
import type { CompressionCombo } from './store.js';

const step = Type.Object({ engine: Type.Union(ENGINES.map((e) => Type.Literal(e))), intensity: Type.Optional(Type.Union([Type.Literal('lite'), Type.Literal('full'), Type.Literal('ultra')])) }, { additionalProperties: false });
const validatePreview = compile(
  Type.Object(
    {
      mode: Type.Union([...MODES.map((m) => Type.Literal(m)), Type.String({ pattern: '^(?:engine|combo):.+' }), Type.Literal('RTK')]),
      text: Type.Optional(Type.String({ maxLength: 4_000_000 })),
      messages: Type.Optional(Type.Array(Type.Object({ role: Type.String(), content: Type.String() }, { additionalProperties: true }), { maxItems: 2000 })),
    },
    { additionalProperties: false },
  ),
);
const validateCombo = compile(
  Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 64 }), description: Type.Optional(Type.String({ maxLength: 500 })), pipeline: Type.Array(step, { minItems: 1, maxItems: 8 }), assignments: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 256 })) },
    { additionalProperties: false },
  ),
);
const validateComboPatch = compile(
  Type.Object(
    { name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })), description: Type.Optional(Type.String({ maxLength: 500 })), pipeline: Type.Optional(Type.Array(step, { minItems: 1, maxItems: 8 })), assignments: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 256 })) },
    { additionalProperties: false },
  ),
);
const validateAssignments = compile(Type.Object({ assignments: Type.Array(Type.String({ minLength: 1 }), { maxItems: 256 }) }, { additionalProperties: false }));
const validateRtkTest = compile(Type.Object({ output: Type.String({ maxLength: 10_000_000 }), command: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: false }));

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function requestOf(messages: { role: string; content: string }[]): CanonicalRequest {
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.content).join('\n\n');
  return {
    model: 'preview',
    stream: false,
    ...(system ? { system } : {}),
    messages: messages
      .filter((m) => m.role !== 'system' && m.role !== 'developer')
      .map((m, i) => {
        const role = ROLES.has(m.role) ? m.role : 'user';
        const content = [{ type: 'text' as const, text: m.content }];
        return role === 'tool' ? { role: 'tool' as const, toolCallId: `call_${i}`, content } : ({ role, content } as CanonicalRequest['messages'][number]);
      }),
  };
}

const comboView = (c: CompressionCombo) => ({ ...c, createdAt: new Date(c.createdAt).toISOString(), updatedAt: new Date(c.updatedAt).toISOString() });

export function compressionRoutes(r: Router, svc: CompressionService, now: () => number): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const settings = svc.settings;
  const findOr404 = (ctx: RequestContext): CompressionCombo => {
    const c = svc.store.combos().find((x) => x.id === ctx.params.id) ?? findCombo(svc.store.combos(), ctx.params.id!);
    if (!c) throw notFound(`compression combo ${ctx.params.id} not found`);
    return c;
  };

  m(r.get('/api/settings/compression', (ctx) => ok(ctx, settings.value)));
  m(r.put('/api/settings/compression', async (ctx) => ok(ctx, await settings.save(await readPlainObject(ctx)))));
  m(r.patch('/api/settings/compression', async (ctx) => ok(ctx, await settings.save(await readPlainObject(ctx)))));
  for (const part of ['caveman', 'rtk'] as const) {
    m(r.get(`/api/context/${part}/config`, (ctx) => ok(ctx, settings.value[part])));
    m(r.put(`/api/context/${part}/config`, async (ctx) => ok(ctx, (await settings.save({ [part]: await readPlainObject(ctx) }))[part])));
  }

  m(
    r.post('/api/compression/preview', async (ctx) => {
      const b = validated(validatePreview, await readPlainObject(ctx));
      if ((b.text === undefined) === (b.messages === undefined)) throw badRequest('send either text or messages');
      const raw = b.mode.toLowerCase();
      let steps: Step[];
      let mode: string = raw;
      if (raw.startsWith('engine:')) {
        const e = raw.slice(7);
        if (!(ENGINES as readonly string[]).includes(e)) throw badRequest(`unknown engine ${e} (${ENGINES.join(', ')})`);
        steps = [{ engine: e as Step['engine'] }];
      } else if (raw.startsWith('combo:')) {
        const c = findCombo(svc.store.combos(), b.mode.slice(6));
        if (!c) throw notFound(`compression combo ${b.mode.slice(6)} not found`);
        steps = c.pipeline;
        mode = c.name;
      } else steps = pipelineOf(raw as Mode);
      const req = requestOf(b.messages ?? [{ role: 'user', content: b.text! }]);
      // The preview shows what the rules do, whatever the minimum message length.
      const s = b.text !== undefined ? { ...settings.value, caveman: { ...settings.value.caveman, minMessageChars: 0 } } : settings.value;
      const applied = applyPipeline(req, steps, s);
      const originalTokens = await countText(promptText(req).text);
      const compressedTokens = await countText(promptText(applied.request).text);
      const out = applied.request;
      const compressed =
        b.text !== undefined
          ? out.messages.map((x) => x.content.map((p) => (p.type === 'text' ? p.text : '')).join('')).join('\n')
          : [...(out.system ? [{ role: 'system', content: out.system }] : []), ...out.messages.map((x) => ({ role: x.role, content: x.content.map((p) => (p.type === 'text' ? p.text : '')).join('') }))];
      ok(ctx, {
        mode,
        engines: applied.engines,
        original: b.text ?? b.messages,
        compressed,
        originalTokens,
        compressedTokens,
        savings: originalTokens - compressedTokens,
        savingsPct: originalTokens > 0 ? Math.round(((originalTokens - compressedTokens) / originalTokens) * 1000) / 10 : 0,
        rules: [...applied.rules.entries()].map(([rule, n]) => ({ rule, count: n })),
      });
    }),
  );
  m(r.get('/api/compression/language-packs', (ctx) => ok(ctx, { packs: Object.entries(LANGUAGE_PACKS).map(([code, p]) => ({ code, name: p.name, rules: p.rules.length })), active: settings.value.caveman.language })));
  m(
    r.get('/api/compression/rules', (ctx) => {
      const language = ctx.query.get('language') ?? settings.value.caveman.language;
      const pack = LANGUAGE_PACKS[language];
      if (!pack) throw notFound(`no language pack ${language}`);
      const families = new Map<string, unknown[]>();
      for (const x of pack.rules) {
        const list = families.get(x.family) ?? [];
        list.push({ name: x.name, pattern: x.pattern.source, replace: x.replace, level: x.level });
        families.set(x.family, list);
      }
      ok(ctx, { language, families: [...families.entries()].map(([family, rules]) => ({ family, rules })) });
    }),
  );

  m(r.get('/api/context/rtk/filters', (ctx) => ok(ctx, { filters: rtkFilters() })));
  m(
    r.post('/api/context/rtk/test', async (ctx) => {
      const b = validated(validateRtkTest, await readPlainObject(ctx));
      const out = rtk(b.output, settings.value.rtk, b.command);
      ok(ctx, { ...out, charsBefore: b.output.length, charsAfter: out.text.length });
    }),
  );
  m(
    r.get('/api/context/rtk/raw-output/:id', (ctx) => {
      const x = svc.store.raw(ctx.params.id!);
      if (!x) throw notFound(`raw output ${ctx.params.id} not found (kept only with rtk.keepRaw, the last 1000)`);
      ok(ctx, { id: x.id, createdAt: new Date(x.ts).toISOString(), content: x.content });
    }),
  );

  m(r.get('/api/context/combos', (ctx) => ok(ctx, { combos: svc.store.combos().map(comboView) })));
  m(
    r.post('/api/context/combos', async (ctx) => {
      const b = validated(validateCombo, await readPlainObject(ctx));
      const t = now();
      const c: CompressionCombo = { id: `cc_${randomBytes(6).toString('hex')}`, name: b.name, description: b.description ?? '', pipeline: b.pipeline, assignments: b.assignments ?? [], createdAt: t, updatedAt: t };
      svc.store.saveCombo(c);
      ok(ctx, comboView(c), 201);
    }),
  );
  m(r.get('/api/context/combos/:id', (ctx) => ok(ctx, comboView(findOr404(ctx)))));
  m(
    r.put('/api/context/combos/:id', async (ctx) => {
      const prev = findOr404(ctx);
      const b = validated(validateComboPatch, await readPlainObject(ctx));
      const c: CompressionCombo = { ...prev, ...b, updatedAt: now() } as CompressionCombo;
      svc.store.saveCombo(c);
      ok(ctx, comboView(c));
    }),
  );
  m(
    r.delete('/api/context/combos/:id', (ctx) => {
      const c = findOr404(ctx);
      svc.store.deleteCombo(c.id);
      ok(ctx, { id: c.id, deleted: true });
    }),
  );
  m(r.get('/api/context/combos/:id/assignments', (ctx) => ok(ctx, { id: findOr404(ctx).id, assignments: findOr404(ctx).assignments })));
  m(
    r.put('/api/context/combos/:id/assignments', async (ctx) => {
      const prev = findOr404(ctx);
      const b = validated(validateAssignments, await readPlainObject(ctx));
      const c = { ...prev, assignments: b.assignments, updatedAt: now() };
      svc.store.saveCombo(c);
      ok(ctx, { id: c.id, assignments: c.assignments });
    }),
  );

  const summary = (ctx: RequestContext) => {
    const days = intQuery(ctx, 'days', 1, 1, 366);
    return { days, s: svc.store.summary(now() - days * 86_400_000) };
  };
  m(
    r.get('/api/context/analytics', (ctx) => {
      const { days, s } = summary(ctx);
      ok(ctx, { window: days === 1 ? '24h' : `${days}d`, requests: s.requests, originalTokens: s.before, compressedTokens: s.after, byMode: s.byMode, bySource: s.bySource, byEngine: s.byEngine });
    }),
  );
  m(
    r.get('/api/analytics/compression', (ctx) => {
      const { days, s } = summary(ctx);
      const modeBreakdown: Record<string, number> = { lite: 0, standard: 0, aggressive: 0, ultra: 0, rtk: 0 };
      for (const [mode, v] of Object.entries(s.byMode)) modeBreakdown[mode] = (modeBreakdown[mode] ?? 0) + v.requests;
      ok(ctx, {
        window: days === 1 ? '24h' : `${days}d`,
        totalOriginalTokens: s.before,
        totalCompressedTokens: s.after,
        totalSavings: s.before - s.after,
        savingsPct: s.before > 0 ? Math.round(((s.before - s.after) / s.before) * 1000) / 10 : 0,
        modeBreakdown,
        engineBreakdown: s.byEngine,
      });
    }),
  );
}
