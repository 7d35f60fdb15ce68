/** Injectable time source: everything time-dependent reads this so tests never sleep. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private t = Date.parse('2030-01-01T00:00:00Z')) {}
  now(): number {
    return this.t;
  }
  set(ms: number): void {
    this.t = ms;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
