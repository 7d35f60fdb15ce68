import type { Logger } from 'pino';

/**
 * Logs a recurring failure once, then at most once per `everyMs` with the number of repeats, and
 * once more when it clears: an outage of the store must not flood the log with one line per request.
 */
export class ThrottledLog {
  private failing = false;
  private lastAt = 0;
  private repeats = 0;

  constructor(
    private readonly log: Logger,
    private readonly what: string,
    private readonly everyMs = 10_000,
  ) {}

  failure(err: unknown, extra: Record<string, unknown> = {}): void {
    const now = Date.now();
    if (this.failing && now - this.lastAt < this.everyMs) {
      this.repeats++;
      return;
    }
    this.log.error({ err, repeats: this.repeats, ...extra }, `${this.what} failed`);
    this.failing = true;
    this.lastAt = now;
    this.repeats = 0;
  }

  success(): void {
    if (!this.failing) return;
    this.failing = false;
    this.log.info({ repeats: this.repeats }, `${this.what} works again`);
    this.repeats = 0;
  }
}
