/**
 * The model gateway component (seed 001): inference routes in every client format, management API,
 * gateway.yaml, resilience (breakers, cool-downs, lock-outs, concurrency limits), the response cache
 * and idempotency, budgets and token limits, and the in-process chat handle the pipeline drafts
 * through.
 */
import { join } from 'node:path';
import { HttpError } from '../http/errors.js';
import { MAX_AUDIO_BYTES } from './routes/inference/transcriptions.js';
import { GatewayAlerts } from './alerts/index.js';
import { GatewayMetrics } from './metrics/index.js';
import type { ComponentDefinition, ComponentInstance } from '../http/component.js';
import { GatewayAuth } from './auth.js';
import { IdempotencyStore } from './cache/idempotency.js';
import { ResponseCache } from './cache/response-cache.js';
import { DEFAULT_CACHE, validateCachePatch } from './cache/settings.js';
import type { GatewayFileConfig } from './config-file.js';
import { buildHandle } from './handle-impl.js';
import { Budgets } from './limits/budgets.js';
import { KeyRpm } from './limits/rpm.js';
import { LimitsStore } from './limits/store.js';
import { TokenLimits } from './limits/token-limits.js';
import { ConcurrencyLimiter, DEFAULT_CONCURRENCY, validateConcurrencyPatch } from './resilience/concurrency.js';
import { ResilienceState } from './resilience/persist.js';
import { ResilientPolicy } from './resilience/policy.js';
import { checkResilience, DEFAULT_RESILIENCE, validateResiliencePatch } from './resilience/settings.js';
import { RoutingMetrics } from './routing/metrics.js';
import { sleepWithSignal } from './routing/attempts.js';
import { mountConsole } from '../http/console.js';
import { gatewayRouter, renderGatewayError } from './routes/index.js';
import { domainHttpError } from './routes/errors.js';
import { LayeredSettings } from './runtime-settings.js';
import type { GatewayServices, RuntimeSettings } from './services.js';
import { GatewayState } from './state.js';
import { SharedConfigStore } from './config/pg-store.js';
import { SharedLimitsStore } from './limits/shared-store.js';
import { SharedWebhookStore } from './webhooks/shared-store.js';
import { RedisWindows } from './limits/redis-windows.js';
import { SharedIdempotency } from './cache/redis-idempotency.js';
import { SharedResilience } from './resilience/redis.js';
import { SharedCacheTier } from './cache/redis-response-cache.js';
import { GatewayStore } from './store.js';
import { GATEWAY_MIGRATIONS } from './schema.js';
import { ProxyRegistry } from './proxies/registry.js';
import { ProxyProber, proxyProbeTarget } from './proxies/probe.js';
import { ReasoningCache } from './cache/reasoning.js';
import { RegisteredKeys, registeredKeyQuotas } from './registered-keys/service.js';
import { issueTrackerConfig } from './registered-keys/tracker.js';
import { EvalService } from './evals/service.js';
import { EvalStore } from './evals/store.js';
import { CliToolSettings, cliToolsHome } from './local-tools/cli-tools.js';
import { AcpAgents } from './local-tools/acp.js';
import { Tunnels, tunnelTarget } from './tunnels/supervisor.js';
import { PluginService } from './plugins/service.js';
import { Assessor } from './assess/service.js';
import { AgentTasks, agentProvidersOf } from './agents/tasks/service.js';
import { syncConfig } from './sync/remote.js';
import { OAuthService } from './oauth/service.js';
import { Vault } from './oauth/vault.js';
import { oauthProvidersOf } from './oauth/config.js';
import { ensureVersion, versionBefore, versionPaths } from './telemetry.js';
import { UsageRecorder } from './request-log/recorder.js';
import { FileService } from './files/service.js';
import { FetchPool } from './webfetch/pool.js';
import { SearchService } from './search/service.js';
import { checkGeneral, compileIpFilter, DEFAULT_GENERAL, validateGeneralPatch } from './ops/settings.js';
import { McpService } from './agents/mcp/server.js';
import { McpAudit } from './agents/mcp/audit.js';
import { A2aService } from './agents/a2a/service.js';
import { TaskStore } from './agents/a2a/store.js';
import { WS_PATHS, WsBridge } from './agents/ws-bridge/bridge.js';
import { checkCompression, DEFAULT_COMPRESSION, validateCompressionPatch } from './compression/settings.js';
import { LANGUAGE_PACKS } from './compression/caveman.js';
import { CompressionService } from './compression/service.js';
import { CompressionStore } from './compression/store.js';
import { GatewayBackups } from './ops/backups.js';
import { Policies } from './ops/policies.js';
import { AuditLog } from './ops/audit.js';
import { SkillService } from './skills/service.js';
import { SkillStore } from './skills/store.js';
import { DEFAULT_WEBHOOK_SETTINGS, WebhookService, type WebhookSettings } from './webhooks/service.js';
import { WebhookStore } from './webhooks/store.js';
import { BatchService, DEFAULT_BATCH_CONCURRENCY } from './batches/service.js';
import { inProcess } from './in-process.js';
import { keyUsable, type Principal } from './auth.js';

