/** text/template's builtin functions and the part of fmt (Sprintf, Sprint, Sprintln) they need. */
import { formatFloat, formatValue, GO_POINTER, GO_SYNTAX, GO_TYPE, GoFloat, isFloat, isGoFormattable, isMap, MAP_ZERO, NO_VALUE, numberOf, SAFE_HTML, truth } from './values.js';

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

/** The pieces of one fmt verb. */
interface Spec {
  verb: string;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  prec: number | undefined;
}

/** `%!d(string=s)`: what fmt prints for a verb the operand's type does not take. */
function badVerb(verb: string, a: unknown): string {
  if (a === null || a === undefined || a === NO_VALUE) return `%!${verb}(<nil>)`;
  return `%!${verb}(${goType(a)}=${formatValue(a, false)})`;
}

function signed(s: string, n: number | bigint, spec: Spec): string {
  if (n >= 0 && spec.plus) return '+' + s;
  if (n >= 0 && spec.space) return ' ' + s;
  return s;
}

/** %g with a precision: `prec` significant digits, trailing zeros dropped, exponent when Go uses one. */
function formatG(n: number, prec: number | undefined): string {
  if (prec === undefined) return formatFloat(n);
  const p = prec === 0 ? 1 : prec;
  if (!Number.isFinite(n)) return formatFloat(n);
  const [m, e] = n.toExponential(p - 1).split('e');
  const exp = Number(e);
  const trim = (x: string) => (x.includes('.') ? x.replace(/0+$/, '').replace(/\.$/, '') : x);
  if (exp < -4 || exp >= p) return `${trim(m!)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return trim(n.toFixed(Math.max(0, p - 1 - exp)));
}

function formatE(n: number, prec: number | undefined, upper: boolean): string {
  const [mant, exp] = n.toExponential(prec ?? 6).split('e');
  const ev = Number(exp);
  const out = `${mant}e${ev < 0 ? '-' : '+'}${String(Math.abs(ev)).padStart(2, '0')}`;
  return upper ? out.toUpperCase() : out;
}

/** One operand under one verb, as fmt prints it. */
function fmtOne(a: unknown, spec: Spec): string {
  const { verb } = spec;
  if (verb === 'T') return goType(a);
  if (verb === 'v' && spec.sharp) return goSyntax(a);
  if (verb === 'v' && spec.plus) return plusV(a);
  if (a === null || a === undefined || a === NO_VALUE) return verb === 'v' || verb === 's' ? (verb === 's' ? '%!s(<nil>)' : '<nil>') : badVerb(verb, a);
  // Slices and maps: the verb applies to each element.
  if (Array.isArray(a)) return '[' + a.map((x) => fmtOne(x, spec)).join(' ') + ']';
  if (isMap(a)) return 'map[' + Object.keys(a).sort().map((k) => `${fmtOne(k, spec)}:${fmtOne(a[k], spec)}`).join(' ') + ']';
  const str = typeof a === 'string' ? a : typeof a === 'object' && SAFE_HTML in a ? formatValue(a) : undefined;
  if (str !== undefined) {
    switch (verb) {
      case 'v':
      case 's':
        return spec.prec !== undefined ? [...str].slice(0, spec.prec).join('') : str;
      case 'q':
        return goQuote(str);
      case 'x':
      case 'X': {
        const h = Buffer.from(str, 'utf8').toString('hex');
        return verb === 'X' ? h.toUpperCase() : h;
      }
      default:
        return badVerb(verb, a);
    }
  }
  if (typeof a === 'boolean') return verb === 'v' || verb === 't' ? String(a) : badVerb(verb, a);
  const n = numberOf(a);
  if (n !== undefined && !isFloat(a)) {
    // An int (or a named int: time.Month prints its name with %v and %s).
    if ((verb === 'v' || verb === 's') && typeof a === 'object') return formatValue(a);
    const big = BigInt(n);
    switch (verb) {
      case 'v':
      case 'd':
        return signed(String(big), big, spec);
      case 'x':
      case 'X': {
        const h = (big < 0n ? '-' : '') + (spec.sharp ? '0x' : '') + (big < 0n ? -big : big).toString(16);
        return verb === 'X' ? h.toUpperCase().replace('0X', '0X') : h;
      }
      case 'o':
        return (spec.sharp ? '0' : '') + big.toString(8);
      case 'O':
        return '0o' + big.toString(8);
      case 'b':
        return big.toString(2);
      case 'c':
        return String.fromCodePoint(Number(big));
      case 'q':
        return `'${String.fromCodePoint(Number(big)).replace(/['\\]/g, '\\$&')}'`;
      case 'U':
        return 'U+' + big.toString(16).toUpperCase().padStart(4, '0');
      default:
        return badVerb(verb, a);
    }
  }
  if (n !== undefined) {
    const f = Number(n);
    switch (verb) {
      case 'v':
      case 'g':
        return signed(formatG(f, spec.prec), f, spec);
      case 'G':
        return signed(formatG(f, spec.prec).toUpperCase(), f, spec);
      case 'e':
      case 'E':
        return signed(formatE(f, spec.prec, verb === 'E'), f, spec);
      case 'f':
      case 'F':
        return signed(f.toFixed(spec.prec ?? 6), f, spec);
      default:
        return badVerb(verb, a);
    }
  }
  // Structs and other values print themselves (time.Time's String, template.Alert's fields).
  if (verb === 'v' || verb === 's') return formatValue(a, false);
  if (verb === 'q' && isGoFormattable(a)) return goQuote(formatValue(a));
  return badVerb(verb, a);
}

