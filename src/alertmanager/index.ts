/**
 * The `alertmanager` component: Prometheus Alertmanager 0.25's HTTP API v2 on DIR/alertmanager.yml,
 * with silences and alerts kept in the component's SQLite database and its alert journal files, or,
 * with ctl.yaml `storage.postgres`, in the database the daemons of a cluster share (shared/).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { hostname } from 'node:os';
import type { ComponentContext, ComponentDefinition, ComponentInstance } from '../http/component.js';
import { Router } from '../http/router.js';
import { mountConsole } from '../http/console.js';
import { ConfigError, loadConfig, type LoadedConfig } from './config/load.js';
import { DEFAULT_ALERT_LIMITS, Engine, type AlertLimits } from './engine.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { NotificationLog, type NotificationLedger } from './dispatch/nflog.js';
import { SHARED_MIGRATIONS } from './shared/migrations.js';
import { SharedSilences } from './shared/silences.js';
import { SharedNotificationLog } from './shared/nflog.js';
import { SharedAlerts } from './shared/alerts.js';
import { AlertmanagerMetrics, countReceived } from './metrics.js';
import type { PostableAlert } from './api/bodies.js';
import { loadTemplateFiles } from './template/load.js';
import type { Templates } from '../gotemplate/index.js';
import { MIGRATIONS, SqlitePersistence } from './persist.js';
import { registerApiRoutes, type ClusterMembership } from './api/routes.js';
import { EngineEvents, registerEventRoutes } from './api/events.js';
import { beforeAm, negotiate, renderAmError } from './api/http.js';
import { parseModelDuration } from './timefmt.js';

export const DEFAULT_CONFIG = `# Alertmanager configuration for ctl (Prometheus Alertmanager 0.25 format).
# Reload with SIGHUP or POST /-/reload.
global:
  resolve_timeout: 5m
route:
  receiver: default
  group_by: ['alertname']
receivers:
  - name: default
`;

export interface AlertmanagerSettings {
  configFile: string;
  /** Expired silences are kept this long after their end (Alertmanager --data.retention). */
  retentionMs: number;
  /** Silence GC period (--data.maintenance-interval). */
  maintenanceIntervalMs: number;
  /** Resolved-alert GC period (--alerts.gc-interval). */
  alertsGcIntervalMs: number;
  /** Memory bounds against hostile input (engine.ts AlertLimits; Alertmanager has none). */
  limits: AlertLimits;
  /** Journal bytes past which it is folded into the snapshot at once (bounds the replay at start). */
  maxJournalBytes: number;
  /** --web.external-url: the `externalURL` of notifications; unset: from the host name and listener. */
  externalUrl?: string;
}

/** `external-url` (Alertmanager's --web.external-url). */
function externalUrlSetting(config: Record<string, unknown>): string | undefined {
  const v = config['external-url'];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || !/^https?:\/\/[^/]/.test(v)) throw new Error('alertmanager.external-url: expected an http(s) URL');
  return v.replace(/\/+$/, '');
}

/** 0.25's default: http://<hostname>:<port it listens on> (the TCP listener's, else 9093). */
function defaultExternalUrl(ctx: ComponentContext): string {
  const daemon = ctx.handleOf<{ info(): { servers: Record<string, { bound_address: string }> } }>('daemon');
  const bound = daemon?.info().servers.alertmanager?.bound_address ?? '';
  const port = /:(\d+)$/.exec(bound)?.[1] ?? '9093';
  return `http://${hostname()}:${port}`;
}