export type { GatewayHandle, GatewayChatRequest, GatewayChatResult, GatewayChatMessage } from '../http/gateway-handle.js';

/** How far back the request log seeds the per-combo counts (least-used, /api/combos/metrics). */
const METRICS_SEED_MS = 7 * 24 * 3600 * 1000;

/**
 * Settings from the environment, overridable in ctl.yaml `gateway:` (`require_api_key`,
 * `initial_password`): the environment names are the seed's.
 */
function effectiveEnv(env: NodeJS.ProcessEnv, config: Record<string, unknown>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  if (out.REQUIRE_API_KEY === undefined && config.require_api_key !== undefined) out.REQUIRE_API_KEY = String(config.require_api_key);
  if (out.INITIAL_PASSWORD === undefined && typeof config.initial_password === 'string') out.INITIAL_PASSWORD = config.initial_password;
  return out;
}

/** ctl.yaml `gateway.max_audio_bytes`: the largest audio upload (default 25 MiB, OpenAI's limit). */
function maxAudioBytes(config: Record<string, unknown>): number {
  const v = config.max_audio_bytes;
  if (v === undefined || v === null) return MAX_AUDIO_BYTES;
  if (!Number.isInteger(v) || (v as number) < 1024) throw new Error('ctl.yaml gateway.max_audio_bytes must be an integer number of bytes (at least 1024)');
  return v as number;
}

/** ctl.yaml `gateway.backups`: `{interval_hours, keep}` (scheduled backups; off unless interval_hours is set). */
function backupSchedule(config: Record<string, unknown>): { intervalMs: number; keep: number } | undefined {
  const b = config.backups;
  if (b === undefined || b === null) return undefined;
  if (typeof b !== 'object' || Array.isArray(b)) throw new Error('ctl.yaml gateway.backups must be a mapping');
  const o = b as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'interval_hours' && k !== 'keep') throw new Error(`ctl.yaml gateway.backups: unknown field ${k}`);
  const hours = o.interval_hours;
  const keep = o.keep ?? 7;
  if (typeof hours !== 'number' || !(hours >= 1 / 3600 && hours <= 24 * 365)) throw new Error('ctl.yaml gateway.backups.interval_hours must be a number of hours (a second to a year)');
  if (!Number.isInteger(keep) || (keep as number) < 1 || (keep as number) > 10_000) throw new Error('ctl.yaml gateway.backups.keep must be an integer from 1 to 10000');
  return { intervalMs: Math.round(hours * 3_600_000), keep: keep as number };
}

/** ctl.yaml `gateway.batch_concurrency`: batch lines in flight at once, across all batches (default 16). */
function batchConcurrency(config: Record<string, unknown>): number {
  const v = config.batch_concurrency;
  if (v === undefined || v === null) return DEFAULT_BATCH_CONCURRENCY;
  if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 1024) throw new Error('ctl.yaml gateway.batch_concurrency must be an integer from 1 to 1024');
  return v as number;
}

