/**
 * GET /ctl/events: ctl's own event stream for the web console's live views (not part of
 * Alertmanager's API). One `changed` event whenever what GET /api/v2/alerts, /alerts/groups or
 * /silences answer may have changed: an alert posted or collected, a silence set, expired or
 * started or ended, an alert resolved by time, a configuration reloaded. The data is a counter;
 * the page fetches what it shows again. At most one event per MIN_GAP_MS.
 */
import type { RequestContext } from '../../http/context.js';
import type { Router } from '../../http/router.js';
import { openSse, type SseStream } from '../../http/sse.js';
import type { Engine } from '../engine.js';

const TICK_MS = 1000;
const MIN_GAP_MS = 2000;

export class EngineEvents {
  private readonly streams = new Set<SseStream>();
  private timer: NodeJS.Timeout | undefined;
  private last = '';
  private lastSent = 0;
  private seq = 0;

  constructor(private readonly engine: Engine) {}

  /** What the answers depend on, cheaply: versions, and how many alerts have ended by now. */
  private signature(): string {
    const e = this.engine;
    const now = e.clock.now();
    let ended = 0;
    for (const a of e.alerts.list()) if (a.endsAt <= now) ended++;
    const index = e.silences.index(now);
    return `${e.alerts.version}/${e.silences.version}/${indexId(e.config)}/${ended}/${indexId(index)}`;
  }

  private tick(): void {
    if (this.streams.size === 0) return;
    const sig = this.signature();
    if (sig === this.last) return;
    const now = Date.now();
    if (now - this.lastSent < MIN_GAP_MS) return;
    this.last = sig;
    this.lastSent = now;
    this.seq++;
    for (const s of this.streams) s.send('changed', { seq: this.seq });
  }

  open(ctx: RequestContext): void {
    const stream = openSse(ctx, { onClose: () => this.drop(stream) });
    this.streams.add(stream);
    if (this.last === '') this.last = this.signature();
    stream.send('hello', { seq: this.seq });
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), TICK_MS);
      this.timer.unref();
    }
  }

  private drop(stream: SseStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.last = '';
    }
  }

  close(): void {
    for (const s of [...this.streams]) s.close();
  }
}

/** The silence index is rebuilt when a silence starts or ends, the configuration on a reload: identity tells. */
const ids = new WeakMap<object, number>();
let nextId = 0;
function indexId(o: object): number {
  let id = ids.get(o);
  if (id === undefined) ids.set(o, (id = ++nextId));
  return id;
}

export function registerEventRoutes(router: Router, events: EngineEvents): void {
  router.get('/ctl/events', (ctx) => events.open(ctx));
}
