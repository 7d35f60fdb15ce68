/**
 * Agent skills, prompt-based (management auth):
 *   GET/POST /api/agent-skills               list (q, page/limit or offset/limit); create {name, description, prompt, model?, temperature?}
 *   GET/PUT/DELETE /api/agent-skills/{id}    by id or name
 *   GET  /api/agent-skills/{id}/raw          the skill as SKILL.md (text/markdown)
 *   POST /api/agent-skills/generate          {description, model, name?, temperature?, save?}: a draft written by a model through the gateway's routing
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { HttpError, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import type { GatewayHandle } from '../../http/gateway-handle.js';
import { ok, pageQuery, readPlainObject, validated } from '../routes/common.js';
import { skillMarkdown } from './raw.js';
import type { AgentSkillRecord, AgentSkillStore } from './store.js';

const NAME = '^[a-z0-9][a-z0-9-]{0,63}$';
const fields = {
  name: Type.String({ pattern: NAME }),
  description: Type.String({ minLength: 1, maxLength: 1024 }),
  prompt: Type.String({ minLength: 1, maxLength: 100_000 }),
  model: Type.String({ minLength: 1, maxLength: 256 }),
  temperature: Type.Number({ minimum: 0, maximum: 2 }),
};
const validateCreate = compile(
  Type.Object(
    { name: fields.name, description: fields.description, prompt: fields.prompt, model: Type.Optional(fields.model), temperature: Type.Optional(fields.temperature) },
    { additionalProperties: false },
  ),
);
const validatePatch = compile(
  Type.Object(
    {
      name: Type.Optional(fields.name),
      description: Type.Optional(fields.description),
      prompt: Type.Optional(fields.prompt),
      model: Type.Optional(Type.Union([fields.model, Type.Null()])),
      temperature: Type.Optional(Type.Union([fields.temperature, Type.Null()])),
    },
    { additionalProperties: false },
  ),
);
const validateGenerate = compile(
  Type.Object(
    { description: Type.String({ minLength: 1, maxLength: 4000 }), model: fields.model, name: Type.Optional(fields.name), temperature: Type.Optional(fields.temperature), save: Type.Optional(Type.Boolean()) },
    { additionalProperties: false },
  ),
);

const iso = (ms: number) => new Date(ms).toISOString();

export function agentSkillView(s: AgentSkillRecord): Record<string, unknown> {
  return { id: s.id, name: s.name, description: s.description, prompt: s.prompt, model: s.model ?? null, temperature: s.temperature ?? null, createdAt: iso(s.createdAt), updatedAt: iso(s.updatedAt) };
}

/** A name from free text: lower case, words joined by hyphens. */
export function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return s || 'agent-skill';
}

const GENERATOR = `You write agent skills: reusable instructions an AI agent follows for one kind of task.
Answer with one JSON object and nothing else: {"name": "...", "description": "...", "prompt": "..."}.
name: lower case words joined by hyphens, at most 64 characters. description: one sentence saying what the skill does and when to use it.
prompt: the instructions themselves, in Markdown, complete and specific.`;

function parseDraft(text: string): { name?: string; description?: string; prompt?: string } | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const v = JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>;
    return {
      ...(typeof v.name === 'string' ? { name: v.name } : {}),
      ...(typeof v.description === 'string' ? { description: v.description } : {}),
      ...(typeof v.prompt === 'string' ? { prompt: v.prompt } : {}),
    };
  } catch {
    return undefined;
  }
}