/** ctl.yaml `gateway.webhooks`: `retry_base_ms` (5000), `max_attempts` (8), `timeout_ms` (10000). */
function webhookSettings(config: Record<string, unknown>): WebhookSettings {
  const w = config.webhooks;
  if (w === undefined || w === null) return DEFAULT_WEBHOOK_SETTINGS;
  if (typeof w !== 'object' || Array.isArray(w)) throw new Error('ctl.yaml gateway.webhooks must be a mapping');
  const o = w as Record<string, unknown>;
  const int = (name: string, min: number, max: number, def: number): number => {
    const v = o[name];
    if (v === undefined) return def;
    if (!Number.isInteger(v) || (v as number) < min || (v as number) > max) throw new Error(`ctl.yaml gateway.webhooks.${name} must be an integer from ${min} to ${max}`);
    return v as number;
  };
  for (const k of Object.keys(o)) if (!['retry_base_ms', 'max_attempts', 'timeout_ms'].includes(k)) throw new Error(`ctl.yaml gateway.webhooks: unknown field ${k}`);
  return {
    retryBaseMs: int('retry_base_ms', 10, 3_600_000, DEFAULT_WEBHOOK_SETTINGS.retryBaseMs),
    maxAttempts: int('max_attempts', 1, 50, DEFAULT_WEBHOOK_SETTINGS.maxAttempts),
    timeoutMs: int('timeout_ms', 100, 120_000, DEFAULT_WEBHOOK_SETTINGS.timeoutMs),
  };
}

/** The principal a batch's lines run as: the key that created it, while it is usable. */
function batchPrincipal(state: GatewayState, owner: string, now: number): Principal | string {
  if (owner === '') return { trusted: false };
  const key = state.catalog.keysById.get(owner);
  if (!key) return 'the API key that created this batch no longer exists';
  if (!keyUsable(key, now)) return 'API key is disabled, revoked or expired';
  return { key, trusted: false };
}

/** Apply gateway.yaml's runtime sections (throws with a message naming the section on a bad value). */
function applyFileSections(runtime: RuntimeSettings, file: GatewayFileConfig): void {
  runtime.resilience.setFile(file.sections.resilience, 'gateway.yaml resilience');
  runtime.cache.setFile(file.sections.cache, 'gateway.yaml cache');
  runtime.concurrency.setFile(file.sections.concurrency, 'gateway.yaml concurrency');
  runtime.general.setFile(file.sections.general, 'gateway.yaml settings');
  runtime.compression.setFile(file.sections.compression, 'gateway.yaml compression');
}

function parseMetrics(raw: string | undefined): { hits?: number; misses?: number } | undefined {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as { hits?: number; misses?: number };
  } catch {
    return undefined;
  }
}

/**
 * The gateway's database: its own SQLite file, or, with ctl.yaml storage.postgres, the shared
 * configuration (providers, models, aliases, combos, mappings, keys, pricing, settings) in
 * PostgreSQL over that file (which keeps the rest).
 */
export async function openGatewayStore(ctx: Parameters<ComponentDefinition['create']>[0]): Promise<GatewayStore> {
  const local = ctx.openStore(GATEWAY_MIGRATIONS);
  const pg = ctx.shared?.postgres;
  if (!pg) return new GatewayStore(local);
  return SharedConfigStore.open(local, pg, ctx.shared!.daemonId, ctx.log, () => ctx.clock.now());
}

