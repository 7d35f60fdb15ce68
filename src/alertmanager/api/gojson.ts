/**
 * How go-openapi + encoding/json (Go 1.19) read Alertmanager's request bodies, so that bad
 * bodies get the same 400 text: `json.Decoder` takes the first JSON value (trailing bytes are
 * ignored; an empty body is "missing"), syntax errors read `invalid character 'x' after object
 * key`, and type errors `json: cannot unmarshal number into Go struct field Silence.comment of
 * type string`, reported in the order Go finds them.
 */
import { parseDateTime, TimeParseError } from '../timefmt.js';
import { indexPastDepth } from '../../http/json-depth.js';

export class GoJsonError extends Error {}

/** Marker for an empty (or whitespace-only) body. */
export const EMPTY = Symbol('empty body');

/** encoding/json's scanner refuses nesting deeper than this (maxNestingDepth). */
const GO_MAX_NESTING_DEPTH = 10_000;

/** Decode the first JSON value of a body, as json.Decoder.Decode does. */
export function decodeFirst(buf: Buffer): unknown {
  const text = buf.toString('utf8');
  // Go's own limit and message; it also bounds the recursive scanner below.
  const tooDeep = indexPastDepth(text, GO_MAX_NESTING_DEPTH);
  if (tooDeep !== -1) throw new GoJsonError(`invalid character ${quoteChar(text.charCodeAt(tooDeep))} exceeded max depth`);
  try {
    return JSON.parse(text);
  } catch {
    // Fall through: find the end of the first value, or Go's error for it.
  }
  const end = scanFirstValue(buf);
  if (end === -1) return EMPTY;
  return JSON.parse(buf.subarray(0, end).toString('utf8'));
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  let s: string;
  if (c === 0x07) s = '\\a';
  else if (c === 0x08) s = '\\b';
  else if (c === 0x0c) s = '\\f';
  else if (c === 0x0a) s = '\\n';
  else if (c === 0x0d) s = '\\r';
  else if (c === 0x09) s = '\\t';
  else if (c === 0x0b) s = '\\v';
  else if (c === 0x5c) s = '\\\\';
  else if (c < 0x20 || c === 0x7f) s = '\\x' + c.toString(16).padStart(2, '0');
  else if (c >= 0x80 && c < 0xa0) s = '\\u' + c.toString(16).padStart(4, '0');
  else if (c === 0xad) s = '\\u00ad';
  else s = String.fromCharCode(c);
  return `'${s}'`;
}

/**
 * Scan the first JSON value in `b` with Go's scanner rules. Returns the end offset, -1 for an
 * empty body, or throws GoJsonError with Go's message.
 */
function scanFirstValue(b: Buffer): number {
  let i = 0;
  const n = b.length;
  const err = (c: number, ctx: string): never => {
    throw new GoJsonError(`invalid character ${quoteChar(c)} ${ctx}`);
  };
  const eof = (): never => {
    throw new GoJsonError('unexpected EOF');
  };
  const skipWs = () => {
    while (i < n && isSpace(b[i]!)) i++;
  };
  skipWs();
  if (i >= n) return -1;

  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (i >= n) eof();
      if (b[i] !== word.charCodeAt(k)) err(b[i]!, `in literal ${word} (expecting '${word[k]}')`);
    }
    i++;
  };

  const string = () => {
    // b[i] is the opening quote
    i++;
    for (;;) {
      if (i >= n) eof();
      const c = b[i]!;
      if (c === 0x22) {
        i++;
        return;
      }
      if (c === 0x5c) {
        i++;
        if (i >= n) eof();
        const e = b[i]!;
        if ('"\\/bfnrt'.includes(String.fromCharCode(e))) {
          i++;
          continue;
        }
        if (e === 0x75) {
          i++;
          for (let k = 0; k < 4; k++) {
            if (i >= n) eof();
            const h = b[i]!;
            if (!((h >= 0x30 && h <= 0x39) || (h >= 0x61 && h <= 0x66) || (h >= 0x41 && h <= 0x46))) {
              err(h, 'in \\u hexadecimal character escape');
            }
            i++;
          }
          continue;
        }
        err(e, 'in string escape code');
      }
      if (c < 0x20) err(c, 'in string literal');
      i++;
    }
  };

  const digit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;

  // A number ends at the first byte that cannot continue it; the caller checks what follows.
  const number = (topLevel: boolean) => {
    if (b[i] === 0x2d) {
      i++;
      if (i >= n) eof();
      if (!digit(b[i])) err(b[i]!, 'in numeric literal');
    }
    if (b[i] === 0x30) i++;
    else while (i < n && digit(b[i])) i++;
    if (i < n && b[i] === 0x2e) {
      i++;
      if (i >= n) eof();
      if (!digit(b[i])) err(b[i]!, 'after decimal point in numeric literal');
      while (i < n && digit(b[i])) i++;
    }
    if (i < n && (b[i] === 0x65 || b[i] === 0x45)) {
      i++;
      if (i >= n) eof();
      if (b[i] === 0x2b || b[i] === 0x2d) {
        i++;
        if (i >= n) eof();
      }
      if (!digit(b[i])) err(b[i]!, 'in exponent of numeric literal');
      while (i < n && digit(b[i])) i++;
    }
    // A top-level number needs one more byte (or EOF) to know it ended; Go's Decoder accepts EOF.
    void topLevel;
  };

  const value = (topLevel: boolean): void => {
    skipWs();
    if (i >= n) eof();
    const c = b[i]!;
    switch (c) {
      case 0x7b: {
        i++;
        skipWs();
        if (i >= n) eof();
        if (b[i] === 0x7d) {
          i++;
          return;
        }
        for (;;) {
          skipWs();
          if (i >= n) eof();
          if (b[i] !== 0x22) err(b[i]!, 'looking for beginning of object key string');
          string();
          skipWs();
          if (i >= n) eof();
          if (b[i] !== 0x3a) err(b[i]!, 'after object key');
          i++;
          value(false);
          skipWs();
          if (i >= n) eof();
          if (b[i] === 0x2c) {
            i++;
            continue;
          }
          if (b[i] === 0x7d) {
            i++;
            return;
          }
          err(b[i]!, 'after object key:value pair');
        }
      }
      case 0x5b: {
        i++;
        skipWs();
        if (i >= n) eof();
        if (b[i] === 0x5d) {
          i++;
          return;
        }
        for (;;) {
          value(false);
          skipWs();
          if (i >= n) eof();
          if (b[i] === 0x2c) {
            i++;
            continue;
          }
          if (b[i] === 0x5d) {
            i++;
            return;
          }
          err(b[i]!, 'after array element');
        }
      }
      case 0x22:
        string();
        return;
      case 0x74:
        literal('true');
        return;
      case 0x66:
        literal('false');
        return;
      case 0x6e:
        literal('null');
        return;
      default:
        if (c === 0x2d || digit(c)) {
          number(topLevel);
          return;
        }
        err(c, 'looking for beginning of value');
    }
  };
  value(true);
  return i;
}

