/**
 * Outbound webhooks: an event becomes one delivery per subscribed webhook, written to the database
 * first (a restart or kill -9 loses no pending delivery), then sent in the background, signed per
 * Standard Webhooks, to the webhook's URL under ctl's SSRF policy for user URLs (public addresses, or
 * what ctl.yaml `egress.allow` names; no redirects followed). A 2xx delivers it; anything else is
 * retried with growing delays (base, 2x, 4x, ... at most an hour apart) until `maxAttempts`, then the
 * delivery is failed. Every attempt is recorded.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Egress } from '../../egress/index.js';
import { fetchUserUrl, UrlRefusedError } from '../../egress/user-url.js';
import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import type { WebhookEmitter, WebhookEvent } from './events.js';
import { signatureHeaders } from './signature.js';
import { sqliteSql } from '../sql.js';
import { SqlDeliveryQueue, WebhookStore, type DeliveryQueue, type DeliveryRecord, type WebhookRecord } from './store.js';

export interface WebhookSettings {
  /** Delay before the second attempt; each later one doubles it (at most an hour). */
  retryBaseMs: number;
  maxAttempts: number;
  timeoutMs: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = { retryBaseMs: 5000, maxAttempts: 8, timeoutMs: 10_000 };
const MAX_DELAY_MS = 3_600_000;
const TICK_MS = 200;
const MAX_IN_FLIGHT = 32;

export interface SendOutcome {
  delivered: boolean;
  status?: number;
  error?: string;
  durationMs: number;
}

export class WebhookService implements WebhookEmitter {
  private hooks: WebhookRecord[] = [];
  private readonly sending = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(
    /** The subscriptions (shared-store.ts with shared storage). */
    readonly store: WebhookStore,
    /** Deliveries and attempts (store.ts, in the daemon's file or, with shared storage, the shared database). */
    readonly queue: DeliveryQueue,
    private readonly egress: Egress,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly settings: WebhookSettings = DEFAULT_WEBHOOK_SETTINGS,
    /** This daemon among those sharing the queue. */
    private readonly daemonId = 'local',
  ) {
    this.refresh();
  }

  /** On the daemon's own SQLite file. */
  static local(db: Store, egress: Egress, clock: Clock, log: Logger, settings?: WebhookSettings): WebhookService {
    return new WebhookService(new WebhookStore(db), new SqlDeliveryQueue(sqliteSql(db)), egress, clock, log, settings);
  }

  /** Delete a webhook and what is still queued for it. */
  async remove(id: string): Promise<void> {
    this.store.delete(id);
    this.refresh();
    await this.store.settled();
    await this.queue.dropPending(id);
  }

  /** Re-read the webhooks after a change (emit reads this copy, not the database). */
  refresh(): void {
    this.hooks = this.store.list();
    this.subscribed = this.hooks.some((h) => h.enabled);
    this.wanted.clear();
  }

  /** Whether any webhook is enabled (callers skip building an event's data otherwise). */
  subscribed = false;
  /** Whether an enabled webhook takes each event asked about, until the next refresh. */
  private readonly wanted = new Map<string, boolean>();

  /**
   * Whether an enabled webhook takes `event` (callers skip building its data otherwise): webhooks
   * that listen only to other events cost a request nothing.
   */
  wants(event: WebhookEvent): boolean {
    let w = this.wanted.get(event);
    if (w === undefined) this.wanted.set(event, (w = this.hooks.some((h) => h.enabled && (h.events.includes('*') || h.events.includes(event)))));
    return w;
  }

