/**
 * The content pipeline component (server `pipeline`, default 127.0.0.1:8000, base `/api`):
 * research → draft (through the gateway's in-process chat) → review → publish → measure.
 */
import { PipelineScheduler } from './scheduler/index.js';
import { fetchMetrics } from './publish/metrics-fetch.js';
import { generateProposals } from './proposals/generate.js';
import { requireGateway } from './gateway-access.js';
import { sendText } from '../http/respond.js';
import { pipelineMetrics } from './prometheus.js';
import { join } from 'node:path';
import type { GatewayHandle } from '../http/gateway-handle.js';
import type { ComponentDefinition, ComponentInstance } from '../http/component.js';
import { Router } from '../http/router.js';
import { catalogRoutes } from './api/routes-catalog.js';
import { insightRoutes } from './api/routes-insights.js';
import { pipelineRoutes } from './api/routes-pipeline.js';
import { postRoutes } from './api/routes-posts.js';
import { renderError } from './api/render-error.js';
import { settingsRoutes } from './api/routes-settings.js';
import { styleRoutes } from './api/routes-style.js';
import { systemRoutes } from './api/routes-system.js';
import { ApiRegistry } from './api/registry.js';
import { mountConsole } from '../http/console.js';
import { bearerAuth } from './auth/middleware.js';
import { stableHashForPassword } from './auth/password.js';
import { TokenIssuer, loadOrCreateKey } from './auth/tokens.js';
import { loadPipelineConfig, PIPELINE_CONFIG_KEYS } from './config.js';
import { PIPELINE_MIGRATIONS } from './data/migrations.js';
import { PIPELINE_TABLES } from './data/tables.js';
import { PIPELINE_SHARED_MIGRATIONS } from './data/pg-migrations.js';
import { inTransaction, reposOver } from './data/repos.js';
import { PgSql, SqliteSql, type Sql } from '../store/sql.js';
import { ModelSettings } from './model-setting.js';
import { Publisher } from './publish/publisher.js';
import { XApiClient } from './publish/x-api.js';
import { PipelineRunner } from './runner.js';
import { PostImages } from './images.js';
import type { Services } from './services.js';

export type { Services } from './services.js';

/** What other code (tests, the daemon) may reach in-process. */
export interface PipelineHandle {
  /** Publish due scheduled posts now (the timer does this every publish-interval). */
  publishDue(): Promise<number>;
  /** Run the scheduled jobs that are due at the clock's time (the scheduler's timer does this). */
  runSchedule(): Promise<void>;
  /** The component's database (tests seed and inspect it). */
  sql: Sql;
}

