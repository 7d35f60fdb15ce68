/**
 * Silences: creation and update rules of Alertmanager's silence.Silences (0.25) with the 0.28
 * fix (a replacement is validated before the old silence is expired), expiry, retention-based
 * garbage collection, and an index answering "which active silences match these labels".
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../http/clock.js';
import { isValidLabelName, type LabelSet } from './labels.js';
import { Matcher, type MatchType } from './matchers.js';
import { checkUnanchored, matchesEmpty, RegexError } from './regex.js';
import type { StoredSilence } from './persist.js';
import { goQuote } from './timefmt.js';

export type SilenceState = 'active' | 'pending' | 'expired';

export interface ApiMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual: boolean;
}

export type Silence = StoredSilence;

export class SilenceNotFound extends Error {
  constructor() {
    super('silence not found');
  }
}

export class SilenceInvalid extends Error {}

/** types.CalcSilenceState: what the API reports (`expired` from endsAt on). */
export function apiSilenceState(s: Silence, now: number): SilenceState {
  if (now < s.startsAt) return 'pending';
  if (now < s.endsAt) return 'active';
  return 'expired';
}

/** silence.getState: what silencing and updates use (still `active` at exactly endsAt). */
export function silenceState(s: Silence, now: number): SilenceState {
  if (now < s.startsAt) return 'pending';
  if (now > s.endsAt) return 'expired';
  return 'active';
}

function matchType(m: ApiMatcher): MatchType {
  return m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!=';
}

/** silence.validateSilence + ValidateMatcher, with "silence invalid: " as 0.25 prints it. */
export function validateMatchers(matchers: ApiMatcher[]): void {
  const fail = (m: string) => new SilenceInvalid(`silence invalid: ${m}`);
  if (matchers.length === 0) throw fail('at least one matcher required');
  let allMatchEmpty = true;
  matchers.forEach((m, i) => {
    if (!isValidLabelName(m.name)) throw fail(`invalid label matcher ${i}: invalid label name ${goQuote(m.name)}`);
    if (m.isRegex) {
      try {
        checkUnanchored(m.value);
      } catch (e) {
        throw fail(`invalid label matcher ${i}: invalid regular expression ${goQuote(m.value)}: ${(e as RegexError).message}`);
      }
    }
    const empty = m.isEqual && (m.isRegex ? matchesEmpty(m.value) : m.value === '');
    allMatchEmpty = allMatchEmpty && empty;
  });
  if (allMatchEmpty) throw fail('at least one matcher must not match the empty string');
}

