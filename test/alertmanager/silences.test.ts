import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { MemoryPersistence } from '../../src/alertmanager/persist.js';
import { SilenceNotFound, SilenceStore, apiSilenceState, silenceState, validateMatchers } from '../../src/alertmanager/silences.js';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const H = 3_600_000;
const m = (name: string, value: string, isRegex = false, isEqual = true) => ({ name, value, isRegex, isEqual });

let clock: ManualClock;
let persist: MemoryPersistence;
let store: SilenceStore;
beforeEach(() => {
  clock = new ManualClock(T0);
  persist = new MemoryPersistence();
  store = new SilenceStore(persist, clock);
});

const add = (over: Partial<Parameters<SilenceStore['set']>[0]> = {}) =>
  store.set({ matchers: [m('alertname', 'A')], startsAt: T0 - H, endsAt: T0 + H, createdBy: 'me', comment: 'c', ...over });

describe('silence state', () => {
  it('API state switches to expired at endsAt; silencing still counts endsAt as active', () => {
    const s = { id: 'x', matchers: [], startsAt: T0, endsAt: T0 + 10, updatedAt: T0, createdBy: '', comment: '' };
    expect(apiSilenceState(s, T0 - 1)).toBe('pending');
    expect(apiSilenceState(s, T0)).toBe('active');
    expect(apiSilenceState(s, T0 + 10)).toBe('expired');
    expect(silenceState(s, T0 + 10)).toBe('active');
    expect(silenceState(s, T0 + 11)).toBe('expired');
  });
});

describe('create', () => {
  it('clamps a past start to now and sets updatedAt', () => {
    const id = add();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const s = store.get(id)!;
    expect(s.startsAt).toBe(T0);
    expect(s.updatedAt).toBe(T0);
    expect(persist.silences.get(id)).toEqual(s);
  });
  it('keeps a future start', () => {
    const id = add({ startsAt: T0 + H, endsAt: T0 + 2 * H });
    expect(store.get(id)!.startsAt).toBe(T0 + H);
  });
});

describe('update rules', () => {
  it('active: same matchers and same start second → in place', () => {
    const id = add();
    clock.advance(5000);
    const again = add({ id, startsAt: T0 + 999, endsAt: T0 + 3 * H, comment: 'longer', createdBy: 'other' });
    expect(again).toBe(id);
    const s = store.get(id)!;
    expect(s).toMatchObject({ startsAt: T0 + 999, endsAt: T0 + 3 * H, comment: 'longer', createdBy: 'other', updatedAt: T0 + 5000 });
  });
  it('active: changed start → new id, old expired now', () => {
    const id = add();
    clock.advance(5000);
    const id2 = add({ id, startsAt: T0 + 2000 });
    expect(id2).not.toBe(id);
    expect(store.get(id)).toMatchObject({ endsAt: T0 + 5000, updatedAt: T0 + 5000 });
    expect(store.get(id2)!.startsAt).toBe(T0 + 5000);
  });
  it('active: end moved into the past → rejected, and the old silence stays active', () => {
    const id = add();
    clock.advance(10_000);
    expect(() => add({ id, startsAt: T0, endsAt: T0 + 5000 })).toThrow('silence invalid: end time must not be before start time');
    expect(apiSilenceState(store.get(id)!, clock.now())).toBe('active');
  });
  it('reordered or changed matchers → new id', () => {
    const id = add({ matchers: [m('a', '1'), m('b', '2')] });
    const id2 = add({ id, matchers: [m('b', '2'), m('a', '1')], startsAt: T0 });
    expect(id2).not.toBe(id);
    expect(apiSilenceState(store.get(id)!, clock.now())).toBe('expired');
  });
  it('pending: start not before now → in place; a pending replacement expires with start=end=now', () => {
    const id = add({ startsAt: T0 + H, endsAt: T0 + 2 * H });
    expect(add({ id, startsAt: T0 + 2 * H - 1, endsAt: T0 + 3 * H })).toBe(id);
    const id2 = add({ id, matchers: [m('x', 'y')], startsAt: T0 + H, endsAt: T0 + 2 * H });
    expect(id2).not.toBe(id);
    expect(store.get(id)).toMatchObject({ startsAt: T0, endsAt: T0 });
  });
  it('expired: never updated; the old one is left alone', () => {
    const id = add();
    clock.advance(2 * H);
    const before = store.get(id);
    const id2 = add({ id, startsAt: T0 + 2 * H, endsAt: T0 + 3 * H });
    expect(id2).not.toBe(id);
    expect(store.get(id)).toBe(before);
  });
  it('unknown id → not found (before matcher validation)', () => {
    expect(() => add({ id: 'nope', matchers: [m('a:b', 'x')] })).toThrow(SilenceNotFound);
  });
  it('an invalid replacement does not expire the old silence (0.28 fix)', () => {
    const id = add();
    expect(() => add({ id, matchers: [m('a', '(x', true)] })).toThrow('silence invalid: invalid label matcher 0: invalid regular expression "(x": error parsing regexp: missing closing ): `(x`');
    expect(apiSilenceState(store.get(id)!, clock.now())).toBe('active');
  });
});

