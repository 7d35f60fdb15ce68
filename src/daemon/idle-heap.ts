/**
 * Memory back to the system while the daemon is idle.
 *
 * V8 keeps its young generation at the size the last burst of requests grew it to (up to the cap of
 * young-generation.ts) and shrinks it only when it optimises for memory. With `--optimize-for-size`
 * on, the next collection of its memory reducer shrinks the space to its start size: measured on the
 * alert bench at the old 16 MiB cap, 16 MiB → 1 MiB within seconds of the load ending, 94 → 73 MiB resident. The flag also trades speed for
 * size in the rest of V8, so it is on only while no request has arrived for `idleMs`, and switched off
 * by the next request (one counter increment per request while busy). The space grows back to the cap
 * within the first few collections of the next burst.
 *
 * CTL_DAEMON_IDLE_TRIM_MS sets the quiet time (default 1000; 0 = never). V8 acts on the flag at its
 * memory reducer's next check (it runs every 8 s once a full collection armed it), so the space
 * shrinks up to ~8 s after the quiet time; an explicit collection does not shrink it (measured).
 */
import { setFlagsFromString } from 'node:v8';
import { wholeNumberFromEnv } from './env-number.js';

export const IDLE_TRIM_ENV = 'CTL_DAEMON_IDLE_TRIM_MS';
export const DEFAULT_IDLE_TRIM_MS = 1000;

/** The quiet time in ms the environment asks for; a bad value is an error (the daemon does not start). */
export function idleTrimMs(env: NodeJS.ProcessEnv): number {
  return wholeNumberFromEnv(env, IDLE_TRIM_ENV, DEFAULT_IDLE_TRIM_MS, 'milliseconds (0 = never)');
}

export class IdleHeapTrim {
  private requests = 0;
  private seen = 0;
  private quietSince: number;
  private trimming = false;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly idleMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.quietSince = now();
    if (idleMs > 0) {
      this.timer = setInterval(() => this.tick(), Math.max(50, Math.min(1000, idleMs / 4)));
      this.timer.unref();
    }
  }

  /** A request arrived: leave the memory-saving mode at once. */
  readonly activity = (): void => {
    this.requests++;
    if (this.trimming) this.set(false);
  };

  /** Whether V8 is optimising for size now. */
  get active(): boolean {
    return this.trimming;
  }

  /** The periodic check (public for tests). */
  tick(): void {
    const t = this.now();
    if (this.requests !== this.seen) {
      this.seen = this.requests;
      this.quietSince = t;
    } else if (!this.trimming && t - this.quietSince >= this.idleMs) this.set(true);
  }

  private set(on: boolean): void {
    this.trimming = on;
    setFlagsFromString(on ? '--optimize-for-size' : '--no-optimize-for-size');
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.trimming) this.set(false);
  }
}

