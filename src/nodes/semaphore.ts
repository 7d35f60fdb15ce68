/** A counting semaphore: at most `limit` tasks run at once (bounded concurrency for pollers). */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** `first`: go to the head of the queue (retries, so a failing node does not wait behind every other). */
  async run<T>(task: () => Promise<T>, first = false): Promise<T> {
    if (this.active >= this.limit) {
      await new Promise<void>((resolve) => (first ? this.waiting.unshift(resolve) : this.waiting.push(resolve)));
    }
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}