export function createGatewayServices(ctx: Parameters<ComponentDefinition['create']>[0], db: GatewayStore = new GatewayStore(ctx.openStore(GATEWAY_MIGRATIONS))): GatewayServices {
  const env = effectiveEnv(ctx.env, ctx.config ?? {});
  // Before the catalog: OAuth accounts take their access tokens from the OAuth service.
  const oauth = new OAuthService(db, new Vault(join(ctx.stateDir, 'secrets')), oauthProvidersOf(ctx.config ?? {}, env), ctx.egress, () => ctx.clock.now(), ctx.log);
  const state = new GatewayState(db, ctx.stateDir, env, ctx.clock);
  oauth.attach(state);
  const auth = new GatewayAuth(db, () => state.catalog, ctx.clock, env);
  const usage = new UsageRecorder(db, ctx.log, auth.lastUsed);
  const metrics = new RoutingMetrics();
  // From the request log (the cluster's, with shared storage: read in the background).
  db.logs.comboTargetCounts(ctx.clock.now() - METRICS_SEED_MS).then(
    (counts) => metrics.seed(counts),
    (e: unknown) => ctx.log.warn({ err: e }, 'gateway: could not seed combo metrics from the request log'),
  );
  const runtime: RuntimeSettings = {
    resilience: new LayeredSettings(db, 'resilience', DEFAULT_RESILIENCE, validateResiliencePatch, checkResilience),
    cache: new LayeredSettings(db, 'cache', DEFAULT_CACHE, validateCachePatch),
    concurrency: new LayeredSettings(db, 'concurrency', DEFAULT_CONCURRENCY, validateConcurrencyPatch),
    general: new LayeredSettings(db, 'general', DEFAULT_GENERAL, validateGeneralPatch, checkGeneral),
    compression: new LayeredSettings(db, 'compression', DEFAULT_COMPRESSION, validateCompressionPatch, (s) => checkCompression(s, Object.keys(LANGUAGE_PACKS))),
  };
  applyFileSections(runtime, state.fileConfig);

  // With shared storage, budgets and token limits are kept with the shared configuration.
  const limitsDb = db instanceof SharedConfigStore ? new SharedLimitsStore(db.store, db) : new LimitsStore(db.store);
  const budgets = new Budgets(limitsDb, ctx.log, () => usage.flush(), () => ctx.clock.now());
  if (ctx.shared?.redis) budgets.useSharedWindows(new RedisWindows(ctx.shared.redis, 'budget', ctx.shared.daemonId));
  const tokenLimits = new TokenLimits(limitsDb, () => usage.flush(), () => ctx.clock.now());
  if (ctx.shared?.redis) tokenLimits.useSharedWindows(new RedisWindows(ctx.shared.redis, 'tokens', ctx.shared.daemonId));
  const rpm = new KeyRpm();
  if (ctx.shared?.redis) rpm.useSharedWindows(new RedisWindows(ctx.shared.redis, 'rpm', ctx.shared.daemonId));
  const policy = new ResilientPolicy({
    settings: () => runtime.resilience.value,
    defaultCooldownMs: () => state.catalog.settings.rateLimitCooldownMs,
    provider: (id) => state.catalog.providers.get(id),
    clock: ctx.clock,
    limits: tokenLimits,
  });
  const resilienceState = new ResilienceState(db.store, policy, ctx.log, 1000, () => runtime.resilience.value.accounts.maxSessions);
  resilienceState.restore(ctx.clock.now());
  const concurrency = new ConcurrencyLimiter();
  concurrency.configure(runtime.concurrency.value);
  runtime.concurrency.onChange((s) => concurrency.configure(s));
  const cache = new ResponseCache(db.store, () => runtime.cache.value, ctx.clock, ctx.log, (m) => db.setSetting('cache.metrics', JSON.stringify(m)));
  cache.restore(parseMetrics(db.getSetting('cache.metrics')));
  runtime.cache.onChange(() => cache.reconfigure());

  // With shared storage the subscriptions and the delivery queue are the cluster's.
  const webhooks = new WebhookService(
    db instanceof SharedConfigStore ? new SharedWebhookStore(db.store, db) : new WebhookStore(db.store),
    db.deliveryQueue(),
    ctx.egress,
    ctx.clock,
    ctx.log,
    webhookSettings(ctx.config ?? {}),
    ctx.shared?.daemonId,
  );
  policy.breakers.transitions.push((provider, to) => webhooks.emit(to === 'opened' ? 'provider.circuit_opened' : 'provider.circuit_closed', { provider }));
  const files = new FileService(db.fileData(), ctx.uploadsDir, ctx.clock, ctx.log);
  const batches = new BatchService(db.batchData(), files, ctx.clock, ctx.log, (owner) => batchPrincipal(state, owner, ctx.clock.now()), batchConcurrency(ctx.config ?? {}), ctx.shared?.daemonId);
  batches.onEvent((event, b) =>
    webhooks.emit(event, { id: b.id, status: b.status, endpoint: b.endpoint, inputFileId: b.inputFileId, outputFileId: b.outputFileId ?? null, errorFileId: b.errorFileId ?? null, ...(b.errors ? { errors: b.errors } : {}) }),
  );

  const proxies = new ProxyRegistry(db.store, ctx.egress, () => ctx.clock.now());
  const quotas = registeredKeyQuotas(ctx.config ?? {});
  const agentProviders = agentProvidersOf(ctx.config ?? {}, env);
  const syncCfg = syncConfig(ctx.config ?? {}, env);
  const tunnelConfig = tunnelTarget(ctx.config ?? {});
  const svc: GatewayServices = {
    state,
    auth,
    usage,
    metrics,
    prometheus: new GatewayMetrics(() => svc),
    policy,
    resilienceState,
    runtime,
    cache,
    idempotency: new IdempotencyStore(() => ctx.clock.now()),
    reasoningCache: new ReasoningCache(() => ctx.clock.now()),
    budgets,
    tokenLimits,
    rpm,
    concurrency,
    strategy: { metrics, pricing: state.catalog.pricing, random: Math.random, counters: new Map() },
    clock: ctx.clock,
    egress: ctx.egress,
    uploadsDir: () => ctx.uploadsDir,
    maxAudioBytes: maxAudioBytes(ctx.config ?? {}),
    files,
    batches,
    webFetch: new FetchPool(() => ctx.clock.now()),
    search: new SearchService(ctx.egress, () => ctx.clock.now()),
    webhooks,
    memory: db.memoryStore(),
    mcp: new McpService(() => svc, new McpAudit(db.store), ctx.version, ctx.log),
    policies: new Policies(db.store),
    audit: new AuditLog(db.store),
    backups: new GatewayBackups(join(ctx.stateDir, 'backups', 'gateway'), db.store, GATEWAY_MIGRATIONS, () => ctx.clock.now()),
    system: { ...(ctx.restart ? { restart: ctx.restart.bind(ctx) } : {}), ...(ctx.shutdown ? { shutdown: ctx.shutdown.bind(ctx) } : {}), ...(ctx.exportState ? { exportState: ctx.exportState.bind(ctx) } : {}) },
    compression: new CompressionService(runtime.compression, new CompressionStore(db.store), () => ctx.clock.now(), ctx.log),
    a2a: new A2aService(new TaskStore(db.store), () => svc, env.GATEWAY_API_KEY || undefined),
    internal: () => Promise.reject(new Error('the gateway is not started')),
    skills: new SkillService(new SkillStore(db.store), () => state.fileConfig.skills, ctx.egress, ctx.clock, ctx.log, (id) => state.catalog.keysById.has(id), ctx.stateDir),
    proxies,
    registeredKeys: new RegisteredKeys(db.store, state, budgets, () => quotas, () => ctx.clock.now(), (k) =>
      webhooks.emit('key.created', { id: k.id, name: k.name, prefix: k.prefix, models: k.models, scopes: k.scopes }),
    ),
    issueTracker: issueTrackerConfig(ctx.config ?? {}, ctx.env),
    cliTools: new CliToolSettings(cliToolsHome(ctx.config ?? {}), join(ctx.stateDir, 'backups', 'cli-tools'), () => ctx.clock.now()),
    acpAgents: new AcpAgents(db, () => state.env, () => ctx.clock.now()),
    assessor: new Assessor(() => svc),
    oauth,
    ...(syncCfg ? { sync: syncCfg } : {}),
    agentTasks: new AgentTasks(db.store, () => agentProviders, ctx.egress, () => ctx.clock.now()),
    plugins: new PluginService(db.store, join(ctx.stateDir, 'plugins'), () => ctx.clock.now(), ctx.log),
    tunnels: new Tunnels(db, () => state.env, () => ctx.clock.now(), ctx.log, ctx.egress, tunnelConfig.tunnelProbeTimeoutMs),
    ...(tunnelConfig.tunnelTarget ? { tunnelTarget: tunnelConfig.tunnelTarget } : {}),
    evals: new EvalService(new EvalStore(db.store), () => svc.internal, () => ctx.clock.now(), ctx.log),
    proxyProber: new ProxyProber(proxies, ctx.egress, (p) => proxyProbeTarget(proxies, state.catalog, p), () => ctx.clock.now(), ctx.log),
    log: ctx.log,
    version: ctx.version,
    startedAt: ctx.clock.now(),
    sleep: sleepWithSignal,
  };
  if (ctx.shared?.redis) svc.cache.useShared(new SharedCacheTier(ctx.shared.redis, ctx.log));
  if (ctx.shared?.redis) svc.idempotency.useShared(new SharedIdempotency(ctx.shared.redis, ctx.shared.daemonId, svc.idempotency.windowMs), ctx.log);
  return svc;
}

