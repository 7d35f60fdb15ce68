/**
 * Reading `Value` keys that arrive either typed (JSON) or as strings (form-encoded).
 */

/** Go strconv.ParseBool's spellings: 1 t T TRUE true True / 0 f F FALSE false False. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

export function readBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    if (TRUE.has(v.trim())) return true;
    if (FALSE.has(v.trim())) return false;
  }
  return undefined;
}

/** A positive integer id from a JSON number or a decimal string. */
export function readId(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : undefined;
  if (typeof v === 'string' && /^\s*\d{1,15}\s*$/.test(v)) {
    const n = Number(v.trim());
    return n > 0 ? n : undefined;
  }
  return undefined;
}

/** A list from a JSON array, or a comma-separated form string. */
export function readList(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return v.split(',').map((s) => s.trim());
  return undefined;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
