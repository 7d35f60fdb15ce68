import type { Logger } from 'pino';

/** Exit status after a crash (EX_SOFTWARE): systemd's Restart=on-failure restarts on it. */
export const CRASH_EXIT_CODE = 70;

/** `Error: message at file:line:col`: the cause and where it was thrown, in one line. */
export function crashLine(kind: string, err: unknown): string {
  if (!(err instanceof Error)) return `ctl serve: fatal ${kind}: ${String(err)}`;
  const frame = err.stack?.split('\n').find((l) => /^\s+at /.test(l))?.trim();
  const what = `${err.name}: ${err.message}`.replace(/\s*\n\s*/g, ' ');
  return `ctl serve: fatal ${kind}: ${what}${frame ? ` (${frame})` : ''}`;
}

/**
 * Whatever escapes every handler ends the process (its state may be broken), but first the cause is
 * logged in one line, on the log and on stderr, so the operator sees why the unit restarted.
 */
export function exitOnCrash(log: Logger): void {
  const die = (kind: string) => (err: unknown) => {
    const line = crashLine(kind, err);
    try {
      log.fatal({ err }, line);
    } finally {
      process.stderr.write(`${line}\n`);
      process.exit(CRASH_EXIT_CODE);
    }
  };
  process.on('uncaughtException', die('uncaught exception'));
  process.on('unhandledRejection', die('unhandled rejection'));
}
