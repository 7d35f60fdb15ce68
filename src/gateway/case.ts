/** snake_case → camelCase for bodies and gateway.yaml sections (the management API speaks camelCase). */

/** `base_url` → `baseUrl`. */
export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Camelise object keys recursively. Keys of maps whose keys are data, not field names (`headers`,
 * per-image prices keyed by size/quality, per-provider maps), are left alone.
 */
export function camelizeKeys(v: unknown, keepKeysOf: ReadonlySet<string> = new Set(['headers', 'perImage'])): unknown {
  if (Array.isArray(v)) return v.map((x) => camelizeKeys(x, keepKeysOf));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    const ck = camelCase(k);
    out[ck] = keepKeysOf.has(ck) ? val : camelizeKeys(val, keepKeysOf);
  }
  return out;
}