export const pipelineComponent: ComponentDefinition = {
  name: 'pipeline',
  defaultAddress: '127.0.0.1:8000',
  configKeys: PIPELINE_CONFIG_KEYS,
  async create(ctx): Promise<ComponentInstance> {
    const config = loadPipelineConfig(ctx.config ?? {}, ctx.env, (clear) => stableHashForPassword(clear, join(ctx.stateDir, 'secrets', 'pipeline-owner-password.hash')));
    const pg = ctx.shared?.postgres;
    let sql: Sql;
    if (pg) {
      await pg.migrate('pipeline', PIPELINE_SHARED_MIGRATIONS);
      sql = PgSql.over(pg, PIPELINE_TABLES);
    } else sql = new SqliteSql(ctx.openStore(PIPELINE_MIGRATIONS));
    const { clock } = ctx;
    const repos = reposOver(sql, clock);
    const { posts, sources, style, runs, activity, usedItems } = repos;
    const model = new ModelSettings(repos.settings, config.envModel);
    await style.ensureDefault();
    if (!config.ownerPasswordHash) {
      ctx.log.warn('pipeline: no owner password configured (pipeline.owner-password or PIPELINE_OWNER_PASSWORD): login answers 503, so TCP access needs one; the control socket works');
    }
    // Several daemons: a run another daemon has going is not interrupted (it holds the run lease).
    const leases = pg?.leases;
    const runLock = leases && { take: () => leases.hold('pipeline:run'), release: () => leases.release('pipeline:run') };
    let interrupted = 0;
    if (!runLock) interrupted = await runs.markInterrupted();
    else if (await runLock.take()) {
      interrupted = await runs.markInterrupted().finally(() => runLock.release());
    }
    if (interrupted > 0) ctx.log.warn({ runs: interrupted }, 'pipeline runs interrupted by the last stop were marked interrupted');

    // Looked up at call time: the gateway may be created after us, or not run in this daemon.
    const gateway = () => ctx.handleOf<GatewayHandle>('gateway');
    const xClient = config.xApiToken
      ? new XApiClient(ctx.egress, { baseUrl: config.xApiBaseUrl, token: config.xApiToken, timeoutMs: config.fetchTimeoutMs, maxBytes: 1 << 20 })
      : null;
    const x = () => xClient;
    const images = new PostImages(ctx.uploadsDir, pg ? sql : undefined);
    const tx = <T>(fn: (r: typeof repos) => Promise<T>) => inTransaction(sql, clock, fn);
    const runner = new PipelineRunner({ ...(runLock ? { runLock } : {}), tx, clock, log: ctx.log, egress: ctx.egress, config, gateway, model, posts, sources, style, usedItems, runs, activity, alerts: ctx.alerts });
    const publisher = new Publisher({ posts, activity, x, clock, log: ctx.log, images, intervalMs: config.publishIntervalMs, alerts: ctx.alerts, ...(leases ? { lease: () => leases.hold('pipeline:publish') } : {}) });

    const services: Services = {
      config,
      clock,
      log: ctx.log,
      sql,
      tx,
      egress: ctx.egress,
      images,
      version: ctx.version,
      tokens: new TokenIssuer(loadOrCreateKey(ctx.stateDir), clock),
      posts,
      sources,
      categories: repos.categories,
      style,
      proposals: repos.proposals,
      activity,
      runs,
      analytics: repos.analytics,
      model,
      runner,
      publisher,
      gateway,
      x,
    };
    const scheduler = new PipelineScheduler(
      config.schedules,
      {
        run: async () => await (await runner.start()).done,
        metrics: async () => {
          const client = xClient;
          if (!client) throw new Error('no X API token configured (pipeline.x-api-token or PIPELINE_X_API_TOKEN)');
          return await fetchMetrics(client, { ...services, windowDays: config.metricsWindowDays });
        },
        proposals: async () => {
          const gw = requireGateway(gateway);
          const m = (await model.current()).model_id;
          if (!m) throw new Error('no model configured: set one with PUT /api/settings/model (ctl pipeline model set) or PIPELINE_MODEL');
          return await generateProposals(gw, m, { ...services, timeoutMs: config.llmTimeoutMs });
        },
      },
      repos.settings,
      clock,
      ctx.log,
      leases ? (job) => leases.hold(`pipeline:schedule:${job}`) : undefined,
    );
    services.scheduler = scheduler;

    const router = new Router({ ignoreTrailingSlash: true });
    router.use(bearerAuth(services.tokens, () => config.ownerPasswordHash));
    const api = new ApiRegistry(router);
    // The web console at / (sign in with the owner password; its data comes from this API with the token).
    mountConsole(router, { name: 'pipeline', title: 'ctl pipeline', onRoute: (r) => r.tag('public', true).tag('console', true) });
    const metrics = pipelineMetrics(sql, sources);
    // Scraped without a token, as Prometheus expects: counts only.
    api.add({
      method: 'GET',
      path: '/metrics',
      tag: 'system',
      public: true,
      summary: 'Prometheus metrics: runs, posts and sources by status, and the process (text format)',
      produces: 'text/plain; version=0.0.4',
      handler: async (ctx) => {
        const { text, contentType } = await metrics.render();
        sendText(ctx.res, 200, text, contentType);
      },
    });
    systemRoutes(api, services);
    pipelineRoutes(api, services);
    postRoutes(api, services);
    catalogRoutes(api, services);
    styleRoutes(api, services);
    insightRoutes(api, services);
    settingsRoutes(api, services);

    const handle: PipelineHandle = { publishDue: () => publisher.tick(), runSchedule: () => scheduler.tick(), sql };
    return {
      router,
      renderError,
      handle,
      start() {
        publisher.start();
        scheduler.start();
      },
      stop() {
        scheduler.stop();
        publisher.stop();
        runner.stop();
      },
    };
  },
};
