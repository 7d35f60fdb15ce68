import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';

/**
 * Runs jobs every N seconds, aligned to multiples of N since the epoch on the component's clock
 * (a 120 s poll runs on even minutes, as the origin's). A job still running when its next turn
 * comes is not started twice. Timers are unref'd so they never keep the process alive. With
 * `lease` (several daemons on one database) a turn runs only when this daemon holds the job's
 * lease; the others skip it, and one of them takes the lease over when its holder is gone.
 */
export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /**
   * `onLost` runs when a turn finds the lease with another daemon after this one ran the job (what
   * the job reported as its own, such as alerts, is left to the new holder).
   */
  every(
    name: string,
    seconds: number,
    job: () => Promise<unknown>,
    opts: { runAtStart?: boolean; lease?: (name: string) => Promise<boolean>; onLost?: () => void } = {},
  ): void {
    const ms = seconds * 1000;
    let busy = false;
    let held = false;
    const lease = opts.lease;
    const turn = (mine: boolean) => {
      const lost = held && !mine;
      held = mine;
      if (lost) opts.onLost?.();
      return mine && !this.stopped ? job() : undefined;
    };
    const fire = () => {
      if (this.stopped || busy) return;
      busy = true;
      (lease ? lease(name).then(turn) : job())
        .catch((e: unknown) => this.log.error({ err: e, job: name }, 'scheduled job failed'))
        .finally(() => {
          busy = false;
        });
    };
    const schedule = () => {
      if (this.stopped) return;
      const now = this.clock.now();
      const delay = Math.max(10, ms - (now % ms));
      const t = setTimeout(() => {
        this.timers.delete(t);
        fire();
        schedule();
      }, delay);
      t.unref();
      this.timers.add(t);
    };
    if (opts.runAtStart) setImmediate(fire);
    schedule();
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
