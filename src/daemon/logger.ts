import { writeSync } from 'node:fs';
import pino, { type Logger } from 'pino';

/**
 * Log lines go to stdout with a plain synchronous write. pino's default destination retries a write
 * to a closed pipe forever when it flushes at exit (seen: `ctl serve | head` never exiting after
 * SIGTERM); here a reader that went away (EPIPE) turns logging off instead, and a full pipe (EAGAIN)
 * is retried a bounded number of times before the line is dropped.
 */
export function stdoutDestination(fd = 1): { write(line: string): void } {
  let open = true;
  return {
    write(line: string) {
      if (!open) return;
      let buf = Buffer.from(line);
      for (let tries = 0; buf.length > 0 && tries < 1000; tries++) {
        try {
          buf = buf.subarray(writeSync(fd, buf));
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'EAGAIN' || code === 'EBUSY') continue;
          open = false; // EPIPE, EBADF, ...: nobody reads our log any more
          return;
        }
      }
    },
  };
}

export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid } }, stdoutDestination());
}