// ---- type checking ---------------------------------------------------------------------------

/** A Go type as encoding/json sees it, with the names its errors print. */
export type GoType =
  | { k: 'string' }
  | { k: 'bool' }
  | { k: 'datetime' }
  | { k: 'map'; go: string; of: GoType }
  | { k: 'slice'; go: string; of: GoType }
  | { k: 'struct'; go: string; name: string; fields: Record<string, GoType> };

interface Ctx {
  struct?: string;
  stack: string[];
}

class Abort extends Error {}

function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

function typeErrorText(kind: string, go: string, ctx: Ctx): string {
  if (ctx.struct !== undefined || ctx.stack.length > 0) {
    return `json: cannot unmarshal ${kind} into Go struct field ${ctx.struct ?? ''}.${ctx.stack.join('.')} of type ${go}`;
  }
  return `json: cannot unmarshal ${kind} into Go value of type ${go}`;
}

function goName(t: GoType): string {
  switch (t.k) {
    case 'string':
    case 'bool':
      return t.k;
    case 'datetime':
      return 'strfmt.DateTime';
    default:
      return t.go;
  }
}

/**
 * json.Unmarshal of `v` into `t`: returns Go's error text or undefined. Type errors are kept
 * and the walk goes on (the first one is returned at the end); errors from DateTime's own
 * UnmarshalJSON stop at once, as in Go.
 */
export function checkGoJson(v: unknown, t: GoType): string | undefined {
  const saved: { first?: string } = {};
  try {
    walk(v, t, { stack: [] }, saved);
  } catch (e) {
    if (e instanceof Abort) return e.message;
    throw e;
  }
  return saved.first;
}

function walk(v: unknown, t: GoType, ctx: Ctx, saved: { first?: string }): void {
  if (v === null) return;
  const mismatch = () => {
    saved.first ??= typeErrorText(jsonKind(v), goName(t), ctx);
  };
  switch (t.k) {
    case 'string':
      if (typeof v !== 'string') mismatch();
      return;
    case 'bool':
      if (typeof v !== 'boolean') mismatch();
      return;
    case 'datetime':
      if (typeof v !== 'string') throw new Abort(typeErrorText(jsonKind(v), 'string', ctx));
      try {
        parseDateTime(v);
      } catch (e) {
        if (e instanceof TimeParseError) throw new Abort(e.message);
        throw e;
      }
      return;
    case 'map':
      if (typeof v !== 'object' || Array.isArray(v)) return mismatch();
      for (const x of Object.values(v as object)) walk(x, t.of, ctx, saved);
      return;
    case 'slice':
      if (!Array.isArray(v)) return mismatch();
      for (const x of v) walk(x, t.of, ctx, saved);
      return;
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) return mismatch();
      for (const [key, x] of Object.entries(v as object)) {
        const field = fieldFor(t, key);
        if (!field) continue;
        walk(x, t.fields[field]!, { struct: t.name, stack: [...ctx.stack, field] }, saved);
      }
      return;
    }
  }
}

/** Go matches JSON keys to fields exactly first, then case-insensitively. */
export function fieldFor(t: { fields: Record<string, unknown> }, key: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(t.fields, key)) return key;
  const lower = key.toLowerCase();
  return Object.keys(t.fields).find((f) => f.toLowerCase() === lower);
}

/** Read a struct field the way Go assigns it: the last key that matches (case-insensitively) wins. */
export function getField(obj: Record<string, unknown>, t: { fields: Record<string, unknown> }, field: string): unknown {
  let out: unknown = undefined;
  for (const [k, v] of Object.entries(obj)) if (fieldFor(t, k) === field) out = v;
  return out;
}