  emit(event: WebhookEvent, data: Record<string, unknown>): void {
    const subscribed = this.hooks.filter((h) => h.enabled && (h.events.includes('*') || h.events.includes(event)));
    if (subscribed.length === 0) return;
    const now = this.clock.now();
    const payload = JSON.stringify({ type: event, timestamp: new Date(now).toISOString(), data });
    const list: DeliveryRecord[] = subscribed.map((h) => ({ id: `msg_${randomBytes(12).toString('hex')}`, webhookId: h.id, event, payload, status: 'pending', attempts: 0, nextAttemptAt: now, createdAt: now }));
    // The SQLite queue has written them when this returns; the shared one a round trip later.
    const queued = (async () => this.queue.enqueue(list))();
    queued.catch((e: unknown) => this.log.warn({ err: e, event }, 'gateway: could not queue a webhook delivery'));
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.sending.values()]);
  }

  /** Sends what is due (the deliveries of webhooks deleted meanwhile are dropped). */
  async tick(): Promise<void> {
    if (this.sending.size >= MAX_IN_FLIGHT || this.ticking) return;
    this.ticking = true;
    let due: DeliveryRecord[];
    try {
      due = await this.queue.due(this.clock.now(), MAX_IN_FLIGHT - this.sending.size, this.daemonId);
    } catch {
      return; // the database is closing or away: the next tick tries again
    } finally {
      this.ticking = false;
    }
    for (const d of due) {
      if (this.sending.has(d.id) || this.sending.size >= MAX_IN_FLIGHT) continue;
      const hook = this.hooks.find((h) => h.id === d.webhookId);
      if (!hook) continue;
      const p = this.attempt(hook, d).finally(() => this.sending.delete(d.id));
      this.sending.set(d.id, p);
    }
  }

  private async attempt(hook: WebhookRecord, d: DeliveryRecord): Promise<void> {
    const n = d.attempts + 1;
    const out = await this.send(hook, d.id, d.payload);
    const now = this.clock.now();
    const failedForGood = !out.delivered && n >= this.settings.maxAttempts;
    const next = out.delivered
      ? { status: 'delivered' as const, deliveredAt: now }
      : failedForGood
        ? { status: 'failed' as const }
        : { status: 'pending' as const, nextAttemptAt: now + Math.min(MAX_DELAY_MS, this.settings.retryBaseMs * 2 ** (n - 1)) };
    try {
      await this.queue.recordAttempt(d, { attempt: n, at: now, ...(out.status !== undefined ? { status: out.status } : {}), ...(out.error ? { error: out.error } : {}), durationMs: Math.round(out.durationMs) }, next);
    } catch (e) {
      this.log.warn({ err: e, delivery: d.id }, 'gateway: could not record a webhook attempt');
    }
    if (failedForGood) this.log.warn({ webhook: hook.id, delivery: d.id, event: d.event }, `gateway: webhook delivery failed after ${n} attempts`);
  }

  /** One signed POST of `payload` to the webhook. */
  async send(hook: WebhookRecord, id: string, payload: string): Promise<SendOutcome> {
    const started = performance.now();
    const headers = { 'content-type': 'application/json', 'user-agent': 'ctl-webhooks/1', ...signatureHeaders(hook.secret, id, Math.floor(this.clock.now() / 1000), payload) };
    try {
      const res = await fetchUserUrl(this.egress, hook.url, { method: 'POST', body: payload, headers, allowHttp: true, maxRedirects: 0, timeoutMs: this.settings.timeoutMs, signal: AbortSignal.timeout(this.settings.timeoutMs) });
      await res.body.dump().catch(() => undefined);
      const ok = res.status >= 200 && res.status < 300;
      return { delivered: ok, status: res.status, ...(ok ? {} : { error: `HTTP ${res.status}` }), durationMs: performance.now() - started };
    } catch (e) {
      const error = e instanceof UrlRefusedError ? e.message : `not delivered: ${(e as Error).message}`;
      return { delivered: false, error, durationMs: performance.now() - started };
    }
  }

  /** A test payload sent now (not queued): what the receiver answered. */
  test(hook: WebhookRecord): Promise<SendOutcome> {
    const id = `msg_${randomBytes(12).toString('hex')}`;
    return this.send(hook, id, JSON.stringify({ type: 'webhook.test', timestamp: new Date(this.clock.now()).toISOString(), data: { webhookId: hook.id, message: 'a test delivery from ctl' } }));
  }
}
