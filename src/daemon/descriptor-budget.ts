import { readdirSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

/**
 * File descriptors for TCP clients, shared by every TCP listener of the daemon. Once descriptors run
 * out, accept() fails on every listener alike (libuv then resets whatever connects), the control
 * socket and the databases included: a few addresses holding idle connections took every API down
 * until their header timeouts ran out. So TCP clients may use the descriptor limit less a reserve
 * (RESERVE_FRACTION of it, at least RESERVE_MIN) kept for the control socket, databases, logs and
 * outbound connections. A connection that would cross into the reserve first sheds the connections
 * that are idle (no request in flight: kept alive, or not sent anything yet), oldest first; only
 * when every client connection is busy is the new one refused.
 */
export const RESERVE_FRACTION = 1 / 8;
export const RESERVE_MIN = 64;
/** How long a count of the process's other descriptors is trusted before it is taken again. */
const RECOUNT_MS = 1000;
const WARN_EVERY_MS = 10_000;

interface Client {
  /** Requests in flight on the connection; -1 once upgraded (a WebSocket is never idle). */
  busy: number;
}

export class DescriptorBudget {
  /** TCP client connections, oldest first. */
  private readonly clients = new Map<Socket, Client>();
  /** Descriptors that are not TCP clients (listeners, databases, logs, outbound), as last counted. */
  private others = 0;
  private countedAt = -Infinity;
  /** Connections shed and refused so far (for the log and the tests). */
  shed = 0;
  refused = 0;
  private warnedAt = -Infinity;

  /**
   * `limit`: the soft RLIMIT_NOFILE (Infinity: no budget). `countOpen`: descriptors open in the
   * process now.
   */
  constructor(
    readonly limit: number,
    private readonly countOpen: () => number = countOpenDescriptors,
    private readonly now: () => number = () => performance.now(),
    /** Told (at most every WARN_EVERY_MS) when connections were shed or refused. */
    private readonly warn: (fields: Record<string, number>, message: string) => void = () => undefined,
  ) {}

  /** Descriptors never given to TCP clients. */
  get reserve(): number {
    return Number.isFinite(this.limit) ? Math.max(RESERVE_MIN, Math.ceil(this.limit * RESERVE_FRACTION)) : 0;
  }

  /**
   * A new TCP connection (already accepted, so already holding its descriptor). True when it may
   * stay; false when it must be refused (every other client connection is busy).
   */
  admit(socket: Socket): boolean {
    if (!Number.isFinite(this.limit)) return true;
    // Descriptors in use (this connection's included) past what clients may have.
    const over = this.inUse() + this.reserve - this.limit;
    if (over > 0) {
      const enough = this.shedIdle(over) >= over;
      if (!enough) this.refused++;
      this.tell();
      if (!enough) return false;
    }
    this.clients.set(socket, { busy: 0 });
    socket.once('close', () => this.clients.delete(socket));
    return true;
  }

  /** A request started on `socket` (the raw TCP socket). */
  requestStarted(socket: Socket): void {
    const c = this.clients.get(socket);
    if (c && c.busy >= 0) c.busy++;
  }

  /** A request on `socket` was answered (or its connection closed). */
  requestEnded(socket: Socket): void {
    const c = this.clients.get(socket);
    if (c && c.busy > 0) c.busy--;
  }

  /** `socket` was upgraded (WebSocket): it is never shed as idle. */
  upgraded(socket: Socket): void {
    const c = this.clients.get(socket);
    if (c) c.busy = -1;
  }

  private tell(): void {
    const t = this.now();
    if (t - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = t;
    this.warn(
      { limit: this.limit, reserve: this.reserve, clients: this.clients.size, shed: this.shed, refused: this.refused },
      'open files near the limit (LimitNOFILE): shedding idle TCP connections, refusing new ones when none is idle',
    );
  }

  private inUse(): number {
    const t = this.now();
    if (t - this.countedAt >= RECOUNT_MS) {
      // The new connection's descriptor is in the count but not yet in `clients`: one of ours.
      this.others = Math.max(0, this.countOpen() - this.clients.size - 1);
      this.countedAt = t;
    }
    return this.others + this.clients.size + 1;
  }

  /** Close up to `n` idle client connections, oldest first; how many were closed. */
  private shedIdle(n: number): number {
    let closed = 0;
    for (const [socket, c] of this.clients) {
      if (closed >= n) break;
      if (c.busy !== 0) continue;
      this.clients.delete(socket);
      socket.destroy();
      closed++;
    }
    this.shed += closed;
    return closed;
  }
}

/** The soft limit on open files of this process (Linux), else Infinity. */
export function descriptorLimit(): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m && m[1] !== 'unlimited') return Number(m[1]);
  } catch {
    /* not Linux: no budget */
  }
  return Infinity;
}

/** Descriptors open in this process now (the listing's own descriptor left out). */
export function countOpenDescriptors(): number {
  try {
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return 0;
  }
}
