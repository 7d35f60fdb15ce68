import type { Reply } from './envelope.js';
import { toJson } from './envelope.js';

/** One WebSocket session as the hub sees it. */
export interface Peer {
  accountId: number | undefined;
  send(text: string): void;
}

/**
 * Who is connected: sessions per account (for fan-out of an account's changes) and connection
 * counts per client IP (for the per-IP limit, code 1002).
 */
export class Hub {
  private readonly byAccount = new Map<number, Set<Peer>>();
  private readonly perIp = new Map<string, number>();

  /** Count a new connection from `ip`; false when the limit is reached (the caller refuses it). */
  acquire(ip: string, limit: number): boolean {
    const n = this.perIp.get(ip) ?? 0;
    if (n >= limit) return false;
    this.perIp.set(ip, n + 1);
    return true;
  }

  release(ip: string): void {
    const n = (this.perIp.get(ip) ?? 1) - 1;
    if (n <= 0) this.perIp.delete(ip);
    else this.perIp.set(ip, n);
  }

  connections(ip: string): number {
    return this.perIp.get(ip) ?? 0;
  }

  bind(peer: Peer, accountId: number): void {
    this.unbind(peer);
    peer.accountId = accountId;
    let set = this.byAccount.get(accountId);
    if (!set) this.byAccount.set(accountId, (set = new Set()));
    set.add(peer);
  }

  unbind(peer: Peer): void {
    if (peer.accountId === undefined) return;
    const set = this.byAccount.get(peer.accountId);
    set?.delete(peer);
    if (set && set.size === 0) this.byAccount.delete(peer.accountId);
    peer.accountId = undefined;
  }

  /** Send a reply to every session of the account, except `skip` (the one that asked). */
  broadcast(accountId: number, r: Reply, skip?: Peer): void {
    const set = this.byAccount.get(accountId);
    if (!set || set.size === 0) return;
    const text = toJson(r);
    for (const p of set) if (p !== skip) p.send(text);
  }

  accounts(): number[] {
    return [...this.byAccount.keys()];
  }

  sessions(accountId: number): number {
    return this.byAccount.get(accountId)?.size ?? 0;
  }
}
