/**
 * Proxy health: a probe sends one GET through the proxy to a target (a provider the proxy serves, or
 * the URL asked for); any HTTP answer means the proxy carried the request. Without a target the probe
 * only opens a TCP connection to the proxy. Every probe is recorded (GET …/proxies/health?hours=);
 * the prober runs every `intervalMs` over the enabled proxies and keeps 7 days of history.
 */
import type { Logger } from 'pino';
import type { Egress } from '../../egress/index.js';
import type { Catalog } from '../catalog.js';
import type { ProxyRecord, ProxyRegistry } from './registry.js';

export interface ProbeResult {
  ok: boolean;
  latencyMs: number;
  target: string | null;
  status?: number;
  error?: string;
}

const KEEP_MS = 7 * 86_400_000;

/** One probe through `p` (recorded unless `record` is false, as for a proxy not yet saved). */
export async function probeProxy(registry: ProxyRegistry, egress: Egress, p: ProxyRecord, target: string | undefined, now: () => number, timeoutMs = 10_000, record = true): Promise<ProbeResult> {
  const started = now();
  let result: ProbeResult;
  try {
    if (target !== undefined) {
      const abort = new AbortController();
      // The deadline holds whatever the dispatcher does: a proxy that accepts the connection and
      // never answers its CONNECT left the request (and the caller) waiting past any timeout.
      const status = await deadline(
        (async () => {
          const res = await egress.request(target, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: abort.signal }, registry.dispatcherOf(p));
          await res.body.dump();
          return res.statusCode;
        })(),
        timeoutMs,
        abort,
      );
      result = { ok: true, latencyMs: now() - started, target, status };
    } else {
      const abort = new AbortController();
      const s = await deadline(egress.connect(p.host, p.port), timeoutMs, abort);
      s.destroy();
      result = { ok: true, latencyMs: now() - started, target: null };
    }
  } catch (err) {
    const e = err as Error & { code?: string };
    result = { ok: false, latencyMs: now() - started, target: target ?? null, error: `${e.code ? `${e.code} ` : ''}${e.message}` };
  }
  if (record) registry.recordProbe(p.id, result.ok, result.latencyMs, result.target, result.error ?? null);
  return result;
}

/** `work`, or a rejection after `ms` (aborting `abort`): a probe always ends within its timeout. */
function deadline<T>(work: Promise<T>, ms: number, abort: AbortController): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'ETIMEDOUT' }));
    }, ms);
    timer.unref();
  });
  work.catch(() => undefined); // a late failure after the deadline is not an unhandled rejection
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export class ProxyProber {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly registry: ProxyRegistry,
    private readonly egress: Egress,
    /** The URL a proxy is probed against (a provider it serves), or undefined for a TCP check. */
    private readonly targetFor: (p: ProxyRecord) => string | undefined,
    private readonly now: () => number,
    private readonly log: Logger,
    private readonly intervalMs = 300_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.round(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Probe every enabled proxy once (rounds never overlap). */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const p of this.registry.list()) {
        if (!p.enabled) continue;
        const r = await probeProxy(this.registry, this.egress, p, this.targetFor(p), this.now);
        if (!r.ok) this.log.warn({ proxy: p.id, target: r.target, error: r.error }, 'outbound proxy probe failed');
      }
      this.registry.pruneProbes(this.now() - KEEP_MS);
    } finally {
      this.running = false;
    }
  }
}

/** The base URL of the first provider (what a proxy test reaches when no target is given). */
export function firstProviderUrl(catalog: Catalog): string | undefined {
  for (const p of catalog.providers.values()) if (p.conn.baseUrl) return p.conn.baseUrl;
  return undefined;
}

/** What a proxy is probed against: a provider it serves (its first assignment's), or undefined for a TCP check. */
export function proxyProbeTarget(registry: ProxyRegistry, catalog: Catalog, p: ProxyRecord): string | undefined {
  for (const a of registry.assignments({ proxyId: p.id })) {
    if (a.scope === 'global') return firstProviderUrl(catalog);
    for (const rt of catalog.providers.values()) {
      if ((a.scope === 'provider' && rt.config.id === a.scopeId) || (a.scope === 'connection' && rt.config.accounts.some((x) => x.id === a.scopeId))) return rt.conn.baseUrl;
    }
  }
  return undefined;
}