describe('expire and gc', () => {
  it('expires active and pending silences, idempotently', () => {
    const a = add();
    const p = add({ startsAt: T0 + H, endsAt: T0 + 2 * H });
    clock.advance(1000);
    store.expire(a);
    store.expire(p);
    expect(store.get(a)).toMatchObject({ endsAt: T0 + 1000, updatedAt: T0 + 1000 });
    expect(store.get(p)).toMatchObject({ startsAt: T0 + 1000, endsAt: T0 + 1000 });
    clock.advance(1000);
    const before = store.get(a);
    store.expire(a);
    expect(store.get(a)).toBe(before);
    expect(() => store.expire('00000000-0000-4000-8000-000000000000')).toThrow(SilenceNotFound);
  });
  it('keeps expired silences for the retention, then drops them (also on disk)', () => {
    const id = add();
    clock.set(T0 + H + 120 * H - 1);
    expect(store.gc()).toBe(0);
    clock.advance(1);
    expect(store.gc()).toBe(1);
    expect(store.get(id)).toBeUndefined();
    expect(persist.silences.has(id)).toBe(false);
  });
  it('reloads from persistence', () => {
    const id = add();
    const again = new SilenceStore(persist, clock);
    expect(again.get(id)).toEqual(store.get(id));
  });
});

describe('matcher validation', () => {
  it.each([
    [[m('a', '')], 'silence invalid: at least one matcher must not match the empty string'],
    [[m('a', '.*', true)], 'silence invalid: at least one matcher must not match the empty string'],
    [[m('a', 'x?', true), m('b', '')], 'silence invalid: at least one matcher must not match the empty string'],
    [[m('a:b', 'x')], 'silence invalid: invalid label matcher 0: invalid label name "a:b"'],
    [[m('ok', 'x'), m('1abc', 'x')], 'silence invalid: invalid label matcher 1: invalid label name "1abc"'],
  ])('%j', (ms, msg) => {
    expect(() => validateMatchers(ms)).toThrow(msg);
  });
  it('a lone != matcher is accepted', () => {
    expect(() => validateMatchers([m('env', 'prod', false, false)])).not.toThrow();
  });
});

describe('index', () => {
  it('matches only active silences and sorts ids', () => {
    const a = add({ matchers: [m('alertname', 'A')] });
    const b = add({ matchers: [m('alertname', 'A'), m('env', 'p.*', true)] });
    add({ matchers: [m('alertname', 'A')], startsAt: T0 + H, endsAt: T0 + 2 * H });
    const c = add({ matchers: [m('env', 'prod', false, false)] });
    const idx = store.index(clock.now());
    expect(idx.silencedBy({ alertname: 'A', env: 'prod' })).toEqual([a, b].sort());
    expect(idx.silencedBy({ alertname: 'A' })).toEqual([a, c].sort());
    expect(idx.silencedBy({ alertname: 'B', env: 'dev' })).toEqual([c]);
  });
  it('a silence whose anchored matcher cannot be built (\\Qx) is kept but mutes nothing; the others still do', () => {
    const q = add({ matchers: [m('a', '\\Qx', true)] });
    const a = add({ matchers: [m('alertname', 'A')] });
    expect(store.get(q)?.matchers[0]?.value).toBe('\\Qx');
    const idx = store.index(clock.now());
    expect(idx.silencedBy({ alertname: 'B', a: 'x' })).toEqual([]);
    expect(idx.silencedBy({ alertname: 'A', a: 'x' })).toEqual([a]);
  });
  it('is refreshed when a silence starts or ends', () => {
    const p = add({ startsAt: T0 + 1000, endsAt: T0 + 2000 });
    expect(store.index(T0).silencedBy({ alertname: 'A' })).toEqual([]);
    expect(store.index(T0 + 1000).silencedBy({ alertname: 'A' })).toEqual([p]);
    expect(store.index(T0 + 2000).silencedBy({ alertname: 'A' })).toEqual([p]);
    expect(store.index(T0 + 2001).silencedBy({ alertname: 'A' })).toEqual([]);
  });
});
