/**
 * Failed basic-auth checks per client address (web-config listeners). An address that failed
 * FAILURE_LIMIT times within FAILURE_WINDOW_MS is refused (429) without a check until its oldest
 * failure leaves the window. Checks still running count as failures until they end, so a burst of
 * concurrent guesses cannot all get through before the first one fails. IPv6 clients are counted
 * per /64 (one host usually holds a whole /64).
 */
import { isIP } from 'node:net';
import { normalizeIp } from '../http/client-ip.js';

export const FAILURE_LIMIT = 10;
export const FAILURE_WINDOW_MS = 60_000;
/** Addresses remembered; past this the least recently failing ones are forgotten. */
const ADDRESS_LIMIT = 10_000;

interface Entry {
  /** Times of the failures within the window, oldest first. */
  failures: number[];
  running: number;
}

export class AuthFailures {
  private readonly byAddress = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Reserve a check for `address`: undefined when it may run (call `done` with its outcome), else
   * the seconds until the address may try again.
   */
  reserve(address: string): { retryAfterSeconds: number } | undefined {
    const key = addressKey(address);
    const e = this.entry(key);
    if (e.failures.length + e.running < FAILURE_LIMIT) {
      e.running++;
      return undefined;
    }
    // Only running checks fill the budget: the earliest a slot frees is unknown, a second is honest.
    const oldest = e.failures[0];
    const wait = oldest === undefined ? 1000 : oldest + FAILURE_WINDOW_MS - this.now();
    return { retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) };
  }

  /** The outcome of a reserved check. */
  done(address: string, ok: boolean): void {
    const key = addressKey(address);
    const e = this.byAddress.get(key);
    if (!e) return;
    e.running = Math.max(0, e.running - 1);
    if (!ok) {
      e.failures.push(this.now());
      // Most recently failing last, so eviction drops the quietest address.
      this.byAddress.delete(key);
      this.byAddress.set(key, e);
    }
    if (e.failures.length === 0 && e.running === 0) this.byAddress.delete(key);
  }

  private entry(key: string): Entry {
    let e = this.byAddress.get(key);
    if (e) {
      const cutoff = this.now() - FAILURE_WINDOW_MS;
      while (e.failures.length > 0 && e.failures[0]! <= cutoff) e.failures.shift();
      return e;
    }
    if (this.byAddress.size >= ADDRESS_LIMIT) this.byAddress.delete(this.byAddress.keys().next().value!);
    e = { failures: [], running: 0 };
    this.byAddress.set(key, e);
    return e;
  }
}

/** The unit an address is counted in: the IPv4 address, or the IPv6 /64. */
export function addressKey(address: string): string {
  const ip = normalizeIp(address);
  if (isIP(ip) !== 6) return ip;
  const groups = expandIpv6(ip);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

function expandIpv6(ip: string): string[] {
  const [head, tail] = ip.split('%')[0]!.split('::') as [string, string | undefined];
  const a = head ? head.split(':') : [];
  const b = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - a.length - b.length).fill('0');
  return [...a, ...fill, ...b].map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
}
