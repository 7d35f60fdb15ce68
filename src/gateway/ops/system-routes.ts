/**
 * Operating the gateway (management auth):
 *   GET  /api/db-backups              the backups (DIR/backups/gateway)
 *   PUT  /api/db-backups              make one now {label?} (SQLite online backup: consistent under load)
 *   POST /api/db-backups              restore {id}: 202, then the gateway restarts on that data
 *                                     (the seed's verbs; the old shapes, POST {label?} and PUT {id}, get a 400 saying so)
 *   GET  /api/db-backups/export       the live database as an SQLite file
 *   POST /api/db-backups/import       an SQLite file as the body: checked (400 and nothing changed when it is
 *                                     not a gateway database of a known schema version), then restored as above
 *   GET  /api/db-backups/exportAll    a .tar.gz of every component database and configuration file;
 *                                     credentials only with secrets=1 (control socket, login or admin-scoped key)
 *   POST /api/system/env/repair       check the state directory and environment; fix what can be fixed (`dryRun`)
 *   GET  /api/init                    first-run state
 *   POST /api/restart                 restart the gateway component (the daemon's other APIs keep serving)
 *   POST /api/shutdown                stop the daemon gracefully
 */
import { createReadStream, existsSync, readFileSync, rmSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { HttpError, badRequest } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { ok, readPlainObject, validated, flagQuery } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import type { GatewayBackups } from './backups.js';
import { repairEnvironment } from './env-repair.js';

const MAX_IMPORT = 4 * 1024 * 1024 * 1024;
const validateCreate = compile(Type.Object({ label: Type.Optional(Type.String({ maxLength: 40 })) }, { additionalProperties: false }));
const validateRepair = compile(Type.Object({ provider: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })), dryRun: Type.Optional(Type.Boolean()) }, { additionalProperties: false }));
const validateRestore = compile(Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }));

export interface SystemControls {
  restart?: (prepare?: () => void | Promise<void>) => Promise<void>;
  shutdown?: () => void;
  exportState?: (opts: { secrets: boolean }) => Promise<Readable>;
}

const view = (b: { id: string; bytes: number; createdAt: string; schemaVersion: number | null }) => ({ id: b.id, bytes: b.bytes, createdAt: b.createdAt, schemaVersion: b.schemaVersion });

