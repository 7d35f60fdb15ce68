/**
 * Concurrency limits (`GET|POST /api/admin/concurrency`): at most `global` inference requests in
 * flight in the gateway, and at most `perProvider[id]` upstream calls in flight per provider (a
 * stream holds its slot until it ends). Over the limit a request waits in a FIFO queue for up to
 * `queueTimeoutMs`; then
 *  - global: 429 `concurrency_limit_exceeded` (the client sends more than the gateway takes), also
 *    at once when `maxQueue` requests already wait;
 *  - per provider: the attempt is skipped (a combo moves to its next target); with nothing left the
 *    request gets 503 `provider_concurrency_limit`.
 * 0 means unlimited; the unlimited case costs a counter increment.
 */
import { Type } from '@sinclair/typebox';
import { HttpError } from '../../http/errors.js';
import { GatewayError } from '../errors.js';
import { compile } from '../../http/schema.js';
import type { AbortLike } from '../abort.js';

export interface ConcurrencySettings {
  /** Inference requests in flight in the whole gateway (0 = unlimited). */
  global: number;
  /** Upstream calls in flight per provider id (absent or 0 = unlimited). */
  perProvider: Record<string, number>;
  queueTimeoutMs: number;
  maxQueue: number;
}

export const DEFAULT_CONCURRENCY: ConcurrencySettings = { global: 0, perProvider: {}, queueTimeoutMs: 30_000, maxQueue: 1000 };

const Limit = Type.Integer({ minimum: 0, maximum: 1_000_000 });
export const ConcurrencyPatchSchema = Type.Object(
  {
    global: Type.Optional(Limit),
    perProvider: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.Union([Limit, Type.Null()]))),
    queueTimeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    maxQueue: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  { additionalProperties: false },
);
export const validateConcurrencyPatch = compile(ConcurrencyPatchSchema);

export type Release = () => void;
const NOOP: Release = () => undefined;

interface Waiter {
  grant: () => void;
  settled: boolean;
}

/** A counting semaphore with a FIFO wait queue. */
export class Gate {
  active = 0;
  private queue: Waiter[] = [];
  private head = 0;

  constructor(public limit: number) {}

  get queued(): number {
    return this.queue.length - this.head;
  }

  tryAcquire(): boolean {
    if (this.limit > 0 && this.active >= this.limit) return false;
    this.active++;
    return true;
  }

  release(): void {
    this.active = Math.max(0, this.active - 1);
    this.drain();
  }

  /** Let waiters in while there is room (after a release or a raised limit). */
  drain(): void {
    while (this.head < this.queue.length && (this.limit <= 0 || this.active < this.limit)) {
      const w = this.queue[this.head++]!;
      if (w.settled) continue;
      this.active++;
      w.grant();
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Wait for a slot: true when granted, false on timeout or abort. */
  wait(timeoutMs: number, signal: AbortLike): Promise<boolean> {
    return new Promise((resolve) => {
      const w: Waiter = {
        settled: false,
        grant: () => {
          w.settled = true;
          cleanup();
          resolve(true);
        },
      };
      const give = () => {
        if (w.settled) return;
        w.settled = true;
        cleanup();
        resolve(false);
      };
      const timer = setTimeout(give, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', give);
      };
      signal.addEventListener('abort', give, { once: true });
      this.queue.push(w);
    });
  }
}

function once(gate: Gate): Release {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    gate.release();
  };
}

export class ConcurrencyLimiter {
  readonly global = new Gate(0);
  private readonly providers = new Map<string, Gate>();
  private settings: ConcurrencySettings = DEFAULT_CONCURRENCY;

  configure(s: ConcurrencySettings): void {
    this.settings = s;
    this.global.limit = s.global;
    this.global.drain();
    for (const [id, n] of Object.entries(s.perProvider)) {
      if (!(n > 0)) continue;
      const g = this.providers.get(id);
      if (g) {
        g.limit = n;
        g.drain();
      } else this.providers.set(id, new Gate(n));
    }
    for (const [id, g] of this.providers) {
      if (!(s.perProvider[id]! > 0)) {
        g.limit = 0; // unlimited now: let every waiter in; the gate goes once idle
        g.drain();
        if (g.active === 0) this.providers.delete(id);
      }
    }
  }

  /** A global slot at once, or undefined when the gateway is at its limit (then `acquireGlobal`). */
  tryGlobal(): Release | undefined {
    return this.global.tryAcquire() ? once(this.global) : undefined;
  }

  /** A slot for one inference request; throws 429 when the queue is full or the wait times out. */
  async acquireGlobal(signal: AbortLike): Promise<Release> {
    const g = this.global;
    if (g.tryAcquire()) return once(g);
    const s = this.settings;
    if (g.queued >= s.maxQueue) {
      throw new GatewayError('limited', `the gateway is at its concurrency limit (${g.limit} requests in flight) and ${g.queued} requests are already queued; retry later`, {
        code: 'concurrency_limit_exceeded',
        retryAfterS: 1,
      });
    }
    const t0 = Date.now();
    if (await g.wait(s.queueTimeoutMs, signal)) return once(g);
    if (signal.aborted) throw new HttpError(499, 'client closed the request while it waited for a concurrency slot', { code: 'client_closed_request' });
    throw new GatewayError(
      'limited',
      `the gateway is at its concurrency limit (${g.limit} requests in flight); waited ${Date.now() - t0} ms in the queue without getting a slot`,
      { code: 'concurrency_limit_exceeded', retryAfterS: 1 },
    );
  }

  /** Whether the provider has a limit (no limit: no slot to take). */
  limited(provider: string): boolean {
    return this.providers.size > 0 && this.providers.has(provider);
  }

  /** A slot on a limited provider at once, or undefined when it is full. */
  tryProvider(provider: string): Release | undefined {
    const g = this.providers.get(provider);
    if (!g) return NOOP;
    return g.tryAcquire() ? once(g) : undefined;
  }

  /** Wait for a slot on a provider; undefined on timeout or abort (the attempt is skipped). */
  async waitProvider(provider: string, signal: AbortLike): Promise<Release | undefined> {
    const g = this.providers.get(provider);
    if (!g) return NOOP;
    if (g.tryAcquire()) return once(g);
    if (g.queued >= this.settings.maxQueue) return undefined;
    return (await g.wait(this.settings.queueTimeoutMs, signal)) ? once(g) : undefined;
  }

  providerLimit(provider: string): number {
    return this.providers.get(provider)?.limit ?? 0;
  }

  status(): { global: { limit: number; inFlight: number; queued: number }; perProvider: Record<string, { limit: number; inFlight: number; queued: number }> } {
    const perProvider: Record<string, { limit: number; inFlight: number; queued: number }> = {};
    for (const [id, g] of this.providers) perProvider[id] = { limit: g.limit, inFlight: g.active, queued: g.queued };
    return { global: { limit: this.global.limit, inFlight: this.global.active, queued: this.global.queued }, perProvider };
  }
}
