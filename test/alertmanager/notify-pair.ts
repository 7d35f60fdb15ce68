/**
 * The real Alertmanager 0.25 and ctl's alert manager (in-process, on the system clock) with the
 * same alertmanager.yml, their webhooks pointed at one loopback sink (`/real/...` and `/ctl/...`),
 * for timing and routing sequences: post the same alerts and silences to both at the same moments,
 * then compare what each one's receivers were sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { systemClock } from '../../src/http/clock.js';
import { startHarness, type Harness } from './harness.js';
import { startRealAlertmanager, type RealAlertmanager } from './real-alertmanager.js';

export interface Delivery {
  /** The sink path after the side's prefix: which receiver the URL named. */
  path: string;
  body: string;
  at: number;
}

type Got = Record<'real' | 'ctl', Delivery[]>;

export class NotifyPair {
  /** Silence ids per name: [real, ctl]. */
  private silences = new Map<string, [string, string]>();

  private constructor(
    private readonly sink: Server,
    readonly real: RealAlertmanager,
    readonly ours: Harness,
    /** What the sink received from each side, in arrival order. */
    readonly got: Got,
  ) {}

  /**
   * `config(base)` is the alertmanager.yml with every webhook URL under `base`; `answer(path)` is how
   * the sink answers a receiver's path (default 200 at once).
   */
  static async start(config: (base: string) => string, answer: (path: string) => { status: number; delayMs: number } = () => ({ status: 200, delayMs: 0 })): Promise<NotifyPair> {
    const got: Got = { real: [], ctl: [] };
    const sink = createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        const m = /^\/(real|ctl)(\/.*)?$/.exec(req.url ?? '');
        if (m) got[m[1] as 'real' | 'ctl'].push({ path: m[2] ?? '/', body: b, at: Date.now() });
        const a = answer(m?.[2] ?? '/');
        setTimeout(() => {
          res.statusCode = a.status;
          res.end();
        }, a.delayMs).unref();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    let real: RealAlertmanager | undefined;
    try {
      real = await startRealAlertmanager(config(`${base}/real`));
      const ours = await startHarness({ config: config(`${base}/ctl`), clock: systemClock });
      return new NotifyPair(sink, real, ours, got);
    } catch (e) {
      await real?.stop();
      sink.close();
      throw e;
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.real.stop(), this.ours.close()]);
    this.sink.closeAllConnections();
    await new Promise((r) => this.sink.close(r));
  }

  private async both(path: string, method: string, body: (side: 0 | 1) => unknown): Promise<[Response, Response]> {
    const out: Response[] = [];
    for (const [side, base] of [this.real.url, this.ours.url].entries()) {
      const r = await fetch(base + path.replace(/\$(\w+)/, (_m, n: string) => this.silences.get(n)?.[side] ?? n), {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'DELETE' ? undefined : JSON.stringify(body(side as 0 | 1)),
      });
      expect(r.status, `${method} ${path} on ${side === 0 ? 'real' : 'ctl'}`).toBe(200);
      out.push(r);
    }
    return out as [Response, Response];
  }

  /** GET `path` on both: [real, ctl] as parsed JSON. */
  async get(path: string): Promise<[unknown, unknown]> {
    const [t, o] = await Promise.all([fetch(this.real.url + path), fetch(this.ours.url + path)]);
    return [await t.json(), await o.json()];
  }

  async post(alerts: unknown[]): Promise<void> {
    await this.both('/api/v2/alerts', 'POST', () => alerts);
  }

  /** A silence on both, remembered under `name`. */
  async silence(name: string, matchers: { name: string; value: string; isRegex: boolean }[], endsAt: number): Promise<void> {
    const body = { matchers, startsAt: iso(Date.now() - 1000), endsAt: iso(endsAt), createdBy: 't', comment: name };
    const [t, o] = await this.both('/api/v2/silences', 'POST', () => body);
    this.silences.set(name, [((await t.json()) as { silenceID: string }).silenceID, ((await o.json()) as { silenceID: string }).silenceID]);
  }

  async expire(name: string): Promise<void> {
    await this.both(`/api/v2/silence/$${name}`, 'DELETE', () => undefined);
  }

  /** What each receiver got per group, in order, times normalised (see normalise). */
  byReceiverAndGroup(side: 'real' | 'ctl'): Record<string, unknown[]> {
    const out: Record<string, unknown[]> = {};
    for (const d of this.got[side]) {
      const o = normalise(d.body) as { groupKey: string };
      (out[`${d.path} ${o.groupKey}`] ??= []).push(o);
    }
    return Object.fromEntries(Object.entries(out).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  }

  /** Both sides sent the same notifications to the same receivers for the same groups. */
  expectSame(): void {
    const real = this.byReceiverAndGroup('real');
    const ctl = this.byReceiverAndGroup('ctl');
    expect(ctl).toEqual(real);
  }
}

export const iso = (ms: number) => new Date(ms).toISOString();
export const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A webhook body with what each server draws from its clock (times, its own URL) replaced. */
export function normalise(body: string): unknown {
  const o = JSON.parse(body) as { alerts: Record<string, unknown>[]; externalURL: string };
  for (const a of o.alerts) {
    a.startsAt = a.startsAt === '0001-01-01T00:00:00Z' ? 'zero' : 'time';
    a.endsAt = a.endsAt === '0001-01-01T00:00:00Z' ? 'zero' : 'time';
  }
  o.externalURL = 'external';
  return o;
}
