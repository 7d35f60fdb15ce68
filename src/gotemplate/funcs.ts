/** text/template's builtin functions and the part of fmt (Sprintf, Sprint, Sprintln) they need. */
import { formatNumber, formatValue, GO_TYPE, isMap, MAP_ZERO, NO_VALUE, truth } from './values.js';

export type TemplateFunc = (...args: unknown[]) => unknown;

export class TemplateExecError extends Error {}

/** strconv.Quote (also Go's %q). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (c === 7) out += '\\a';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c === 11) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else if (c >= 0x80 && c < 0xa0) out += '\\u' + c.toString(16).padStart(4, '0');
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return out + '"';
}

function pad(s: string, width: number | undefined, left: boolean, zero: boolean): string {
  if (width === undefined || s.length >= width) return s;
  if (left) return s + ' '.repeat(width - s.length);
  if (zero) {
    const sign = /^[+-]/.test(s) ? s[0] : '';
    return sign + '0'.repeat(width - s.length) + s.slice(sign.length);
  }
  return ' '.repeat(width - s.length) + s;
}

/** fmt.Sprintf for the verbs templates use: %v %s %q %d %x %X %o %b %c %f %e %g %t %T %%, flags - + 0 space, width, precision. */
export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let argi = 0;
  const re = /%([-+ 0#]*)(\d+|\*)?(?:\.(\d+|\*)?)?([a-zA-Z%])/g;
  let last = 0;
  for (let m = re.exec(format); m; m = re.exec(format)) {
    out += format.slice(last, m.index);
    last = re.lastIndex;
    const [, flags, w, p, verb] = m as unknown as [string, string, string | undefined, string | undefined, string];
    if (verb === '%') {
      out += '%';
      continue;
    }
    const width = w === '*' ? Number(args[argi++]) : w !== undefined ? Number(w) : undefined;
    const prec = p === '*' ? Number(args[argi++]) : p !== undefined ? Number(p) : m[0].includes('.') ? 0 : undefined;
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const a = args[argi++];
    const left = flags.includes('-');
    const zero = flags.includes('0') && !left;
    const plus = flags.includes('+');
    let s: string;
    switch (verb) {
      case 'v':
      case 's':
        s = formatValue(a, false);
        if (a === NO_VALUE || a === undefined) s = '<nil>';
        if (prec !== undefined && typeof a === 'string') s = [...s].slice(0, prec).join('');
        break;
      case 'q':
        s = typeof a === 'string' ? goQuote(a) : typeof a === 'number' ? `'${String.fromCodePoint(a)}'` : `%!q(${typeof a})`;
        break;
      case 'd':
        s = typeof a === 'number' && Number.isInteger(a) ? String(a) : `%!d(${goType(a)}=${formatValue(a, false)})`;
        if (plus && typeof a === 'number' && a >= 0) s = '+' + s;
        break;
      case 'x':
      case 'X': {
        if (typeof a === 'number') s = Math.trunc(a).toString(16);
        else if (typeof a === 'string') s = Buffer.from(a, 'utf8').toString('hex');
        else s = `%!${verb}(${goType(a)}=${formatValue(a, false)})`;
        if (verb === 'X') s = s.toUpperCase();
        break;
      }
      case 'o':
        s = typeof a === 'number' ? Math.trunc(a).toString(8) : `%!o(${goType(a)})`;
        break;
      case 'b':
        s = typeof a === 'number' ? Math.trunc(a).toString(2) : `%!b(${goType(a)})`;
        break;
      case 'c':
        s = typeof a === 'number' ? String.fromCodePoint(a) : `%!c(${goType(a)})`;
        break;
      case 'f':
      case 'F':
        s = typeof a === 'number' ? a.toFixed(prec ?? 6) : `%!f(${goType(a)}=${formatValue(a, false)})`;
        if (plus && typeof a === 'number' && a >= 0) s = '+' + s;
        break;
      case 'e':
      case 'E': {
        if (typeof a !== 'number') {
          s = `%!e(${goType(a)})`;
          break;
        }
        const [mant, exp] = a.toExponential(prec ?? 6).split('e');
        const ev = Number(exp);
        s = `${mant}e${ev < 0 ? '-' : '+'}${String(Math.abs(ev)).padStart(2, '0')}`;
        if (verb === 'E') s = s.toUpperCase();
        break;
      }
      case 'g':
        s = typeof a === 'number' ? (prec !== undefined ? Number(a.toPrecision(prec || 1)).toString() : formatNumber(a)) : `%!g(${goType(a)})`;
        break;
      case 't':
        s = typeof a === 'boolean' ? String(a) : `%!t(${goType(a)}=${formatValue(a, false)})`;
        break;
      case 'T':
        s = goType(a);
        break;
      default:
        s = `%!${verb}(${goType(a)}=${formatValue(a, false)})`;
    }
    out += pad(s, width, left, zero && verb !== 's' && verb !== 'v' && verb !== 'q');
  }
  out += format.slice(last);
  if (argi < args.length) out += '%!(EXTRA ' + args.slice(argi).map((a) => `${goType(a)}=${formatValue(a, false)}`).join(', ') + ')';
  return out;
}

function goType(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  if (isMap(v)) return 'map[string]interface {}';
  if (v === null || v === undefined || v === NO_VALUE) return '<nil>';
  if (typeof v === 'object' && GO_TYPE in v) return String((v as Record<symbol, unknown>)[GO_TYPE]);
  return 'struct';
}

/** fmt.Sprint: spaces between operands when neither is a string. */
export function sprint(args: unknown[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(a, false);
  });
  return out;
}