export function systemRoutes(r: Router, svc: GatewayServices, backups: GatewayBackups, controls: SystemControls): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const restartable = () => {
    if (!controls.restart) throw new HttpError(503, 'restarting needs the daemon (this gateway runs embedded)', { code: 'restart_unavailable' });
    return controls.restart;
  };
  /** Answer first, then restart once the answer is out. */
  const afterAnswer = (ctx: RequestContext, fn: () => Promise<void>) => {
    ctx.res.once('finish', () => setImmediate(() => void fn().catch((e: unknown) => svc.log.error({ err: e }, 'gateway: restart failed'))));
  };
  /** Stage, check and migrate a copy (400 when it cannot be used: nothing changes), answer, then restart on it. */
  const restoreFrom = async (ctx: RequestContext, source: string, isUpload: boolean, what: string) => {
    const restart = restartable();
    const dbPath = svc.state.db.store.path;
    const { staged, version } = await backups.stage(source, dbPath, isUpload);
    ok(ctx, { restoring: what, schemaVersion: version, note: 'the gateway restarts on the restored data; the data it replaces is kept as a backup, the audit log is carried across' }, 202);
    afterAnswer(ctx, () => restart(() => backups.swapIn(staged, dbPath)));
  };

  m(r.get('/api/db-backups', (ctx) => ok(ctx, { backups: backups.list().map(view), dir: backups.dir })));
  m(
    r.put('/api/db-backups', async (ctx) => {
      const body = await readPlainObject(ctx, true);
      if ('id' in body) throw badRequest('PUT /api/db-backups takes a backup now ({label?}); to restore one, send POST /api/db-backups {id} (the two verbs were the other way round before)', { code: 'verb_changed' });
      const b = validated(validateCreate, body);
      ok(ctx, view(await backups.create(b.label)), 201);
    }),
  );
  m(
    r.post('/api/db-backups', async (ctx) => {
      const body = await readPlainObject(ctx, true);
      if (!('id' in body)) throw badRequest('POST /api/db-backups restores a backup ({id}); to take a backup now, send PUT /api/db-backups {label?} (the two verbs were the other way round before)', { code: 'verb_changed' });
      const b = validated(validateRestore, body);
      await restoreFrom(ctx, backups.pathOf(b.id), false, b.id);
    }),
  );
  m(
    r.get('/api/db-backups/export', async (ctx) => {
      const file = await backups.snapshot();
      const name = `gateway-${new Date(svc.clock.now()).toISOString().replace(/[:.]/g, '-')}.db`;
      ctx.res.writeHead(200, { 'Content-Type': 'application/vnd.sqlite3', 'Content-Disposition': `attachment; filename="${name}"` });
      const s = createReadStream(file);
      const done = () => rmSync(file, { force: true });
      s.on('close', done);
      ctx.res.on('close', () => s.destroy());
      s.pipe(ctx.res);
      await new Promise<void>((resolve) => ctx.res.on('close', () => resolve()));
    }),
  );
  m(
    r.get('/api/db-backups/exportAll', async (ctx) => {
      if (!controls.exportState) throw new HttpError(503, 'exporting the whole state needs the daemon (this gateway runs embedded)', { code: 'export_unavailable' });
      const secrets = flagQuery(ctx, 'secrets');
      if (secrets) svc.auth.checkAdmin(ctx);
      const archive = await controls.exportState({ secrets });
      const name = `ctl-state-${new Date(svc.clock.now()).toISOString().replace(/[:.]/g, '-')}.tar.gz`;
      ctx.res.writeHead(200, { 'Content-Type': 'application/gzip', 'Content-Disposition': `attachment; filename="${name}"` });
      ctx.res.on('close', () => archive.destroy());
      archive.on('error', (e) => {
        svc.log.error({ err: e }, 'gateway: state archive failed');
        ctx.res.destroy(e);
      });
      archive.pipe(ctx.res);
      await new Promise<void>((resolve) => ctx.res.on('close', () => resolve()));
    }),
  );
  m(
    r.post('/api/db-backups/import', async (ctx) => {
      restartable();
      const file = await backups.receive(ctx.req, MAX_IMPORT);
      await restoreFrom(ctx, file, true, 'upload');
    }),
  );

  m(
    r.post('/api/system/env/repair', async (ctx) => {
      const b = validated(validateRepair, await readPlainObject(ctx, true));
      const dryRun = b.dryRun ?? flagQuery(ctx, ctx.query.has('dryRun') ? 'dryRun' : 'dry_run');
      const file = svc.state.filePath;
      const yaml = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
      if (b.provider !== undefined && !svc.state.catalog.providers.has(b.provider) && !(yaml ?? '').includes(b.provider)) throw badRequest(`provider: no provider ${JSON.stringify(b.provider)}`);
      const { checks, backupPath } = repairEnvironment({ stateDir: svc.state.stateDir, env: svc.state.env, gatewayYaml: yaml, ...(b.provider !== undefined ? { provider: b.provider } : {}), dryRun, now: svc.clock.now() });
      // The seed's shape ({success, repaired, backupPath}) and the checks behind it.
      ok(ctx, { success: checks.every((c) => c.status === 'ok' || c.status === 'repaired'), repaired: checks.filter((c) => c.status === 'repaired').map((c) => c.detail), backupPath, dryRun, checks });
    }),
  );
  m(
    r.get('/api/init', (ctx) =>
      ok(ctx, {
        initialized: svc.state.catalog.providers.size > 0,
        providers: svc.state.catalog.providers.size,
        apiKeys: svc.state.catalog.keysById.size,
        loginConfigured: svc.auth.loginConfigured(),
        requireLogin: svc.runtime.general.value.requireLogin,
        version: svc.version,
      }),
    ),
  );
  m(
    r.post('/api/restart', (ctx) => {
      const restart = restartable();
      ok(ctx, { restarting: true }, 202);
      afterAnswer(ctx, () => restart());
    }),
  );
  m(
    r.post('/api/shutdown', (ctx) => {
      if (!controls.shutdown) throw new HttpError(503, 'shutting down needs the daemon (this gateway runs embedded)', { code: 'shutdown_unavailable' });
      const shutdown = controls.shutdown;
      ok(ctx, { shuttingDown: true }, 202);
      ctx.res.once('finish', () => shutdown());
    }),
  );
}
