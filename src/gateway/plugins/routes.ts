/**
 * Plugins (management auth):
 *   GET  /api/plugins                         installed plugins: version, hooks, active, config, last error
 *   POST /api/plugins/install                 {path}: a directory or .tgz on the daemon's machine (installed inactive)
 *   DELETE /api/plugins/{name}
 *   POST /api/plugins/{name}/activate, /deactivate
 *   GET/PUT /api/plugins/{name}/config        checked against the plugin's config schema
 */
import { isAbsolute } from 'node:path';
import { Type } from '@sinclair/typebox';
import { badRequest } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { ok, readPlainObject, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import { readPackage } from './package.js';
import type { PluginRecord } from './service.js';

const validateInstall = compile(Type.Object({ path: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }));
const iso = (ms: number) => new Date(ms).toISOString();
const view = (p: PluginRecord) => ({ ...p, installedAt: iso(p.installedAt), updatedAt: iso(p.updatedAt) });

export function pluginRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const plugins = svc.plugins;
  m(r.get('/api/plugins', (ctx) => ok(ctx, { plugins: plugins.list().map(view), dir: plugins.dir })));
  m(
    r.post('/api/plugins/install', async (ctx) => {
      const b = validated(validateInstall, await readPlainObject(ctx));
      if (!isAbsolute(b.path)) throw badRequest('path must be absolute (a directory or .tgz on the daemon\'s machine)');
      const { plugin, upgraded } = await plugins.install(await readPackage(b.path));
      ok(ctx, { ...view(plugin), upgraded }, upgraded ? 200 : 201);
    }),
  );
  m(
    r.delete('/api/plugins/:name', (ctx) => {
      plugins.uninstall(ctx.params.name!);
      ok(ctx, { name: ctx.params.name, deleted: true });
    }),
  );
  m(r.post('/api/plugins/:name/activate', (ctx) => ok(ctx, view(plugins.setActive(ctx.params.name!, true)))));
  m(r.post('/api/plugins/:name/deactivate', (ctx) => ok(ctx, view(plugins.setActive(ctx.params.name!, false)))));
  m(r.get('/api/plugins/:name/config', (ctx) => {
    const p = plugins.get(ctx.params.name!);
    ok(ctx, { name: p.name, config: p.config, schema: p.configSchema });
  }));
  m(
    r.put('/api/plugins/:name/config', async (ctx) => {
      const p = plugins.setConfig(ctx.params.name!, await readPlainObject(ctx));
      ok(ctx, { name: p.name, config: p.config, schema: p.configSchema });
    }),
  );
}
