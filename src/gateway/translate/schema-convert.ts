/**
 * Gemini's legacy `parameters` / `responseSchema` use an OpenAPI subset with upper-case type names
 * ("OBJECT", "STRING"). These helpers convert to and from plain JSON Schema.
 */
import { isObject } from './common.js';

/** Gemini OpenAPI-subset schema → JSON Schema (lower-case types, `nullable` folded into type). */
export function geminiSchemaToJson(s: unknown, depth = 0): unknown {
  if (depth > 64) return s;
  if (Array.isArray(s)) return s.map((x) => geminiSchemaToJson(x, depth + 1));
  if (!isObject(s)) return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'type' && typeof v === 'string') out.type = v.toLowerCase();
    else if (k === 'nullable') continue;
    else if (k === 'properties' && isObject(v)) {
      const props: Record<string, unknown> = {};
      for (const [pk, pv] of Object.entries(v)) props[pk] = geminiSchemaToJson(pv, depth + 1);
      out.properties = props;
    } else if (k === 'items' || k === 'anyOf') out[k] = geminiSchemaToJson(v, depth + 1);
    else out[k] = v;
  }
  if (s.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}