/** %+v: struct fields with their names. */
function plusV(a: unknown): string {
  if (Array.isArray(a)) return '[' + a.map(plusV).join(' ') + ']';
  if (isMap(a)) return 'map[' + Object.keys(a).sort().map((k) => `${k}:${plusV(a[k])}`).join(' ') + ']';
  if (isStruct(a)) {
    const o = a as Record<string, unknown>;
    return `${GO_POINTER in o ? '&' : ''}{${Object.keys(o).map((k) => `${k}:${plusV(o[k])}`).join(' ')}}`;
  }
  return formatValue(a, false);
}

/** %#v: the value as Go source. */
export function goSyntax(a: unknown): string {
  if (a === null || a === undefined || a === NO_VALUE) return 'interface {}(nil)';
  if (typeof a === 'string') return goQuote(a);
  if (typeof a === 'boolean' || typeof a === 'bigint') return String(a);
  if (typeof a === 'object' && GO_SYNTAX in a) return (a as Record<symbol, () => string>)[GO_SYNTAX]!();
  const n = numberOf(a);
  if (n !== undefined) return isFloat(a) ? formatFloat(Number(n)) : String(n);
  if (typeof a === 'object' && SAFE_HTML in a) return `"${formatValue(a)}"`.replace(/^"(.*)"$/s, (_, x: string) => `template.HTML(${goQuote(x)})`);
  if (Array.isArray(a)) return `${goType(a)}{${a.map(goSyntax).join(', ')}}`;
  if (isMap(a)) return `${goType(a)}{${Object.keys(a).sort().map((k) => `${goQuote(k)}:${goSyntax(a[k])}`).join(', ')}}`;
  if (isStruct(a)) {
    const o = a as Record<string, unknown>;
    return `${GO_POINTER in o ? '&' : ''}${goType(a).replace(/^\*/, '')}{${Object.keys(o).map((k) => `${k}:${goSyntax(o[k])}`).join(', ')}}`;
  }
  return formatValue(a, false);
}

function isStruct(a: unknown): boolean {
  return typeof a === 'object' && a !== null && !Array.isArray(a) && GO_TYPE in a && !isMap(a);
}

