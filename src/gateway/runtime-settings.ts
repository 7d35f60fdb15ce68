/**
 * Runtime settings that an operator changes through the management API (resilience, response cache,
 * concurrency): built-in defaults, overridden by the gateway.yaml section, overridden by what the API
 * saved in the `settings` table (as with prices, the API override wins over the file). The effective
 * object is computed once per change, so the hot path reads a plain object.
 */
import { describeErrors, type Validator } from '../http/schema.js';
import type { GatewayStore } from './store.js';
import { GatewayError } from './errors.js';

export type Plain = Record<string, unknown>;

function isPlain(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Deep merge of plain objects: nested objects merge, arrays and scalars replace, and `null` deletes
 * the key (so a PATCH can drop a per-provider override).
 */
export function deepMerge(base: Plain, patch: Plain): Plain {
  const out: Plain = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (isPlain(v) && isPlain(out[k])) out[k] = deepMerge(out[k] as Plain, v);
    else if (isPlain(v)) out[k] = deepMerge({}, v);
    else out[k] = v;
  }
  return out;
}

export class LayeredSettings<T extends object> {
  private file: Plain = {};
  private saved: Plain = {};
  private current: T;
  private readonly listeners: ((s: T) => void)[] = [];

  /**
   * @param validatePatch schema of a partial update (every field optional; `null` allowed where a key may be dropped)
   * @param check extra rules on the merged result (throws Error with a message)
   */
  constructor(
    private readonly db: GatewayStore,
    private readonly key: string,
    private readonly defaults: T,
    private readonly validatePatch: Validator<unknown>,
    private readonly check: (s: T) => void = () => undefined,
  ) {
    const raw = db.getSetting(key);
    if (raw !== undefined) {
      try {
        const parsed = JSON.parse(raw) as unknown;
        if (isPlain(parsed) && validatePatch(parsed)) this.saved = parsed;
      } catch {
        /* a corrupt row is ignored: defaults and the file still apply */
      }
    }
    this.current = this.compute();
  }

  get value(): T {
    return this.current;
  }

  /** What the API saved (the override layer). */
  get overrides(): Plain {
    return this.saved;
  }

  onChange(fn: (s: T) => void): void {
    this.listeners.push(fn);
  }

  /**
   * The gateway.yaml layer (already camelCased); throws with a message naming the problem. When the
   * file is fine on its own but clashes with what the API saved, the file wins until the API
   * overrides are changed (they stay visible in `overrides`).
   */
  setFile(section: unknown, where: string): void {
    const next = section === undefined ? {} : section;
    // An absent section needs no schema check (and so no Ajv compile at start-up).
    if (!isPlain(next) || (Object.keys(next).length > 0 && !this.validatePatch(next))) throw new Error(`${where}: ${describeErrors(this.validatePatch.errors, where)}`);
    const fileOnly = this.merge(next, {});
    try {
      this.check(fileOnly);
    } catch (e) {
      throw new Error(`${where}: ${(e as Error).message}`);
    }
    let merged = this.merge(next, this.saved);
    try {
      this.check(merged);
    } catch {
      merged = fileOnly;
    }
    this.file = next;
    this.apply(merged);
  }

  /** Apply and persist an API update; 400 on a bad body. Returns the effective settings. */
  patch(body: unknown): T {
    if (!isPlain(body)) throw new GatewayError('invalid', 'request body must be a JSON object', { code: 'invalid_request' });
    if (!this.validatePatch(body)) throw new GatewayError('invalid', describeErrors(this.validatePatch.errors, 'body'), { code: 'invalid_request' });
    const saved = deepMerge(this.saved, body);
    const merged = this.merge(this.file, saved);
    try {
      this.check(merged);
    } catch (e) {
      throw new GatewayError('invalid', (e as Error).message, { code: 'invalid_request' });
    }
    this.db.setSetting(this.key, JSON.stringify(saved));
    this.saved = saved;
    this.apply(merged);
    return merged;
  }

  /** `patch`, resolving once the change is durable (committed to the shared database when there is one). */
  async save(body: unknown): Promise<T> {
    const merged = this.patch(body);
    await this.db.settled();
    return merged;
  }

  /** `resetOverrides`, resolving once durable. */
  async reset(): Promise<T> {
    const merged = this.resetOverrides();
    await this.db.settled();
    return merged;
  }

  /** Read the saved overrides again (another daemon changed them in the shared database). */
  reloadSaved(): void {
    const raw = this.db.getSetting(this.key);
    let saved: Plain = {};
    try {
      const parsed = raw === undefined ? {} : (JSON.parse(raw) as unknown);
      if (isPlain(parsed) && this.validatePatch(parsed)) saved = parsed;
    } catch {
      /* a corrupt value is ignored, as at start-up */
    }
    this.saved = saved;
    let merged = this.merge(this.file, saved);
    try {
      this.check(merged);
    } catch {
      merged = this.merge(this.file, {});
    }
    this.apply(merged);
  }

  /** Drop every API override (back to the file and the defaults). */
  resetOverrides(): T {
    this.db.setSetting(this.key, '{}');
    this.saved = {};
    const merged = this.merge(this.file, {});
    this.apply(merged);
    return merged;
  }

  private merge(file: Plain, saved: Plain): T {
    return deepMerge(deepMerge(this.defaults as unknown as Plain, file), saved) as unknown as T;
  }

  private compute(): T {
    const merged = this.merge(this.file, this.saved);
    try {
      this.check(merged);
      return merged;
    } catch {
      return this.merge(this.file, {});
    }
  }

  private apply(next: T): void {
    this.current = next;
    for (const fn of this.listeners) fn(next);
  }
}
