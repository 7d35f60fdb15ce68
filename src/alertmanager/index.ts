/**
 * The `alertmanager` component: Prometheus Alertmanager 0.25's HTTP API v2 on DIR/alertmanager.yml,
 * with silences and alerts kept in the component's SQLite database and its alert journal files.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { ComponentContext, ComponentDefinition, ComponentInstance } from '../http/component.js';
import { Router } from '../http/router.js';
import { ConfigError, loadConfig, type LoadedConfig } from './config/load.js';
import { Engine } from './engine.js';
import { MIGRATIONS, SqlitePersistence } from './persist.js';
import { registerApiRoutes } from './api/routes.js';
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

function readConfig(file: string): LoadedConfig {
  return loadConfig(readFileSync(file, 'utf8'), dirname(file));
}

export const alertmanagerComponent: ComponentDefinition = {
  name: 'alertmanager',
  defaultAddress: '127.0.0.1:9093',
  create(ctx: ComponentContext): ComponentInstance {
    let settings: AlertmanagerSettings;
    try {
      settings = settingsFrom(ctx);
    } catch (e) {
      ctx.log.error({ err: (e as Error).message }, 'ctl.yaml alertmanager section is invalid; using the defaults');
      settings = settingsFrom({ stateDir: ctx.stateDir, config: {} });
    }
    if (!existsSync(settings.configFile)) writeFileSync(settings.configFile, DEFAULT_CONFIG, { mode: 0o644 });
    // A broken file must not take the other five APIs down with it: serve the built-in default
    // (not written over the file), answer 503 on /-/ready, and pick the file up on reload.
    let config: LoadedConfig;
    let startupError: string | undefined;
    try {
      config = readConfig(settings.configFile);
    } catch (e) {
      startupError = e instanceof ConfigError ? e.message : (e as Error).message;
      ctx.log.error(
        { file: settings.configFile, err: startupError },
        'alertmanager configuration is invalid; serving the built-in default until it is fixed and reloaded',
      );
      config = loadConfig(DEFAULT_CONFIG);
    }
    const store = ctx.openStore(MIGRATIONS);
    const persistence = new SqlitePersistence(store);
    const engine = new Engine(config, persistence, ctx.clock, settings.retentionMs);
    const current = (fp: string) => engine.alerts.get(fp);
    /** Fold the alert journal into the snapshot a chunk per tick, so requests keep flowing. */
    let compacting = false;
    const maintain = () => {
      if (compacting || persistence.uncheckpointedSince === undefined) return;
      const now = performance.now();
      const age = now - persistence.uncheckpointedSince;
      if (age < COMPACT_AFTER_MS) return;
      if (now - persistence.lastWriteAt < COMPACT_QUIET_MS && age < COMPACT_LATEST_MS) return;
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
        engine.setConfig(readConfig(settings.configFile));
        startupError = undefined;
        ctx.log.info({ file: settings.configFile }, 'alertmanager configuration reloaded');
        return undefined;
      } catch (e) {
        const why = (e as Error).message;
        ctx.log.error({ file: settings.configFile, err: why }, 'loading alertmanager configuration failed');
        return why;
      }
    };

    const router = new Router({ ignoreTrailingSlash: true });
    router.use(negotiate);
    registerApiRoutes(router, {
      engine,
      reload,
      ready: () => startupError === undefined,
      versionInfo: { branch: VERSION_INFO_BASE.branch, buildDate: '', buildUser: VERSION_INFO_BASE.buildUser, goVersion: VERSION_INFO_BASE.goVersion, revision: ctx.version, version: VERSION_INFO_BASE.version },
    });

    const timers: NodeJS.Timeout[] = [];
    const every = (ms: number, what: string, fn: () => number) => {
      const t = setInterval(() => {
        try {
          const n = fn();
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
      handle: { engine },
      start() {
        // Collect at once what went stale while the daemon was down, then on the timers.
        engine.gcAlerts();
        engine.gcSilences();
        every(settings.alertsGcIntervalMs, 'alert', () => engine.gcAlerts());
        every(settings.maintenanceIntervalMs, 'silence', () => engine.gcSilences());
        every(MAINTAIN_TICK_MS, 'journal', () => (maintain(), 0));
      },
      async reload() {
        const err = await reload();
        if (err !== undefined) throw new Error(`alertmanager: ${err}`);
      },
      stop() {
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
