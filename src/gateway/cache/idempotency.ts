/**
 * Idempotency (seed: `Idempotency-Key`, else `X-Request-Id`; 5 s window). Keys are scoped per API key.
 * Unlike OmniRoute, a key is claimed as soon as the first request starts: a concurrent duplicate
 * waits for that request instead of going upstream again, then replays its answer (as JSON or as a
 * stream, whichever it asked for) with `X-Gateway-Idempotent: true`. Successful answers are kept for
 * `windowMs` after they finish. When the first request fails, one waiting duplicate takes over.
 * The same key with a different request body within the window is refused (409), so a reused
 * request id never returns somebody else's answer.
 */
import type { Logger } from 'pino';
import type { StoredAnswer } from './answer.js';
import type { SharedIdempotency } from './redis-idempotency.js';
import { GatewayError } from '../errors.js';

export const IDEMPOTENCY_WINDOW_MS = 5000;

interface Entry {
  fingerprint: string;
  /** Set once the answer is in; until then the key is in flight. */
  answer?: StoredAnswer;
  expiresAt: number;
  /** Resolves when the in-flight request settles (either way). */
  settled: Promise<void>;
  settle: () => void;
}

export type Claim =
  | { kind: 'leader'; complete(answer: StoredAnswer | undefined): void }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'wait'; settled: Promise<void> }
  | { kind: 'conflict' };

const KEY_HEADERS = ['idempotency-key', 'x-request-id'] as const;

/** The raw idempotency key of a request, if it sent one. */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of KEY_HEADERS) {
    const v = headers[name];
    if (typeof v === 'string' && v.trim() !== '') return v.trim().slice(0, 256);
  }
  return undefined;
}

export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  /** With storage.redis: keys are claimed across daemons too (`claimAcross`). */
  private acrossDaemons?: { shared: SharedIdempotency; log: Logger };

  constructor(
    private readonly now: () => number,
    readonly windowMs = IDEMPOTENCY_WINDOW_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), 30_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  useShared(shared: SharedIdempotency, log: Logger): void {
    this.acrossDaemons = { shared, log };
  }

  get shared(): boolean {
    return this.acrossDaemons !== undefined;
  }

  /**
   * `claim`, then (shared storage) the same claim in Redis, so a duplicate sent to another daemon
   * waits for or replays this answer. Duplicates on this daemon wait here without asking Redis.
   * 503 when Redis cannot be asked: the client asked not to be served twice, and that cannot be
   * promised now.
   */
  async claimAcross(key: string, fingerprint: string): Promise<Claim> {
    const local = this.claim(key, fingerprint);
    const across = this.acrossDaemons;
    if (local.kind !== 'leader' || !across) return local;
    let remote;
    try {
      remote = await across.shared.claim(key, fingerprint);
    } catch (e) {
      local.complete(undefined);
      throw new GatewayError('unavailable', `idempotency keys cannot be checked: ${(e as Error).message}`, { code: 'storage_unavailable', cause: e });
    }
    switch (remote.kind) {
      case 'leader':
        return {
          kind: 'leader',
          complete: (answer) => {
            local.complete(answer);
            remote.complete(answer).catch((e: Error) => across.log.warn({ err: e.message }, 'gateway: recording an idempotent answer in Redis failed'));
          },
        };
      case 'replay':
        local.complete(remote.answer);
        return remote;
      case 'wait':
      case 'conflict':
        local.complete(undefined);
        return remote;
    }
  }

  /** Claim `key` for a request whose body hashes to `fingerprint`. */
  claim(key: string, fingerprint: string): Claim {
    const now = this.now();
    const e = this.entries.get(key);
    if (e !== undefined && (e.answer === undefined || e.expiresAt > now)) {
      if (e.fingerprint !== fingerprint) return { kind: 'conflict' };
      if (e.answer !== undefined) return { kind: 'replay', answer: e.answer };
      return { kind: 'wait', settled: e.settled };
    }
    if (this.entries.size > 10_000) this.sweep();
    let settle!: () => void;
    const settled = new Promise<void>((r) => (settle = r));
    const entry: Entry = { fingerprint, expiresAt: Number.POSITIVE_INFINITY, settled, settle };
    this.entries.set(key, entry);
    let done = false;
    return {
      kind: 'leader',
      complete: (answer) => {
        if (done) return;
        done = true;
        if (answer !== undefined && this.entries.get(key) === entry) {
          entry.answer = answer;
          entry.expiresAt = this.now() + this.windowMs;
        } else if (this.entries.get(key) === entry) {
          this.entries.delete(key); // failed: a waiting duplicate takes over
        }
        entry.settle();
      },
    };
  }

  /** Keys in flight or within their window. */
  activeKeys(): number {
    const now = this.now();
    let n = 0;
    for (const e of this.entries.values()) if (e.answer === undefined || e.expiresAt > now) n++;
    return n;
  }

  sweep(): void {
    const now = this.now();
    for (const [k, e] of this.entries) if (e.answer !== undefined && e.expiresAt <= now) this.entries.delete(k);
  }

  clear(): void {
    for (const [k, e] of this.entries) if (e.answer !== undefined) this.entries.delete(k);
  }
}