function bytesSetting(config: Record<string, unknown>, key: string, fallback: number, min: number): number {
  const v = config[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new Error(`alertmanager.${key}: expected a whole number of bytes, at least ${min}`);
  return v;
}

function durationSetting(config: Record<string, unknown>, key: string, fallback: string): number {
  const v = config[key];
  if (v === undefined || v === null) return parseModelDuration(fallback);
  if (typeof v !== 'string') throw new Error(`alertmanager.${key}: expected a duration such as ${fallback}`);
  try {
    return parseModelDuration(v);
  } catch (e) {
    throw new Error(`alertmanager.${key}: ${(e as Error).message}`);
  }
}

export function settingsFrom(ctx: Pick<ComponentContext, 'stateDir' | 'config'>): AlertmanagerSettings {
  const c = ctx.config ?? {};
  const file = typeof c['config-file'] === 'string' ? (c['config-file'] as string) : 'alertmanager.yml';
  return {
    configFile: isAbsolute(file) ? file : join(ctx.stateDir, file),
    retentionMs: durationSetting(c, 'data-retention', '120h'),
    maintenanceIntervalMs: durationSetting(c, 'maintenance-interval', '15m'),
    alertsGcIntervalMs: durationSetting(c, 'alerts-gc-interval', '30m'),
    limits: {
      maxAlertBytes: bytesSetting(c, 'max-alert-bytes', DEFAULT_ALERT_LIMITS.maxAlertBytes, 1024),
      maxBatchBytes: bytesSetting(c, 'max-batch-bytes', DEFAULT_ALERT_LIMITS.maxBatchBytes, 64 << 10),
      maxStoredBytes: bytesSetting(c, 'max-stored-bytes', DEFAULT_ALERT_LIMITS.maxStoredBytes, 1 << 20),
    },
    maxJournalBytes: bytesSetting(c, 'max-journal-bytes', 64 << 20, 64 << 10),
    externalUrl: externalUrlSetting(c),
  };
}

/**
 * Journal folding and WAL checkpoints (`maintain` below): due once the oldest write they cover
 * is COMPACT_AFTER_MS old, started only when no write came for COMPACT_QUIET_MS (not in the
 * middle of a burst of POSTs: the checkpoint blocks for tens of ms), but at the latest
 * COMPACT_LATEST_MS after that write under a load that never pauses.
 */
const COMPACT_AFTER_MS = 10_000;
const COMPACT_QUIET_MS = 1_000;
const COMPACT_LATEST_MS = 60_000;
const MAINTAIN_TICK_MS = 1_000;

export const VERSION_INFO_BASE = { version: '0.25.0', branch: 'ctl', buildUser: 'ctl', goVersion: `node${process.versions.node}` };

/** alertmanager.yml and the template files it names (a template that does not parse fails the load, as in 0.25). */
function readConfig(file: string): { config: LoadedConfig; templates: Templates } {
  const config = loadConfig(readFileSync(file, 'utf8'), dirname(file));
  try {
    return { config, templates: loadTemplateFiles((config.tree.templates ?? []) as string[]) };
  } catch (e) {
    // 0.25's words, on start-up and on reload alike.
    throw new Error(`failed to parse templates: ${(e as Error).message}`);
  }
}

/** The cluster's silences, alerts and notification log in the shared database (migrated once by whoever starts first). */
async function openShared(
  ctx: ComponentContext,
  retentionMs: number,
): Promise<{ silences: SharedSilences; alerts: SharedAlerts; nflog: SharedNotificationLog }> {
  const db = ctx.shared!.postgres!;
  await db.migrate('alertmanager', SHARED_MIGRATIONS);
  const silences = await SharedSilences.open(db, ctx.log);
  const alerts = await SharedAlerts.open(db, ctx.shared!.daemonId, ctx.clock, ctx.log);
  return { silences, alerts, nflog: new SharedNotificationLog(db, ctx.shared!.daemonId, retentionMs, ctx.log) };
}

/** ctl.yaml `alertmanager:` (read by settingsFrom). */
const CONFIG_KEYS = {
  'config-file': true,
  'data-retention': true,
  'maintenance-interval': true,
  'alerts-gc-interval': true,
  'external-url': true,
  'max-alert-bytes': true,
  'max-batch-bytes': true,
  'max-stored-bytes': true,
  'max-journal-bytes': true,
} as const;

export const alertmanagerComponent: ComponentDefinition = {
  name: 'alertmanager',
  defaultAddress: '127.0.0.1:9093',
  configKeys: CONFIG_KEYS,
  async create(ctx: ComponentContext): Promise<ComponentInstance> {
    // A bad ctl.yaml section keeps the alert manager down with the reason, as a bad alertmanager.yml does.
    const settings = settingsFrom(ctx);
    if (!existsSync(settings.configFile)) writeFileSync(settings.configFile, DEFAULT_CONFIG, { mode: 0o600 });
    // A broken file keeps the alert manager down (the daemon answers 503 with this reason and keeps
    // the other APIs up), as Alertmanager itself refuses to start; SIGHUP tries again.
    let config: LoadedConfig;
    let templates: Templates;
    try {
      ({ config, templates } = readConfig(settings.configFile));
    } catch (e) {
      throw new Error(`${settings.configFile}: ${(e as Error).message}`);
    }
    const store = ctx.openStore(MIGRATIONS);
    const persistence = new SqlitePersistence(store);
    // With ctl.yaml storage.postgres, silences, alerts and the notification log are the cluster's (shared/).
    const shared = ctx.shared?.postgres ? await openShared(ctx, settings.retentionMs) : undefined;
    const engine = new Engine(config, shared ? shared.alerts.persistence(persistence) : persistence, ctx.clock, settings.retentionMs, settings.limits, shared?.silences, (e) =>
      ctx.log.error({ err: (e as Error).message }, 'alertmanager: deleting expired shared silences failed'),
    );
    await shared?.silences.follow(engine.silences);
    const nflog: NotificationLedger = shared?.nflog ?? new NotificationLog(store, settings.retentionMs);
    // Created below; the sources read the dispatcher once it exists.
    let dispatcherRef: Dispatcher | undefined;
    const metrics = new AlertmanagerMetrics({
      alertsByState: () => engine.alertCounts(),
      silencesByState: () => engine.silenceCounts(),
      aggregationGroups: () => dispatcherRef?.groupCount ?? 0,
      nflogEntries: () => nflog.size,
    });
    const dispatcher = new Dispatcher({
      clock: ctx.clock,
      log: ctx.log,
      egress: ctx.egress,
      nflog,
      externalURL: () => settings.externalUrl ?? defaultExternalUrl(ctx),
      alert: (fp) => engine.alerts.get(fp),
      alerts: () => engine.alerts.list(),
      muted: (a, now) => engine.muted(a, now),
      resolvedElsewhere: (fps, at) => {
        const changed = engine.resolveFromCluster(fps, at);
        if (changed.length > 0) ctx.log.info({ alerts: changed.length }, 'alertmanager: alerts the cluster notified as resolved are resolved here too');
      },
      metrics,
    });
    dispatcherRef = dispatcher;
    engine.onStored = (alerts) => dispatcher.ingest(alerts);
    const current = (fp: string) => engine.alerts.get(fp);
    /** Fold the alert journal into the snapshot a chunk per tick, so requests keep flowing. */
    let compacting = false;
    const maintain = () => {
      if (compacting || persistence.uncheckpointedSince === undefined) return;
      const now = performance.now();
      const age = now - persistence.uncheckpointedSince;
      // A journal past its bound is folded at once, busy or not: the next start replays it whole.
      const oversized = persistence.journalBytes > settings.maxJournalBytes;
      if (!oversized && age < COMPACT_AFTER_MS) return;
      if (!oversized && now - persistence.lastWriteAt < COMPACT_QUIET_MS && age < COMPACT_LATEST_MS) return;
      if (persistence.pendingJournal === 0) return persistence.checkpoint();
      compacting = true;
      const step = () => {
        try {
          if (persistence.compactStep(current)) return void setImmediate(step);
        } catch (e) {
          ctx.log.error({ err: e }, 'alertmanager journal compaction failed');
        }
        compacting = false;
      };
      setImmediate(step);
    };

    /** Reload the file; keep the old configuration when the new one is bad. */
    const reload = async (): Promise<string | undefined> => {
      try {
        const next = readConfig(settings.configFile);
        engine.setConfig(next.config);
        templates = next.templates;
        // As 0.25: a reload starts the dispatcher again (groups rebuilt; the log keeps what was sent).
        dispatcher.start(next.config, next.templates);
        metrics.lastReloadOk = true;
        metrics.lastReloadAt = Date.now() / 1000;
        ctx.log.info({ file: settings.configFile }, 'alertmanager configuration reloaded');
        return undefined;
      } catch (e) {
        const why = (e as Error).message;
        metrics.lastReloadOk = false;
        ctx.log.error({ file: settings.configFile, err: why }, 'loading alertmanager configuration failed');
        return why;
      }
    };

    const router = new Router({ ignoreTrailingSlash: true });
    router.use(negotiate);
    registerApiRoutes(router, {
      engine,
      reload,
      metrics,
      postAlerts:
        shared &&
        (async (alerts) => {
          shared.alerts.mark();
          const errors = engine.postAlerts(alerts);
          await shared.alerts.written();
          return errors;
        }),
      membership: () => ctx.handleOf<ClusterMembership>('membership'),
      versionInfo: { branch: VERSION_INFO_BASE.branch, buildDate: '', buildUser: VERSION_INFO_BASE.buildUser, goVersion: VERSION_INFO_BASE.goVersion, revision: ctx.version, version: VERSION_INFO_BASE.version },
    });
    // The web console at / (Alertmanager's hash routes: #/alerts, #/silences, #/status).
    mountConsole(router, { name: 'alertmanager', title: 'Alertmanager' });
    // Its live updates (ctl's own stream, outside the Alertmanager API).
    const events = new EngineEvents(engine);
    registerEventRoutes(router, events);

    const timers: NodeJS.Timeout[] = [];
    const every = (ms: number, what: string, fn: () => number | Promise<number>) => {
      const t = setInterval(async () => {
        try {
          const n = await fn();
          if (n > 0) ctx.log.debug({ removed: n }, `alertmanager ${what} garbage collection`);
        } catch (e) {
          ctx.log.error({ err: e }, `alertmanager ${what} garbage collection failed`);
        }
      }, ms);
      t.unref();
      timers.push(t);
    };

    return {
      router,
      renderError: renderAmError,
      before: beforeAm,
      handle: {
        engine,
        /** Other components' alerts (ctl's internal alerts), on the path of POST /api/v2/alerts. */
        post(alerts: PostableAlert[]): string[] {
          const errors = engine.postAlerts(alerts);
          countReceived(metrics, alerts, errors.length, ctx.clock.now());
          return errors;
        },
      },
      start() {
        // Collect at once what went stale while the daemon was down, then on the timers.
        engine.gcAlerts();
        engine.gcSilences();
        Promise.resolve(nflog.gc(ctx.clock.now())).catch((e) => ctx.log.error({ err: (e as Error).message }, 'alertmanager notification log garbage collection failed'));
        every(settings.alertsGcIntervalMs, 'alert', () => engine.gcAlerts());
        every(settings.maintenanceIntervalMs, 'silence', () => engine.gcSilences());
        every(MAINTAIN_TICK_MS, 'journal', () => (maintain(), 0));
        every(settings.maintenanceIntervalMs, 'notification log', () => nflog.gc(ctx.clock.now()));
        dispatcher.start(engine.config, templates);
        // From now on changes other daemons make reach the store and the dispatcher.
        shared?.alerts.follow(engine);
      },
      async reload() {
        const err = await reload();
        if (err !== undefined) throw new Error(`alertmanager: ${err}`);
      },
      stop() {
        events.close();
        dispatcher.stop();
        nflog.commit();
        shared?.silences.close();
        shared?.alerts.close();
        for (const t of timers) clearInterval(t);
        try {
          persistence.compact(current);
        } catch (e) {
          ctx.log.error({ err: e }, 'alertmanager journal compaction failed');
        }
        persistence.close();
      },
    };
  },
};