function sameMatchers(a: ApiMatcher[], b: ApiMatcher[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((m, i) => {
    const o = b[i]!;
    return m.name === o.name && m.value === o.value && matchType(m) === matchType(o);
  });
}

/** silence.canUpdate: may `next` replace `prev` in place without rewriting history? */
function canUpdate(prev: Silence, next: Silence, now: number): boolean {
  if (!sameMatchers(prev.matchers, next.matchers)) return false;
  switch (silenceState(prev, now)) {
    case 'active':
      if (Math.floor(next.startsAt / 1000) !== Math.floor(prev.startsAt / 1000)) return false;
      if (next.endsAt < now) return false;
      return true;
    case 'pending':
      return next.startsAt >= now;
    case 'expired':
      return false;
  }
}

interface Entry {
  silence: Silence;
  /** null: a matcher that cannot be built (the silence mutes nothing). */
  compiled: Matcher[] | null;
}

export interface SilenceInput {
  id?: string;
  matchers: ApiMatcher[];
  startsAt: number;
  endsAt: number;
  createdBy: string;
  comment: string;
}

/**
 * Where silences are kept: the alert manager's own database, or the database several daemons
 * share (shared/silences.ts). A write is durable when it returns (or its promise resolves).
 */
export interface SilenceBackend {
  loadSilences(): StoredSilence[];
  writeSilences(silences: StoredSilence[], deleted: string[]): void | Promise<void>;
}

export class SilenceStore {
  private readonly byId = new Map<string, Entry>();
  /** Bumped on every change; caches key on it. */
  version = 0;
  private indexCache?: { version: number; validFrom: number; validUntil: number; index: SilenceIndex };

  constructor(
    private readonly backend: SilenceBackend,
    private readonly clock: Clock,
    /** How long expired silences are kept (Alertmanager's --data.retention, 120h). */
    readonly retentionMs = 120 * 3_600_000,
    /** Reports a deletion the backend could not make (garbage collection does not wait for it). */
    private readonly onGcError: (e: unknown) => void = () => {},
  ) {
    for (const s of backend.loadSilences()) this.byId.set(s.id, this.entry(s));
  }

  private entry(s: Silence): Entry {
    let compiled: Matcher[] | null;
    try {
      compiled = s.matchers.map((m) => new Matcher(matchType(m), m.name, m.value));
    } catch {
      // A pattern valid alone but not anchored (`\Qx` quotes the closing `)$`): Alertmanager
      // accepts such a silence, fails to build its matcher and mutes nothing with it. So does ctl.
      compiled = null;
    }
    return { silence: s, compiled };
  }

  get(id: string): Silence | undefined {
    return this.byId.get(id)?.silence;
  }

  all(): Silence[] {
    return [...this.byId.values()].map((e) => e.silence);
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * Silences.Set. Creates (new random id, start clamped to now) or updates in place when the
   * rules allow; otherwise expires the old one and creates a replacement. Throws
   * SilenceNotFound for an unknown id and SilenceInvalid for bad matchers (before touching
   * anything). Resolves once the backend has the change.
   */
  async set(input: SilenceInput): Promise<string> {
    const now = this.clock.now();
    const prev = input.id ? this.byId.get(input.id)?.silence : undefined;
    if (input.id && !prev) throw new SilenceNotFound();
    validateMatchers(input.matchers);
    const next: Silence = {
      id: input.id ?? '',
      matchers: input.matchers.map((m) => ({ name: m.name, value: m.value, isRegex: m.isRegex, isEqual: m.isEqual })),
      startsAt: input.startsAt,
      endsAt: input.endsAt,
      updatedAt: now,
      createdBy: input.createdBy,
      comment: input.comment,
    };
    const writes: Silence[] = [];
    if (prev) {
      if (canUpdate(prev, next, now)) {
        if (next.endsAt < next.startsAt) throw new SilenceInvalid('silence invalid: end time must not be before start time');
        await this.commit([next]);
        return next.id;
      }
      const expired = this.expiredCopy(prev, now);
      if (expired) writes.push(expired);
    }
    next.id = randomUUID();
    if (next.startsAt < now) next.startsAt = now;
    if (next.endsAt < next.startsAt) throw new SilenceInvalid('silence invalid: end time must not be before start time');
    writes.push(next);
    await this.commit(writes);
    return next.id;
  }

  /** Expire now; idempotent for expired silences. Throws SilenceNotFound. */
  async expire(id: string): Promise<void> {
    const prev = this.byId.get(id)?.silence;
    if (!prev) throw new SilenceNotFound();
    const s = this.expiredCopy(prev, this.clock.now());
    if (s) await this.commit([s]);
  }

  private expiredCopy(prev: Silence, now: number): Silence | undefined {
    switch (silenceState(prev, now)) {
      case 'expired':
        return undefined;
      case 'active':
        return { ...prev, endsAt: now, updatedAt: now };
      case 'pending':
        return { ...prev, startsAt: now, endsAt: now, updatedAt: now };
    }
  }

  private async commit(silences: Silence[]): Promise<void> {
    const pending = this.backend.writeSilences(silences, []);
    if (pending) await pending;
    this.apply(silences, []);
  }

  /**
   * Take changes made elsewhere (another daemon, through the shared backend): a silence replaces
   * the one held unless the held one is newer; `deleted` ids are dropped.
   */
  apply(silences: readonly Silence[], deleted: readonly string[]): void {
    let changed = false;
    for (const s of silences) {
      const held = this.byId.get(s.id)?.silence;
      if (held && held.updatedAt > s.updatedAt) continue;
      this.byId.set(s.id, this.entry(s));
      changed = true;
    }
    for (const id of deleted) changed = this.byId.delete(id) || changed;
    if (changed) this.version++;
  }

  /** Replace every silence held (a full reload from the shared backend). */
  replaceAll(silences: readonly Silence[]): void {
    this.byId.clear();
    for (const s of silences) this.byId.set(s.id, this.entry(s));
    this.version++;
  }

  /**
   * Drop silences whose end is more than the retention in the past. Returns how many. A shared
   * backend deletes them in the background (every daemon collects the same ones; deleting twice
   * is harmless).
   */
  gc(): number {
    const now = this.clock.now();
    const gone: string[] = [];
    for (const [id, e] of this.byId) if (e.silence.endsAt + this.retentionMs <= now) gone.push(id);
    if (gone.length === 0) return 0;
    const pending = this.backend.writeSilences([], gone);
    if (pending) pending.catch(this.onGcError);
    for (const id of gone) this.byId.delete(id);
    this.version++;
    return gone.length;
  }

  /** The active silences at `now`, indexed for matching; cached until a silence changes state. */
  index(now: number): SilenceIndex {
    const c = this.indexCache;
    if (c && c.version === this.version && now >= c.validFrom && now < c.validUntil) return c.index;
    let validUntil = Infinity;
    const active: Entry[] = [];
    for (const e of this.byId.values()) {
      const s = e.silence;
      // State changes at startsAt (pending → active) and just after endsAt (active → expired).
      if (s.startsAt > now) validUntil = Math.min(validUntil, s.startsAt);
      else if (s.endsAt >= now) validUntil = Math.min(validUntil, s.endsAt + 1);
      if (silenceState(s, now) === 'active') active.push(e);
    }
    const index = new SilenceIndex(active);
    this.indexCache = { version: this.version, validFrom: now, validUntil, index };
    return index;
  }
}

/**
 * Active silences bucketed by one of their equality matchers (name → value → silences), so an
 * alert is tested only against silences that can match it.
 */
const NO_IDS: string[] = [];

export class SilenceIndex {
  private readonly byLabel = new Map<string, Map<string, Entry[]>>();
  private readonly rest: Entry[] = [];
  readonly size: number;

  constructor(entries: Entry[]) {
    this.size = entries.length;
    for (const e of entries) {
      if (e.compiled === null) continue;
      const key = e.compiled.find((m) => m.type === '=' && m.value !== '');
      if (!key) {
        this.rest.push(e);
        continue;
      }
      let byValue = this.byLabel.get(key.name);
      if (!byValue) this.byLabel.set(key.name, (byValue = new Map()));
      const list = byValue.get(key.value);
      if (list) list.push(e);
      else byValue.set(key.value, [e]);
    }
  }

  /** Sorted ids of the active silences whose matchers all match. */
  silencedBy(labels: LabelSet): string[] {
    if (this.size === 0) return NO_IDS;
    const out: string[] = [];
    const test = (e: Entry) => {
      for (const m of e.compiled!) if (!m.matches(labels[m.name] ?? '')) return;
      out.push(e.silence.id);
    };
    for (const e of this.rest) test(e);
    if (this.byLabel.size > 0) {
      for (const name in labels) {
        const list = this.byLabel.get(name)?.get(labels[name]!);
        if (list) for (const e of list) test(e);
      }
    }
    if (out.length === 0) return NO_IDS;
    if (out.length > 1) out.sort();
    return out;
  }
}
