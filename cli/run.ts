import { ApiError, UnreachableError } from './client.js';

/** A usage mistake the parser could not catch (bad flag value): exit 2. */
export class UsageError extends Error {}

/** `notReady` and `degraded` are `ctl status`'s: the daemon answered, but is not (all) up. */
export const EXIT = { ok: 0, api: 1, usage: 2, unreachable: 3, notReady: 4, degraded: 5 } as const;

/** Map any failure to the exit codes in DESIGN.md, printing one clear line. */
export function fail(err: unknown): never {
  if (err instanceof UnreachableError) {
    process.stderr.write(`ctl: ${err.message}\n`);
    process.exit(EXIT.unreachable);
  }
  if (err instanceof UsageError) {
    process.stderr.write(`ctl: ${err.message}\n`);
    process.exit(EXIT.usage);
  }
  if (err instanceof ApiError) {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(EXIT.api);
  }
  process.stderr.write(`ctl: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(EXIT.api);
}

/** Wrap a commander action so errors exit with the right code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (e) {
      fail(e);
    }
  };
}

/** Collect a repeatable option into an array. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Parse an integer option or fail with a usage error. */
export function intOption(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n)) throw new UsageError(`${name} must be an integer, got ${JSON.stringify(value)}`);
    return n;
  };
}

/** Parse a number option (e.g. a temperature) or fail with a usage error. */
export function numberOption(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${name} must be a number, got ${JSON.stringify(value)}`);
    return n;
  };
}