/** fmt.Sprintf: verbs v s q d x X o O b c U e E f F g G t T %, flags - + # 0 space, width and precision (also *). */
export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let argi = 0;
  const re = /%([-+# 0]*)(\d+|\*)?(?:\.(\d+|\*)?)?([a-zA-Z%])/g;
  let last = 0;
  for (let m = re.exec(format); m; m = re.exec(format)) {
    out += format.slice(last, m.index);
    last = re.lastIndex;
    const [, flags, w, p, verb] = m as unknown as [string, string, string | undefined, string | undefined, string];
    if (verb === '%') {
      out += '%';
      continue;
    }
    const width = w === '*' ? Number(numberOf(args[argi++]) ?? 0) : w !== undefined ? Number(w) : undefined;
    const prec = p === '*' ? Number(numberOf(args[argi++]) ?? 0) : p !== undefined ? Number(p) : m[0].includes('.') ? 0 : undefined;
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const a = args[argi++];
    const left = flags.includes('-');
    const zero = flags.includes('0') && !left;
    const s = fmtOne(a, { verb, plus: flags.includes('+'), sharp: flags.includes('#'), space: flags.includes(' '), prec });
    const numeric = numberOf(a) !== undefined && typeof a !== 'object';
    out += pad(s, width, left, zero && (numeric || a instanceof GoFloat));
  }
  out += format.slice(last);
  if (argi < args.length) out += '%!(EXTRA ' + args.slice(argi).map((a) => `${goType(a)}=${formatValue(a, false)}`).join(', ') + ')';
  return out;
}

/** The Go type %T prints. */
export function goType(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float64';
  if (typeof v === 'bigint') return 'int64';
  if (v instanceof GoFloat) return 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (v === null || v === undefined || v === NO_VALUE) return '<nil>';
  if (typeof v === 'object' && GO_TYPE in v) return String((v as Record<symbol, unknown>)[GO_TYPE]);
  if (typeof v === 'object' && SAFE_HTML in v) return 'template.HTML';
  if (Array.isArray(v)) return '[]interface {}';
  if (isMap(v)) return 'map[string]interface {}';
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

/** template.JSEscapeString: quotes, <>&=, backslash, control and non-printable characters (U+2028, U+2029) escaped. */
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
    else if (c < 0x20 || (c >= 0x80 && !/^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch))) out += '\\u' + c.toString(16).toUpperCase().padStart(4, '0');
    else out += ch;
  }
  return out;
}

type Kind = 'int' | 'float' | 'string' | 'bool' | 'nil' | 'other';

/** A value's basic kind for eq/lt, and the plain value compared. */
function basic(v: unknown): [Kind, unknown] {
  if (v === null || v === undefined || v === NO_VALUE) return ['nil', null];
  if (typeof v === 'string') return ['string', v];
  if (typeof v === 'boolean') return ['bool', v];
  if (typeof v === 'object' && SAFE_HTML in v) return ['string', formatValue(v)];
  const n = numberOf(v);
  if (n !== undefined) return [isFloat(v) ? 'float' : 'int', Number(n)];
  return ['other', v];
}

function compare(op: string, a0: unknown, b0: unknown): boolean {
  const [ka, a] = basic(a0);
  const [kb, b] = basic(b0);
  if (ka !== kb || ka === 'other' || ka === 'nil') {
    if (op === 'eq' || op === 'ne') {
      const eq = a0 === b0 || (ka === 'nil' && kb === 'nil');
      if (ka !== kb && ka !== 'nil' && kb !== 'nil') throw new TemplateExecError(`error calling ${op}: incompatible types for comparison`);
      return op === 'eq' ? eq : !eq;
    }
    throw new TemplateExecError(`error calling ${op}: ${ka === kb ? 'invalid type for comparison' : 'incompatible types for comparison'}`);
  }
  if (ka === 'bool' && op !== 'eq' && op !== 'ne') throw new TemplateExecError(`error calling ${op}: invalid type for comparison`);
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
  urlquery: (...a) => encodeURIComponent(sprint(a)).replace(/%20/g, '+').replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()),
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