/** With shared storage: other daemons' configuration changes rebuild this daemon's catalog and settings. */
function followSharedChanges(svc: GatewayServices): void {
  const db = svc.state.db;
  if (!(db instanceof SharedConfigStore)) return;
  const layered: Record<string, { reloadSaved(): void }> = { ...svc.runtime };
  db.follow((c) => {
    svc.state.rebuild(c.catalog);
    for (const key of c.settings) layered[key]?.reloadSaved();
    if (c.records.includes('budget')) svc.budgets.reload();
    if (c.records.includes('token_limit')) svc.tokenLimits.reload();
    if (c.records.includes('webhook')) svc.webhooks.refresh();
  });
}

/** ctl.yaml `gateway:`; lists (oauth_providers, agent_providers) are checked by their readers. */
const CONFIG_KEYS = {
  require_api_key: true,
  initial_password: true,
  max_audio_bytes: true,
  batch_concurrency: true,
  registered_keys: { max_active_per_issuer: true, max_issued_per_hour: true, max_active_per_account: true },
  issue_tracker: { url: true, repository: true, token: true, token_env: true, labels: true },
  oauth_providers: true,
  agent_providers: true,
  sync: {
    url: true,
    token: true,
    token_env: true,
    include_secrets: true,
    s3: { endpoint: true, bucket: true, key: true, region: true, access_key_id: true, access_key_id_env: true, secret_access_key: true, secret_access_key_env: true },
  },
  tunnels: { target: true, probe_timeout_ms: true },
  cli_tools: { home: true },
  webhooks: { retry_base_ms: true, max_attempts: true, timeout_ms: true },
  backups: { interval_hours: true, keep: true },
} as const;

