/**
 * JSON as Go's encoding/json writes it (Alertmanager's responses): map keys sorted, HTML-safe
 * escaping of < > &, \u2028/\u2029 escaped, control characters as \u00XX.
 */
import { sortedNames } from '../labels.js';

const NEEDS_ESCAPE = /["\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]/;

const HEX = '0123456789abcdef';

export function goJsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c < 0x20 || c === 0x3c || c === 0x3e || c === 0x26 || c === 0x2028 || c === 0x2029) {
      out += '\\u' + HEX[(c >> 12) & 15] + HEX[(c >> 8) & 15] + HEX[(c >> 4) & 15] + HEX[c & 15];
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      out += s[i]! + s[i + 1]!;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += '\ufffd';
    } else out += s[i];
  }
  return out + '"';
}

/**
 * Where JSON.stringify and Go's encoder could write a string differently, or where it needs any
 * care: control characters (Go writes \b and \f as \u0008 and \u000c), Go's HTML-safe < > &,
 * U+2028/U+2029, surrogates (Go turns a lone one into U+FFFD). Quotes and backslashes are written
 * alike by both.
 */
const NOT_AS_STRINGIFY = /[\x00-\x1f<>&\u2028\u2029\ud800-\udfff]/;

/**
 * A string map with sorted keys (Go marshals maps in key order: bytes of UTF-8). Rendered for
 * every alert of a GET. Label sets usually have their names in order already (Prometheus sends
 * them sorted) and nothing to escape: then JSON.stringify writes Go's text in one call, one flat
 * string instead of a concatenation of some forty pieces. Its key order is the object's (integer-
 * like keys first), the order the walk checks. Otherwise the keys are put in order by the
 * small-set sort of labels.ts, which allocates nothing beyond the key list.
 */
export function goJsonLabelSet(ls: Record<string, string>): string {
  let prev: string | undefined;
  for (const k in ls) {
    // Without surrogates, code-unit order is UTF-8 byte order.
    if ((prev !== undefined && !(prev < k)) || NOT_AS_STRINGIFY.test(k) || NOT_AS_STRINGIFY.test(ls[k]!)) return goJsonLabelSetSorted(ls);
    prev = k;
  }
  return JSON.stringify(ls);
}

/** goJsonLabelSet the long way: a sorted key list and Go's escaping of each string. */
export function goJsonLabelSetSorted(ls: Record<string, string>): string {
  const keys = sortedNames(ls);
  if (keys.length === 0) return '{}';
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out += ',';
    out += goJsonString(keys[i]!) + ':' + goJsonString(ls[keys[i]!]!);
  }
  return out + '}';
}

/** A value goJson writes as it is: an already encoded part (a Go map, written with sorted keys). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Any JSON value the Go way (objects keep their key order: use it for structs written in Go field order). */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (v instanceof RawJson) return v.text;
  if (typeof v === 'string') return goJsonString(v);
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(goJson).join(',') + ']';
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v as object)) {
    if (x === undefined) continue;
    parts.push(goJsonString(k) + ':' + goJson(x));
  }
  return '{' + parts.join(',') + '}';
}

/** Replace lone surrogates with U+FFFD, as Go's JSON decoder does. */
export function wellFormed(s: string): string {
  return (s as string & { toWellFormed?: () => string }).toWellFormed?.() ?? s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** No lone surrogates (String.prototype.isWellFormed, Node 20+; typed here for the ES2022 lib). */
export function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}