export function agentSkillRoutes(r: Router, store: AgentSkillStore, gateway: GatewayHandle, now: () => number): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const find = (ctx: RequestContext): AgentSkillRecord => {
    const s = store.get(ctx.params.id!);
    if (!s) throw notFound(`agent skill ${ctx.params.id} not found`);
    return s;
  };
  const checkFree = (name: string, self?: string) => {
    const other = store.byName(name);
    if (other && other.id !== self) throw new HttpError(409, `an agent skill named ${name} exists (${other.id})`, { code: 'agent_skill_exists' });
  };
  const create = (b: { name: string; description: string; prompt: string; model?: string; temperature?: number }): AgentSkillRecord => {
    checkFree(b.name);
    const t = now();
    const s: AgentSkillRecord = { id: `ask_${randomBytes(9).toString('base64url')}`, name: b.name, description: b.description, prompt: b.prompt, ...(b.model ? { model: b.model } : {}), ...(b.temperature !== undefined ? { temperature: b.temperature } : {}), createdAt: t, updatedAt: t };
    store.save(s);
    return s;
  };

  m(
    r.get('/api/agent-skills', (ctx) => {
      const { limit, offset } = pageQuery(ctx);
      const { rows, total } = store.list(ctx.query.get('q') || undefined, offset, limit);
      ok(ctx, { agentSkills: rows.map(agentSkillView), total, offset, limit });
    }),
  );
  m(r.post('/api/agent-skills', async (ctx) => ok(ctx, agentSkillView(create(validated(validateCreate, await readPlainObject(ctx)))), 201)));
  m(
    r.post('/api/agent-skills/generate', async (ctx) => {
      const b = validated(validateGenerate, await readPlainObject(ctx));
      const answer = await gateway.chat({
        model: b.model,
        messages: [
          { role: 'system', content: GENERATOR },
          { role: 'user', content: `Write an agent skill for this: ${b.description}${b.name ? `\nUse the name ${b.name}.` : ''}` },
        ],
        temperature: b.temperature ?? 0.2,
        json: true,
      });
      const d = parseDraft(answer.content);
      const draft = {
        name: b.name ?? (d?.name && new RegExp(NAME).test(d.name) ? d.name : slug(d?.name ?? b.description)),
        description: (d?.description ?? b.description).slice(0, 1024),
        prompt: d?.prompt?.trim() || answer.content.trim(),
        model: b.model,
        ...(b.temperature !== undefined ? { temperature: b.temperature } : {}),
      };
      if (!draft.prompt) throw new HttpError(502, `model ${answer.model} answered with an empty draft`, { code: 'empty_draft' });
      const saved = b.save ? agentSkillView(create(draft)) : undefined;
      ok(ctx, { draft, generatedBy: { model: answer.model, provider: answer.provider, usage: answer.usage }, ...(saved ? { saved } : {}) }, saved ? 201 : 200);
    }),
  );
  m(r.get('/api/agent-skills/:id', (ctx) => ok(ctx, agentSkillView(find(ctx)))));
  m(
    r.get('/api/agent-skills/:id/raw', (ctx) => {
      const text = skillMarkdown(find(ctx));
      ctx.res.writeHead(200, { 'Content-Type': 'text/markdown; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
      ctx.res.end(text);
    }),
  );
  m(
    r.put('/api/agent-skills/:id', async (ctx) => {
      const prev = find(ctx);
      const b = validated(validatePatch, await readPlainObject(ctx));
      if (b.name !== undefined) checkFree(b.name, prev.id);
      const next: AgentSkillRecord = {
        id: prev.id,
        name: b.name ?? prev.name,
        description: b.description ?? prev.description,
        prompt: b.prompt ?? prev.prompt,
        createdAt: prev.createdAt,
        updatedAt: now(),
      };
      const model = b.model === null ? undefined : (b.model ?? prev.model);
      const temperature = b.temperature === null ? undefined : (b.temperature ?? prev.temperature);
      if (model !== undefined) next.model = model;
      if (temperature !== undefined) next.temperature = temperature;
      store.save(next);
      ok(ctx, agentSkillView(next));
    }),
  );
  m(
    r.delete('/api/agent-skills/:id', (ctx) => {
      const s = find(ctx);
      store.delete(s.id);
      ok(ctx, { success: true, id: s.id, deleted: true });
    }),
  );
}
