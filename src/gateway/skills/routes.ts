/**
 * Skills (management auth unless noted):
 *   GET  /api/skills                    q, mode, source; page/limit or offset/limit (handler code left out)
 *   GET/PUT/DELETE /api/skills/{id}     PUT: {mode?, description?} or a whole manifest (replaces the code)
 *   POST /api/skills/install            a raw manifest, {manifest}, {path} (a folder with skill.json under skills.root) or {url}; mode? (default on)
 *   GET  /api/skills/executions         apiKeyId, skillName, offset/limit
 *   POST /api/skills/executions         {skillName, apiKeyId?, input?, sessionId?}: run it now
 *   GET  /api/skills/registry           q, limit; POST /api/skills/registry/install {name, version?}
 *   GET  /api/skills/marketplace        q, limit (management auth or an API key); POST /api/skills/marketplace/install {name, version?}
 */
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { badRequest, HttpError, notFound } from '../../http/errors.js';
import type { Route, Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { intQuery, ok, pageQuery, readPlainObject, validated } from '../routes/common.js';
import { LocalManifestError, readLocalManifest } from './local-manifest.js';
import type { SkillService } from './service.js';
import { SKILL_MODES, SKILL_SOURCES, type ExecutionRecord, type SkillMode, type SkillRecord, type SkillSource } from './store.js';

const iso = (ms: number) => new Date(ms).toISOString();
const mode = Type.Union(SKILL_MODES.map((m) => Type.Literal(m)));
const validateExecute = compile(
  Type.Object(
    { skillName: Type.String({ minLength: 1, maxLength: 64 }), apiKeyId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })), input: Type.Optional(Type.Unknown()), sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) },
    { additionalProperties: false },
  ),
);
const validatePatch = compile(Type.Object({ mode: Type.Optional(mode), description: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: false }));
const validateIndexInstall = compile(Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), version: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })), mode: Type.Optional(mode) }, { additionalProperties: false }));

export function skillView(s: SkillRecord, withCode = false): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    version: s.version,
    description: s.description,
    schema: s.schema,
    ...(withCode ? { handlerCode: s.handlerCode } : { handlerBytes: Buffer.byteLength(s.handlerCode) }),
    apiKeyId: s.apiKeyId ?? null,
    mode: s.mode,
    source: s.source,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  };
}

/**
 * A stored input or output as JSON. Rows written before outputs were bounded may hold a text cut at
 * 1 MiB (not JSON any more) or a longer one (the store leaves those out): either is shown as null with
 * `<which>Truncated: true`, so one bad row never breaks the listing.
 */
function stored(t: string | undefined, dropped: boolean | undefined): { value: unknown; truncated: boolean } {
  if (dropped) return { value: null, truncated: true };
  if (t === undefined) return { value: null, truncated: false };
  try {
    return { value: JSON.parse(t), truncated: false };
  } catch {
    return { value: null, truncated: true };
  }
}

export function executionView(e: ExecutionRecord): Record<string, unknown> {
  const input = stored(e.input, e.inputDropped);
  const output = stored(e.output, e.outputDropped);
  return {
    id: e.id,
    skillId: e.skillId,
    skillName: e.skillName,
    apiKeyId: e.apiKeyId ?? null,
    sessionId: e.sessionId ?? null,
    status: e.status,
    success: e.status === 'success',
    input: input.value,
    output: output.value,
    ...(input.truncated ? { inputTruncated: true } : {}),
    ...(output.truncated ? { outputTruncated: true } : {}),
    error: e.error ?? null,
    durationMs: e.durationMs,
    createdAt: iso(e.createdAt),
  };
}

async function manifestFromPath(skills: SkillService, path: string): Promise<unknown> {
  try {
    return await readLocalManifest(skills.localRoot(), path);
  } catch (e) {
    if (e instanceof LocalManifestError) throw badRequest(e.message, { code: 'invalid_manifest' });
    throw e;
  }
}