export const gatewayComponent: ComponentDefinition = {
  name: 'gateway',
  defaultAddress: '127.0.0.1:20128',
  configKeys: CONFIG_KEYS,
  async create(ctx): Promise<ComponentInstance> {
    const svc = createGatewayServices(ctx, await openGatewayStore(ctx));
    followSharedChanges(svc);
    // Building the services and the router take 15-20 ms each: the loop the other APIs share is
    // given back between them (a restore or an import restarts the gateway while they serve).
    await new Promise((resolve) => setImmediate(resolve));
    if (ctx.shared?.redis) {
      await svc.resilienceState.share(new SharedResilience(ctx.shared.redis, ctx.shared.daemonId, ctx.log), () => ctx.clock.now()).catch((e: Error) =>
        ctx.log.warn({ err: e.message }, 'gateway: breakers and cool-downs are not shared with the other daemons (Redis did not answer)'),
      );
    }
    // The strategy context reads prices of the current catalog; deleted providers lose their state.
    svc.state.onChange(() => {
      svc.strategy.pricing = svc.state.catalog.pricing;
      svc.policy.prune();
    });
    for (const s of svc.state.catalog.shadowed) ctx.log.warn(`gateway: ${s} in the database is shadowed by gateway.yaml`);
    // Background flushes (unref'd timers): resilience state, cache entries, idempotency sweeps.
    svc.resilienceState.start();
    svc.cache.start();
    svc.idempotency.start();
    const alerts = new GatewayAlerts(svc, ctx.alerts);
    await new Promise((resolve) => setImmediate(resolve));
    const router = gatewayRouter(svc);
    // Scraped without credentials, as Prometheus expects: counts, names and key ids, no secrets.
    svc.prometheus.endpoint.route(router).tag('auth', 'public');
    // The dashboard: its pages are public shells (no data in them); everything it shows comes from
    // the management API, with the auth_token cookie of POST /api/auth/login, so require-login and
    // management auth apply exactly as for any other client. /login is the same page.
    mountConsole(router, { name: 'gateway', base: '/dashboard', title: 'ctl gateway', paths: ['/dashboard/*', '/login'], onRoute: (r) => r.tag('auth', 'public').tag('console', true) });
    const byHandler = versionPaths(router);
    const bridge = new WsBridge(() => svc);
    const schedule = backupSchedule(ctx.config ?? {});
    let ipFilter = compileIpFilter(svc.runtime.general.value.ipFilter);
    svc.runtime.general.onChange((s) => (ipFilter = compileIpFilter(s.ipFilter)));
    const refused = (c: { viaSocket: boolean; clientIp: string }) => !c.viaSocket && ipFilter !== undefined && !ipFilter.allows(c.clientIp);
    const instance: ComponentInstance = {
      router,
      renderError(c, err) {
        ensureVersion(c, svc.version);
        renderGatewayError(c, err);
      },
      toHttpError: domainHttpError,
      before(c) {
        if (refused(c)) {
          ensureVersion(c, svc.version);
          renderGatewayError(c, new HttpError(403, `address ${c.clientIp} may not use this gateway (settings ipFilter)`, { code: 'ip_not_allowed' }));
          return false;
        }
        versionBefore(c, svc.version, byHandler);
      },
      onUpgrade(req, socket, head, c) {
        if (refused(c)) socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        else if (WS_PATHS.has(c.url.pathname)) bridge.upgrade(req, socket, head, c);
        else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      },
      handle: { ...buildHandle(svc), checkAlerts: () => alerts.check() },
      start() {
        alerts.start();
        svc.files.start();
        if (schedule) svc.backups.schedule(schedule.intervalMs, schedule.keep, (e) => ctx.log.error({ err: e }, 'gateway: scheduled backup failed'));
        void svc.batches.start().catch((e: unknown) => ctx.log.error({ err: e }, 'gateway: resuming batches failed'));
        svc.webhooks.start();
        svc.proxyProber.start();
        svc.a2a.tasks.failInterrupted(ctx.clock.now());
        svc.evals.store.failInterrupted(ctx.clock.now());
        svc.tunnels.resume();
        svc.oauth.start();
      },
      reload() {
        const file = svc.state.fileConfig;
        svc.state.reloadFile();
        try {
          applyFileSections(svc.runtime, svc.state.fileConfig);
        } catch (e) {
          // The catalog already changed; keep the previous runtime settings and say why.
          applyFileSections(svc.runtime, file);
          throw e;
        }
        svc.mcp.configChanged();
        ctx.log.info({ file: svc.state.filePath }, 'gateway: configuration reloaded');
      },
      async stop() {
        await svc.batches.stop();
        await svc.webhooks.stop();
        await svc.budgets.close();
        await svc.tokenLimits.close();
        await svc.rpm.close();
        // Shared configuration: what is still queued is committed before the store goes.
        await svc.state.db.settled().catch((e) => ctx.log.error({ err: (e as Error).message }, 'gateway: last configuration writes did not reach the shared database'));
        if (svc.state.db instanceof SharedConfigStore) await svc.state.db.close();
        await svc.mcp.closeAll();
        svc.backups.stop();
        svc.proxyProber.stop();
        await svc.tunnels.stopAll();
        svc.plugins.close();
        svc.oauth.stop();
        bridge.close();
        svc.skills.close();
        svc.files.stop();
        alerts.stop();
        svc.usage.stop();
        svc.resilienceState.stop();
        svc.cache.stop();
        svc.idempotency.stop();
      },
    };
    const batchCall = inProcess(instance, ctx.log, 'batch');
    svc.batches.attach((principal, url, body, requestId) => batchCall({ method: 'POST', url, body, principal, requestId }));
    svc.internal = inProcess(instance, ctx.log, 'internal');
    svc.mcp.call = svc.internal;
    return instance;
  },
};
