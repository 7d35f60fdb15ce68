/**
 * Sends the same requests to the real Alertmanager 0.25 and to ctl's component and compares the
 * answers after normalising what legitimately differs: silence ids (mapped by name), timestamps
 * (equal within a tolerance), `versionInfo`/`uptime`, and ctl's extra `mutedBy` field.
 */
import { expect } from 'vitest';
import { systemClock } from '../../src/http/clock.js';
import { startHarness, type Harness } from './harness.js';
import { startRealAlertmanager, type RealAlertmanager } from './real-alertmanager.js';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

export class Pair {
  /** name → [theirs, ours] */
  readonly ids = new Map<string, [string, string]>();
  private constructor(
    readonly real: RealAlertmanager,
    readonly ours: Harness,
  ) {}

  static async start(config: string): Promise<Pair> {
    const real = await startRealAlertmanager(config);
    try {
      const ours = await startHarness({ config, clock: systemClock });
      return new Pair(real, ours);
    } catch (e) {
      await real.stop();
      throw e;
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.real.stop(), this.ours.close()]);
  }

  private subst(s: string, side: 0 | 1): string {
    return s.replace(/\$([a-zA-Z0-9_]+)/g, (m, name: string) => this.ids.get(name)?.[side] ?? m);
  }

  private async send(base: string, side: 0 | 1, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = this.subst(typeof body === 'string' ? body : JSON.stringify(body), side);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const r = await fetch(base + this.subst(path, side), init);
    const out: Answer = { status: r.status, headers: {}, text: await r.text() };
    r.headers.forEach((v, k) => (out.headers[k] = v));
    return out;
  }

  /** Send to both (real first, then ours, back to back). */
  async both(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<[Answer, Answer]> {
    const theirs = await this.send(this.real.url, 0, method, path, body, headers);
    const ours = await this.send(this.ours.url, 1, method, path, body, headers);
    return [theirs, ours];
  }

  /** Send to both and expect equivalent answers; returns them. */
  async same(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<[Answer, Answer]> {
    const [t, o] = await this.both(method, path, body, headers);
    const where = `${method} ${path} ${body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body)}`;
    expect(o.status, `status of ${where}\nreal: ${t.text}\nours: ${o.text}`).toBe(t.status);
    expect(o.headers['content-type'], `content-type of ${where}`).toBe(t.headers['content-type']);
    // Go lists allowed methods in map order: compare as sets.
    const allow = (a: Answer) => a.headers.allow?.split(',').map((x) => x.trim()).sort().join(',');
    expect(allow(o), `allow of ${where}`).toBe(allow(t));
    for (const h of ['access-control-allow-origin', 'access-control-allow-methods', 'location']) {
      expect(o.headers[h], `${h} of ${where}`).toBe(t.headers[h]);
    }
    let tj: unknown, oj: unknown;
    try {
      tj = JSON.parse(t.text);
      oj = JSON.parse(o.text);
    } catch {
      expect(this.toTheirs(o.text), `body of ${where}`).toBe(t.text);
      return [t, o];
    }
    compareJson(tj, this.toTheirsJson(oj), where, '$', 2500, this.knownIds());
    // Byte-level shape too: trailing newline, no extra spaces.
    expect(o.text.endsWith('\n'), `trailing newline of ${where}`).toBe(t.text.endsWith('\n'));
    return [t, o];
  }

  /** Remember the silence ids returned by a POST /silences pair under `name`. */
  name(name: string, [t, o]: [Answer, Answer]): void {
    this.ids.set(name, [JSON.parse(t.text).silenceID, JSON.parse(o.text).silenceID]);
  }

  private knownIds(): Set<string> {
    const s = new Set<string>();
    for (const [t, o] of this.ids.values()) s.add(t).add(o);
    return s;
  }

  private toTheirs(s: string): string {
    for (const [theirs, ours] of this.ids.values()) s = s.split(ours).join(theirs);
    return s;
  }

  private toTheirsJson(v: unknown): unknown {
    if (typeof v === 'string') return this.toTheirs(v);
    if (Array.isArray(v)) return v.map((x) => this.toTheirsJson(x));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) if (k !== 'mutedBy') out[k] = this.toTheirsJson(x);
      return out;
    }
    return v;
  }
}

export function compareJson(t: unknown, o: unknown, where: string, path: string, toleranceMs = 2500, known = new Set<string>()): void {
  // A silence id neither side has been told about yet (e.g. in the answer that creates it).
  if (typeof t === 'string' && typeof o === 'string' && UUID.test(t) && UUID.test(o) && !known.has(t) && !known.has(o)) return;
  const allowed = /^(method \w+ is not allowed, but \[)(.*)(\] are)$/;
  if (typeof t === 'string' && typeof o === 'string' && allowed.test(t)) {
    // Go builds this list from a map: the order varies between runs.
    const norm = (s: string) => s.replace(allowed, (_m, a, list: string, b) => a + list.split(',').sort().join(',') + b);
    expect(norm(o), `${where}: ${path}`).toBe(norm(t));
    return;
  }
  if (typeof t === 'string' && typeof o === 'string' && TS.test(t) && TS.test(o)) {
    const d = Math.abs(Date.parse(t) - Date.parse(o));
    expect(d <= toleranceMs, `${where}: ${path} times differ: real ${t} ours ${o}`).toBe(true);
    return;
  }
  if (Array.isArray(t)) {
    expect(Array.isArray(o), `${where}: ${path} should be an array`).toBe(true);
    const oa = o as unknown[];
    expect(oa.length, `${where}: ${path} length\nreal: ${JSON.stringify(t)}\nours: ${JSON.stringify(o)}`).toBe(t.length);
    t.forEach((x, i) => compareJson(x, oa[i], where, `${path}[${i}]`, toleranceMs, known));
    return;
  }
  if (t && typeof t === 'object') {
    expect(o && typeof o === 'object' && !Array.isArray(o), `${where}: ${path} should be an object`).toBe(true);
    const skip = new Set(['uptime', 'versionInfo']);
    const tk = Object.keys(t).filter((k) => !skip.has(k)).sort();
    const ok = Object.keys(o as object).filter((k) => !skip.has(k)).sort();
    expect(ok, `${where}: ${path} keys`).toEqual(tk);
    for (const k of ['silencedBy']) {
      // Sorted by id on each side; ids differ, so compare as sets.
      const tv = (t as Record<string, unknown>)[k];
      const ov = (o as Record<string, unknown>)[k];
      if (Array.isArray(tv) && Array.isArray(ov)) {
        (t as Record<string, unknown>)[k] = [...tv].sort();
        (o as Record<string, unknown>)[k] = [...ov].sort();
      }
    }
    for (const k of tk) compareJson((t as Record<string, unknown>)[k], (o as Record<string, unknown>)[k], where, `${path}.${k}`, toleranceMs, known);
    return;
  }
  expect(o, `${where}: ${path}`).toEqual(t);
}