export function skillRoutes(r: Router, skills: SkillService, keyExists: (id: string) => boolean): void {
  const m = (route: Route) => route.tag('auth', 'management');
  const find = (ctx: RequestContext): SkillRecord => {
    const s = skills.store.get(ctx.params.id!);
    if (!s) throw notFound(`skill ${ctx.params.id} not found`);
    return s;
  };
  const installed = (ctx: RequestContext, out: { skill: SkillRecord; replaced: boolean }) => {
    ok(ctx, { success: true, replaced: out.replaced, skill: skillView(out.skill) }, out.replaced ? 200 : 201);
  };

  m(
    r.get('/api/skills', (ctx) => {
      const q = ctx.query.get('q') || undefined;
      const md = ctx.query.get('mode') || undefined;
      const src = ctx.query.get('source') || undefined;
      if (md !== undefined && !(SKILL_MODES as readonly string[]).includes(md)) throw badRequest(`query parameter mode must be one of ${SKILL_MODES.join(', ')}`);
      if (src !== undefined && !(SKILL_SOURCES as readonly string[]).includes(src)) throw badRequest(`query parameter source must be one of ${SKILL_SOURCES.join(', ')}`);
      const p = pageQuery(ctx);
      const { rows, total } = skills.store.list({ q, mode: md as SkillMode | undefined, source: src as SkillSource | undefined }, p.offset, p.limit);
      ok(ctx, { skills: rows.map((s) => skillView(s)), total, ...p });
    }),
  );
  m(
    r.post('/api/skills/install', async (ctx) => {
      const body = await readPlainObject(ctx);
      const chosenMode = body.mode;
      if (chosenMode !== undefined && !(SKILL_MODES as readonly unknown[]).includes(chosenMode)) throw badRequest(`mode must be one of ${SKILL_MODES.join(', ')}`);
      let manifest: unknown;
      if (typeof body.path === 'string') manifest = await manifestFromPath(skills, body.path);
      else if (typeof body.url === 'string') manifest = await skills.fetchManifest(body.url);
      else if (body.manifest !== undefined) manifest = body.manifest;
      else manifest = body;
      if (chosenMode !== undefined && manifest && typeof manifest === 'object') manifest = { ...(manifest as object), mode: chosenMode };
      installed(ctx, await skills.install(manifest, 'local'));
    }),
  );
  m(
    r.get('/api/skills/executions', (ctx) => {
      const p = pageQuery(ctx);
      const apiKeyId = ctx.query.get('apiKeyId') || undefined;
      const skillName = ctx.query.get('skillName') || undefined;
      const { rows, total } = skills.store.executions({ apiKeyId, skillName }, p.offset, p.limit);
      ok(ctx, { executions: rows.map(executionView), total, ...p });
    }),
  );
  m(
    r.post('/api/skills/executions', async (ctx) => {
      const b = validated(validateExecute, await readPlainObject(ctx));
      if (b.apiKeyId !== undefined && !keyExists(b.apiKeyId)) throw badRequest(`apiKeyId: no API key ${JSON.stringify(b.apiKeyId)}`);
      const e = await skills.execute(b);
      if (e.status === 'invalid_input') throw badRequest(`skill ${e.skillName}: ${e.error}`, { code: 'invalid_skill_input' });
      if (e.outputTooLarge) throw new HttpError(422, `skill ${e.skillName}: ${e.error} (execution ${e.id})`, { code: 'skill_output_too_large' });
      ok(ctx, executionView(e), 201);
    }),
  );
  for (const which of ['registry', 'marketplace'] as const) {
    // The seed: marketplace search accepts management auth (the login cookie) or a Bearer API key.
    const tag = which === 'marketplace' ? (route: Route) => route.tag('auth', 'management-or-key') : m;
    tag(
      r.get(`/api/skills/${which}`, async (ctx) => {
        const limit = intQuery(ctx, 'limit', 20, 1, 200);
        ok(ctx, { source: which, skills: await skills.searchIndex(which, ctx.query.get('q') ?? '', limit) });
      }),
    );
    m(
      r.post(`/api/skills/${which}/install`, async (ctx) => {
        const b = validated(validateIndexInstall, await readPlainObject(ctx));
        const out = await skills.installFromIndex(which, b.name, b.version);
        if (b.mode !== undefined && b.mode !== out.skill.mode) {
          out.skill = { ...out.skill, mode: b.mode };
          skills.store.save(out.skill);
        }
        installed(ctx, out);
      }),
    );
  }
  m(r.get('/api/skills/:id', (ctx) => ok(ctx, skillView(find(ctx), true))));
  m(
    r.put('/api/skills/:id', async (ctx) => {
      const prev = find(ctx);
      const body = await readPlainObject(ctx);
      if (typeof body.handlerCode === 'string') {
        const m2 = await skills.checkManifest({ ...body, name: body.name ?? prev.name, apiKeyId: body.apiKeyId === undefined ? (prev.apiKeyId ?? null) : body.apiKeyId });
        if (m2.name !== prev.name || (m2.apiKeyId ?? undefined) !== prev.apiKeyId) throw badRequest('PUT keeps a skill’s name and apiKeyId; install the other one instead');
        installed(ctx, await skills.install({ ...m2, mode: m2.mode ?? prev.mode }, prev.source));
        return;
      }
      const b = validated(validatePatch, body);
      const next: SkillRecord = { ...prev, ...(b.mode ? { mode: b.mode } : {}), ...(b.description !== undefined ? { description: b.description } : {}), updatedAt: skills.now() };
      skills.store.save(next);
      ok(ctx, skillView(next, true));
    }),
  );
  m(
    r.delete('/api/skills/:id', (ctx) => {
      const s = find(ctx);
      skills.store.delete(s.id);
      ok(ctx, { success: true, id: s.id, deleted: true });
    }),
  );
}
