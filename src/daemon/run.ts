import { createRateLimiter } from '../ratelimit/index.js';
import { Daemon } from './daemon.js';
import { defaultStateDir } from './state-dir.js';
import { applyDaemonV8Settings } from './v8-settings.js';
import { collectAfterStartup } from './startup-gc.js';
import { exitOnCrash } from './crash.js';

export interface RunOptions {
  stateDir?: string;
  configPath?: string;
  logLevel?: string;
  initFailureDomain?: number;
  preInitListenAddress?: string;
}

/** `ctl serve`: run in the foreground until SIGTERM/SIGINT; SIGHUP reloads file configuration. */
export async function runDaemon(opts: RunOptions): Promise<void> {
  const stateDir = opts.stateDir ?? defaultStateDir();
  let onRequest: () => void;
  try {
    onRequest = applyDaemonV8Settings(process.env);
  } catch (e) {
    process.stderr.write(`ctl serve: ${(e as Error).message}\n`);
    process.exit(1);
  }
  let daemon: Daemon;
  try {
    daemon = new Daemon({ ...opts, stateDir, createRateLimiter, onRequest });
  } catch (e) {
    process.stderr.write(`ctl serve: cannot use state dir ${stateDir}: ${(e as Error).message}\n`);
    process.exit(1);
  }
  exitOnCrash(daemon.log);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    daemon.log.info({ signal }, 'signal received');
    daemon.stop().then(
      () => process.exit(0),
      (e) => {
        daemon.log.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => void daemon.reload());
  try {
    await daemon.start();
  } catch (e) {
    daemon.log.fatal({ err: (e as Error).message }, `ctl serve: start-up failed: ${(e as Error).message}`);
    process.stderr.write(`ctl serve: start-up failed: ${(e as Error).message}\n`);
    await daemon.stop().catch(() => undefined);
    process.exit(1);
  }
  collectAfterStartup();
}
