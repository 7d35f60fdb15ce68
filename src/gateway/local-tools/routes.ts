/**
 * Local tooling (management auth):
 *   GET  /api/cli-tools/all-statuses              every known AI coding CLI: installed, runnable, version, …
 *   GET  /api/cli-tools/{id}/status               one of them (`claude`, `opencode`, `aider`, `gemini`)
 *   GET  /api/cli-tools/runtime/{id}              how it runs: binary, runtime mode, version
 *   GET  /api/cli-tools/{id}-settings             its gateway settings as its file has them (keys masked);
 *                                                 the seed's names tool-a … tool-d are the same four, in order
 *   POST /api/cli-tools/apply                     point one at this gateway {tool, apiKey, baseUrl?, model?}
 *   GET/POST /api/cli-tools/backups               list; back a tool's file up now {tool}
 *   POST /api/cli-tools/{id}/restore              put a backup back {backupId?} (default: the newest)
 *   GET  /api/cli-tools/intercept-proxy           the address and model aliases tools should use
 *   POST /api/cli-tools/intercept-proxy/alias     {from, to}: a model name a tool sends, routed to a gateway model
 *   GET/POST/DELETE /api/acp/agents               ACP agents: detected list with summary and cache age;
 *                                                 add a custom agent {id, name, binary (a name on PATH),
 *                                                 providerAlias?, spawnArgs?, protocol?}, or
 *                                                 {action: refresh}; DELETE ?id=
 */
import { Type } from '@sinclair/typebox';
import { badRequest, HttpError, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { flagQuery, ok, readPlainObject, requestOrigin, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import { BINARY_NAME, BUILT_IN_AGENTS, CACHE_TTL_MS, VERSION_FLAG, type AcpAgentSpec } from './acp.js';
import { CLI_TOOLS, toolOf, type CliTool } from './cli-tools.js';
import { detect } from './detect.js';
import { messageOf } from '../in-process.js';

const validateApply = compile(
  Type.Object(
    { tool: Type.String({ minLength: 1 }), apiKey: Type.String({ minLength: 1, maxLength: 512 }), baseUrl: Type.Optional(Type.String({ pattern: '^https?://[^/]', maxLength: 2048 })), model: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })) },
    { additionalProperties: false },
  ),
);
const validateBackup = compile(Type.Object({ tool: Type.String({ minLength: 1 }) }, { additionalProperties: false }));
const validateRestore = compile(Type.Object({ backupId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, { additionalProperties: false }));
const validateAlias = compile(Type.Object({ from: Type.String({ minLength: 1, maxLength: 256 }), to: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false }));
const ID = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' });
const validateAgent = compile(
  Type.Object(
    {
      id: ID,
      name: Type.String({ minLength: 1, maxLength: 100 }),
      binary: Type.String({ minLength: 1, maxLength: 128 }),
      providerAlias: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
      spawnArgs: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 32 })),
      protocol: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    },
    { additionalProperties: false },
  ),
);