/** template.HTMLEscapeString. */
export function htmlEscape(s: string): string {
  return s.replace(/[<>&'"\0]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&#34;', '\0': '\ufffd' })[c]!);
}

/** template.JSEscapeString. */
function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === '<') out += '\\u003C';
    else if (ch === '>') out += '\\u003E';
    else if (ch === '&') out += '\\u0026';
    else if (ch === '=') out += '\\u003D';
    else if (c < 0x20) out += '\\u' + c.toString(16).toUpperCase().padStart(4, '0');
    else out += ch;
  }
  return out;
}

function compare(op: string, a: unknown, b: unknown): boolean {
  if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string' && typeof a !== 'boolean')) {
    if (op === 'eq' || op === 'ne') {
      const eq = a === b || ((a === null || a === undefined || a === NO_VALUE) && (b === null || b === undefined || b === NO_VALUE));
      if (typeof a !== typeof b && a !== null && b !== null && a !== undefined && b !== undefined && a !== NO_VALUE && b !== NO_VALUE) {
        throw new TemplateExecError(`error calling ${op}: incompatible types for comparison`);
      }
      return op === 'eq' ? eq : !eq;
    }
    throw new TemplateExecError(`error calling ${op}: ${typeof a === typeof b ? 'invalid type for comparison' : 'incompatible types for comparison'}`);
  }
  const x = a as number | string;
  const y = b as number | string;
  switch (op) {
    case 'eq':
      return x === y;
    case 'ne':
      return x !== y;
    case 'lt':
      return x < y;
    case 'le':
      return x <= y;
    case 'gt':
      return x > y;
    default:
      return x >= y;
  }
}

/** The builtins; `and`/`or` are evaluated lazily by the executor but also work here. */
export const BUILTINS: Record<string, TemplateFunc> = {
  and: (...a) => {
    for (const x of a) if (!truth(x)) return x;
    return a[a.length - 1];
  },
  or: (...a) => {
    for (const x of a) if (truth(x)) return x;
    return a[a.length - 1];
  },
  not: (a) => !truth(a),
  len: (a) => {
    if (typeof a === 'string') return Buffer.byteLength(a, 'utf8');
    if (Array.isArray(a)) return a.length;
    if (isMap(a)) return Object.keys(a).length;
    throw new TemplateExecError(`error calling len: len of type ${goType(a)}`);
  },
  index: (x, ...keys) => {
    let v = x;
    for (const k of keys) {
      if (Array.isArray(v) || typeof v === 'string') {
        const i = Number(k);
        if (!Number.isInteger(i) || i < 0 || i >= (v as unknown[]).length) throw new TemplateExecError(`error calling index: index out of range: ${formatValue(k)}`);
        v = typeof v === 'string' ? Buffer.from(v)[i] : v[i];
      } else if (isMap(v)) v = Object.prototype.hasOwnProperty.call(v, String(k)) ? v[String(k)] : MAP_ZERO in v ? (v as Record<symbol, unknown>)[MAP_ZERO] : NO_VALUE;
      else if (v === null || v === undefined || v === NO_VALUE) throw new TemplateExecError('error calling index: index of untyped nil');
      else throw new TemplateExecError(`error calling index: can't index item of type ${goType(v)}`);
    }
    return v;
  },
  slice: (x, ...idx) => {
    if (typeof x !== 'string' && !Array.isArray(x)) throw new TemplateExecError(`error calling slice: can't slice item of type ${goType(x)}`);
    const [i = 0, j = x.length] = idx.map(Number);
    if (i < 0 || j > x.length || i > j) throw new TemplateExecError(`error calling slice: index out of range: ${j}`);
    return x.slice(i, j);
  },
  print: (...a) => sprint(a),
  printf: (f, ...a) => sprintf(String(f), a),
  println: (...a) => a.map((x) => formatValue(x, false)).join(' ') + '\n',
  html: (...a) => htmlEscape(sprint(a)),
  js: (...a) => jsEscape(sprint(a)),
  urlquery: (...a) => encodeURIComponent(sprint(a)).replace(/%20/g, '+').replace(/[!'()*~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()),
  eq: (a, ...bs) => {
    if (bs.length === 0) throw new TemplateExecError('error calling eq: missing argument for comparison');
    return bs.some((b) => compare('eq', a, b));
  },
  ne: (a, b) => compare('ne', a, b),
  lt: (a, b) => compare('lt', a, b),
  le: (a, b) => compare('le', a, b),
  gt: (a, b) => compare('gt', a, b),
  ge: (a, b) => compare('ge', a, b),
  call: (f, ...a) => {
    if (typeof f !== 'function') throw new TemplateExecError(`error calling call: non-function of type ${goType(f)}`);
    return (f as TemplateFunc)(...a);
  },
};
