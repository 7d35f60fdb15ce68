/**
 * Provider breakers, connection cool-downs and session pins shared by the gateways of a cluster
 * (ctl.yaml storage.redis): a provider that fails on one daemon is held back on all of them, an
 * account told to come back in an hour is not tried by the others meanwhile, and a session's next
 * turn sent to another gateway goes to the same account (its prompt cache). Each daemon keeps deciding from
 * its own memory; what changes there is published once a second (with the persistence flush) to a
 * Redis hash (read at start-up) and a channel (applied by the others as it comes). The latest change
 * wins: eventually consistent within about a second.
 */
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { SharedRedis } from '../../store/redis.js';
import type { BreakerRecord } from './breaker.js';
import type { CooldownRecord } from './cooldown.js';
import type { PinChange } from './affinity.js';

const HASH = 'ctl:gw:resilience';
const CHANNEL = 'ctl:gw:resilience';

export interface ResilienceChanges {
  breakers: { upsert: BreakerRecord[]; remove: string[] };
  cooldowns: { upsert: CooldownRecord[]; remove: string[] };
  /** Session pins made or dropped (sent on the channel only: they are short-lived). */
  pins?: PinChange[];
}

interface Message extends ResilienceChanges {
  from: string;
}

export class SharedResilience {
  private subscriber?: Redis;

  constructor(
    private readonly redis: SharedRedis,
    private readonly daemonId: string,
    private readonly log: Logger,
  ) {}

  /** Every record published so far (start-up). */
  async load(): Promise<ResilienceChanges> {
    const all = await this.redis.run((c) => c.hgetall(HASH));
    const out: ResilienceChanges = { breakers: { upsert: [], remove: [] }, cooldowns: { upsert: [], remove: [] } };
    for (const [field, value] of Object.entries(all)) {
      try {
        if (field.startsWith('b:')) out.breakers.upsert.push(JSON.parse(value) as BreakerRecord);
        else if (field.startsWith('c:')) out.cooldowns.upsert.push(JSON.parse(value) as CooldownRecord);
      } catch {
        /* a corrupt value is skipped */
      }
    }
    return out;
  }

  /** What changed here since the last flush: stored, and told to the other daemons. */
  async publish(ch: ResilienceChanges): Promise<void> {
    const n = ch.breakers.upsert.length + ch.breakers.remove.length + ch.cooldowns.upsert.length + ch.cooldowns.remove.length + (ch.pins?.length ?? 0);
    if (n === 0) return;
    const set: string[] = [];
    for (const r of ch.breakers.upsert) set.push(`b:${r.provider}`, JSON.stringify(r));
    for (const r of ch.cooldowns.upsert) set.push(`c:${r.provider}#${r.accountId}`, JSON.stringify(r));
    const del = [...ch.breakers.remove.map((p) => `b:${p}`), ...ch.cooldowns.remove.map((k) => `c:${k}`)];
    const message = JSON.stringify({ from: this.daemonId, ...ch } satisfies Message);
    await this.redis.run(async (c) => {
      const m = c.multi();
      if (set.length > 0) m.hset(HASH, ...set);
      if (del.length > 0) m.hdel(HASH, ...del);
      m.publish(CHANNEL, message);
      await m.exec();
    });
  }

  /** Apply the other daemons' changes as they are published. */
  async follow(apply: (ch: ResilienceChanges) => void): Promise<void> {
    // Its own connection (a subscribed one can do nothing else); it re-subscribes after reconnects.
    const sub = this.redis.client.duplicate({ lazyConnect: true, enableOfflineQueue: true });
    this.subscriber = sub;
    sub.on('error', () => {
      /* the main connection logs outages; this one reconnects by itself */
    });
    sub.on('message', (_channel: string, text: string) => {
      try {
        const m = JSON.parse(text) as Message;
        if (m.from !== this.daemonId) apply(m);
      } catch (e) {
        this.log.warn({ err: (e as Error).message }, 'gateway: an unreadable resilience message from another daemon was skipped');
      }
    });
    await sub.connect();
    await sub.subscribe(CHANNEL);
  }

  close(): void {
    this.subscriber?.disconnect();
  }
}