export function localToolRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const tools = svc.cliTools;
  const env = () => svc.state.env;
  const status = async (t: CliTool) => {
    const d = await detect(t.binary, t.versionArgs, env());
    return { id: t.id, name: t.name, ...d };
  };

  m(r.get('/api/cli-tools/all-statuses', async (ctx) => ok(ctx, { tools: Object.fromEntries((await Promise.all(CLI_TOOLS.map(status))).map((s) => [s.id, s])) })));
  m(r.get('/api/cli-tools/:id/status', async (ctx) => ok(ctx, await status(toolOf(ctx.params.id!)))));
  m(
    r.get('/api/cli-tools/runtime/:id', async (ctx) => {
      const t = toolOf(ctx.params.id!);
      const d = await detect(t.binary, t.versionArgs, env());
      ok(ctx, { id: t.id, binary: t.binary, commandPath: d.commandPath, runtimeMode: d.runtimeMode, version: d.version, runnable: d.runnable, reason: d.reason, settingsPath: tools.pathOf(t) });
    }),
  );
  // `/api/cli-tools/{tool}-settings` (a parametric segment cannot end in a fixed suffix: the name is matched here).
  m(
    r.get('/api/cli-tools/:id', (ctx) => {
      const name = ctx.params.id!;
      if (!name.endsWith('-settings')) throw notFound(`no route GET /api/cli-tools/${name}`);
      const t = toolOf(name.slice(0, -'-settings'.length));
      const s = tools.read(t);
      const gateway = requestOrigin(ctx);
      ok(ctx, { tool: t.id, name: t.name, ...s, pointsAtGateway: s.baseUrl !== null && gateway !== null && s.baseUrl.startsWith(gateway) });
    }),
  );
  m(
    r.post('/api/cli-tools/apply', async (ctx) => {
      const b = validated(validateApply, await readPlainObject(ctx));
      const t = toolOf(b.tool);
      // Values are written into .env, YAML and JSON files: a line break would add lines of its own
      // (another variable, another key) to a .env or YAML file.
      for (const [field, v] of [['apiKey', b.apiKey], ['baseUrl', b.baseUrl], ['model', b.model]] as const) {
        if (v !== undefined && /[\u0000-\u001f\u007f\u2028\u2029]/.test(v)) throw badRequest(`${field} must not contain line breaks or other control characters (it is written into ~/${t.file}); nothing was changed`, { code: 'invalid_value' });
      }
      const baseUrl = (b.baseUrl ?? requestOrigin(ctx))?.replace(/\/+$/, '').replace(/\/v1$/, '');
      if (!baseUrl) throw badRequest('baseUrl is required over the control socket (the address the tool reaches this gateway at)');
      const { path, backup } = tools.apply(t, { baseUrl, apiKey: b.apiKey, ...(b.model ? { model: b.model } : {}) });
      ok(ctx, { applied: true, tool: t.id, path, baseUrl, backup });
    }),
  );
  m(r.get('/api/cli-tools/backups', (ctx) => ok(ctx, { backups: tools.backups(ctx.query.get('tool') ? toolOf(ctx.query.get('tool')!).id : undefined) })));
  m(
    r.post('/api/cli-tools/backups', async (ctx) => {
      const b = validated(validateBackup, await readPlainObject(ctx));
      ok(ctx, tools.backup(toolOf(b.tool)), 201);
    }),
  );
  m(
    r.post('/api/cli-tools/:id/restore', async (ctx) => {
      const b = validated(validateRestore, await readPlainObject(ctx, true));
      const r = tools.restore(toolOf(ctx.params.id!), b.backupId);
      ok(ctx, { ok: true, path: r.path, restoredFrom: r.restored, previous: r.previous });
    }),
  );
  m(
    r.get('/api/cli-tools/intercept-proxy', (ctx) => {
      const gw = requestOrigin(ctx);
      ok(ctx, {
        baseUrl: gw,
        endpoints: gw ? { openai: `${gw}/v1`, anthropic: gw, gemini: gw } : null,
        aliases: [...svc.state.catalog.aliases.values()].map((a) => ({ from: a.alias, to: a.model, source: a.source })),
        tools: CLI_TOOLS.map((t) => ({ id: t.id, settings: tools.read(t).baseUrl })),
      });
    }),
  );
  m(
    r.post('/api/cli-tools/intercept-proxy/alias', async (ctx) => {
      const b = validated(validateAlias, await readPlainObject(ctx));
      // The gateway's own alias route: the same checks (a real target, no loops, not a combo name).
      const res = await svc.internal({ method: 'POST', url: '/api/models/alias', body: { alias: b.from, model: b.to }, trusted: true });
      if (res.status >= 300) throw new HttpError(res.status, messageOf(res));
      ok(ctx, { from: b.from, to: b.to }, res.status);
    }),
  );

  const agentsView = async (refresh: boolean) => {
    const { agents, cacheAge } = await svc.acpAgents.list(refresh);
    const installed = agents.filter((a) => a.installed).length;
    return { agents, summary: { total: agents.length, installed, notFound: agents.length - installed, builtIn: agents.filter((a) => !a.isCustom).length, custom: agents.filter((a) => a.isCustom).length }, cacheTtlMs: CACHE_TTL_MS, cacheAge };
  };
  m(r.get('/api/acp/agents', async (ctx) => ok(ctx, await agentsView(flagQuery(ctx, 'refresh')))));
  m(
    r.post('/api/acp/agents', async (ctx) => {
      const body = await readPlainObject(ctx);
      if (body.action !== undefined) {
        if (body.action !== 'refresh' || Object.keys(body).length !== 1) throw badRequest('the only action is {"action": "refresh"}');
        return ok(ctx, await agentsView(true));
      }
      // Detection runs BINARY --version, found on PATH; no command of the caller's is ever run.
      if ('versionCommand' in body) throw badRequest(`versionCommand is not accepted: detection runs the binary found on PATH with ${VERSION_FLAG}, without a shell`);
      const b = validated(validateAgent, body);
      if (!new RegExp(BINARY_NAME).test(b.binary)) throw badRequest(`binary must be a program name looked up on PATH (letters, digits, . _ + -; no path, no spaces or shell syntax): ${JSON.stringify(b.binary.slice(0, 128))}`);
      if (BUILT_IN_AGENTS.some((a) => a.id === b.id)) throw badRequest(`${b.id} is a built-in agent; choose another id`);
      const spec: AcpAgentSpec = { id: b.id, name: b.name, binary: b.binary, providerAlias: b.providerAlias ?? null, spawnArgs: b.spawnArgs ?? [], protocol: b.protocol ?? 'acp' };
      const { created } = svc.acpAgents.saveCustom(spec);
      const view = await agentsView(true);
      ok(ctx, { agent: view.agents.find((a) => a.id === spec.id), summary: view.summary }, created ? 201 : 200);
    }),
  );
  m(
    r.delete('/api/acp/agents', (ctx) => {
      const id = ctx.query.get('id');
      if (!id) throw badRequest('id is required (query parameter)');
      if (BUILT_IN_AGENTS.some((a) => a.id === id)) throw badRequest(`${id} is a built-in agent and cannot be removed`);
      if (!svc.acpAgents.removeCustom(id)) throw notFound(`custom agent ${id} not found`);
      ok(ctx, { id, deleted: true });
    }),
  );
}
