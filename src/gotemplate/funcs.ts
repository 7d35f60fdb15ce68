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

/** The number of runes fmt counts a width in (a code point each, not a UTF-16 unit). */
function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    n++;
  }
  return n;
}

function pad(s: string, width: number | undefined, left: boolean, zero: boolean, numeric = true): string {
  if (width === undefined) return s;
  const n = runeCount(s);
  if (n >= width) return s;
  if (left) return s + ' '.repeat(width - n);
  if (zero) {
    // Zeros after a number's sign; a string's padding is all zeros before it (fmt.padString).
    const sign = numeric && /^[+-]/.test(s) ? s[0] : '';
    return sign + '0'.repeat(width - n) + s.slice(sign.length);
  }
  return ' '.repeat(width - n) + s;
}

/** The pieces of one fmt verb. */
interface Spec {
  verb: string;
  plus: boolean;
  sharp: boolean;
  space: boolean;
  prec: number | undefined;
  width?: number | undefined;
  minus?: boolean;
  zero?: boolean;
  /** Inside `%!verb(...)`: the value printed with %v and the verb's flags (fmt.badVerb), not %+v/%#v. */
  erroring?: boolean;
}

/** `%!d(string=s)`: what fmt prints for a verb the operand's type does not take (already padded: the flags apply to the value inside). */
class BadVerb {
  constructor(readonly text: string) {}
}

function badVerb(verb: string, a: unknown, spec: Spec): BadVerb {
  if (a === null || a === undefined || a === NO_VALUE) return new BadVerb(`%!${verb}(<nil>)`);
  return new BadVerb(`%!${verb}(${goType(a)}=${fmtOne(a, { ...spec, verb: 'v', sharp: false, erroring: true })})`);
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
  // (an exact tie rounds to even: the even digit kept never carries into the exponent)
  const [m, e] = n.toExponential(p - 1).split('e');
  const exp = Number(e);
  const trim = (x: string) => (x.includes('.') ? x.replace(/0+$/, '').replace(/\.$/, '') : x);
  if (exp < -4 || exp >= p) return `${trim(expEven(n, p - 1, m!))}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return trim(toFixedEven(n, Math.max(0, p - 1 - exp)));
}

/** toExponential's mantissa with an exact tie rounded to even (as toFixedEven). */
function expEven(n: number, prec: number, mant: string): string {
  if (!Number.isFinite(n) || n === 0 || prec >= 99) return mant;
  const exact = Math.abs(n).toPrecision(100).replace(/e.*$/, '');
  const digits = exact.replace('.', '').replace(/^0+/, '');
  const rest = digits.slice(prec + 1);
  if (!/^50*$/.test(rest)) return mant;
  const kept = digits.slice(0, prec + 1);
  if ((kept.charCodeAt(kept.length - 1) - 0x30) % 2 === 1) return mant;
  return (n < 0 ? '-' : '') + kept[0] + (prec > 0 ? '.' + kept.slice(1) : '');
}

function formatE(n: number, prec: number | undefined, upper: boolean): string {
  const [mant, exp] = n.toExponential(prec ?? 6).split('e');
  const ev = Number(exp);
  const out = `${expEven(n, prec ?? 6, mant!)}e${ev < 0 ? '-' : '+'}${String(Math.abs(ev)).padStart(2, '0')}`;
  return upper ? out.toUpperCase() : out;
}

/** An int as a rune: U+FFFD when it is not a valid code point (a surrogate, negative, too big). */
function runeOf(n: bigint): string {
  return n < 0n || n > 0x10ffffn || (n >= 0xd800n && n <= 0xdfffn) ? '\ufffd' : String.fromCodePoint(Number(n));
}

/** strconv.QuoteToASCII (%+q). */
function asciiQuote(s: string): string {
  return goQuote(s).replace(/[^\x00-\x7f]/gu, (ch) => {
    const c = ch.codePointAt(0)!;
    return c > 0xffff ? '\\U' + c.toString(16).padStart(8, '0') : '\\u' + c.toString(16).padStart(4, '0');
  });
}

/**
 * toFixed as strconv rounds: to the nearest, an exact tie to even (JavaScript's toFixed rounds a
 * tie up: 2.5 → 3 where Go prints 2).
 */
export function toFixedEven(f: number, prec: number): string {
  const s = f.toFixed(prec);
  if (!Number.isFinite(f) || Math.abs(f) >= 1e21 || prec >= 100) return s;
  // The exact decimal expansion (a float64's is finite): a tie has 5 then only zeros past prec.
  const exact = Math.abs(f).toFixed(100);
  const dot = exact.indexOf('.');
  const rest = exact.slice(dot + 1 + prec);
  if (!/^50*$/.test(rest)) return s;
  const kept = exact.slice(0, dot + 1 + prec).replace(/\.$/, '');
  const last = kept.charCodeAt(kept.length - 1) - 0x30;
  if (last % 2 === 1) return s;
  return (f < 0 ? '-' : '') + kept;
}

/** %x of a float64: strconv.FormatFloat(f, 'x', prec, 64), `0x1.8p+00`. */
function hexFloat(f: number, prec: number | undefined): string {
  if (!Number.isFinite(f)) return formatFloat(f);
  const sign = f < 0 || Object.is(f, -0) ? '-' : '';
  let a = Math.abs(f);
  if (a === 0) return `${sign}0x0${prec ? '.' + '0'.repeat(prec) : ''}p+00`;
  let e = Math.floor(Math.log2(a));
  if (a / 2 ** e >= 2) e++;
  if (a / 2 ** e < 1) e--;
  let m = a / 2 ** e - 1;
  let hex = '';
  for (let k = 0; k < 13 && m > 0; k++) {
    m *= 16;
    const d = Math.floor(m);
    hex += d.toString(16);
    m -= d;
  }
  if (prec !== undefined) hex = hex.slice(0, prec).padEnd(prec, '0');
  a = e;
  return `${sign}0x1${hex ? '.' + hex : ''}p${a < 0 ? '-' : '+'}${String(Math.abs(a)).padStart(2, '0')}`;
}

/** One operand under one verb, as fmt prints it, padded to the width: a slice's or a map's elements each (fmt.printValue). */
function fmtOne(a: unknown, spec: Spec): string {
  const whole = spec.verb === 'T' || (spec.verb === 'v' && (spec.sharp || spec.plus) && !spec.erroring) || a === null || a === undefined || a === NO_VALUE;
  if (!whole && Array.isArray(a)) return '[' + a.map((x) => fmtOne(x, spec)).join(' ') + ']';
  if (!whole && isMap(a)) return 'map[' + Object.keys(a).sort().map((k) => `${fmtOne(k, spec)}:${fmtOne(a[k], spec)}`).join(' ') + ']';
  const s = fmtRaw(a, spec);
  if (s instanceof BadVerb) return s.text;
  const numeric = numberOf(a) !== undefined && typeof a !== 'object';
  // The 0 flag pads with zeros, but an integer with a precision pads with spaces (fmt.fmtInteger).
  const zeroPad = !!spec.zero && !(numeric && !isFloat(a) && spec.prec !== undefined);
  return pad(s, spec.width, !!spec.minus, zeroPad, numeric || a instanceof GoFloat);
}

function fmtRaw(a: unknown, spec: Spec): string | BadVerb {
  const { verb } = spec;
  if (verb === 'T') return goType(a);
  if (verb === 'v' && spec.sharp && !spec.erroring) return goSyntax(a);
  if (verb === 'v' && spec.plus && !spec.erroring) return plusV(a);
  if (a === null || a === undefined || a === NO_VALUE) return verb === 'v' ? '<nil>' : badVerb(verb, a, spec);
  const str = typeof a === 'string' ? a : typeof a === 'object' && SAFE_HTML in a ? formatValue(a) : undefined;
  if (str !== undefined) {
    // A precision cuts the string (in runes) before %s and %q print it.
    const cut = spec.prec !== undefined ? [...str].slice(0, spec.prec).join('') : str;
    switch (verb) {
      case 'v':
      case 's':
        return cut;
      case 'q':
        // %#q: backquoted when it can be; %+q: ASCII only.
        if (spec.sharp && !/[`\u0000-\u0008\u000a-\u001f\u007f\ufeff]/.test(cut)) return '`' + cut + '`';
        return spec.plus ? asciiQuote(cut) : goQuote(cut);
      case 'x':
      case 'X': {
        // % x: a space between bytes; %#x: 0x before each (or once without the space).
        // (a precision is the number of input bytes)
        const bytes = [...Buffer.from(str, 'utf8').subarray(0, spec.prec)].map((b) => b.toString(16).padStart(2, '0'));
        const pre = spec.sharp ? '0x' : '';
        const h = spec.space ? bytes.map((b) => pre + b).join(' ') : pre + bytes.join('');
        return verb === 'X' ? h.toUpperCase() : h;
      }
      default:
        return badVerb(verb, a, spec);
    }
  }
  if (typeof a === 'boolean') return verb === 'v' || verb === 't' ? String(a) : badVerb(verb, a, spec);
  const n = numberOf(a);
  if (n !== undefined && !isFloat(a)) {
    // An int (or a named int: time.Month prints its name, a Stringer's, with %v %s %q %x %X).
    if ('vsqxX'.includes(verb) && typeof a === 'object') return fmtRaw(formatValue(a), spec);
    const big = BigInt(n);
    const abs = big < 0n ? -big : big;
    const neg = big < 0n ? '-' : '';
    // A precision is the least number of digits (fmt.fmtInteger; 0 prints nothing for 0).
    const digits = (base: number) => (spec.prec === 0 && big === 0n ? '' : abs.toString(base).padStart(spec.prec ?? 0, '0'));
    switch (verb) {
      case 'v':
      case 'd':
        return signed(neg + digits(10), big, spec);
      case 'x':
      case 'X': {
        const h = neg + (spec.sharp ? '0x' : '') + digits(16);
        return verb === 'X' ? h.toUpperCase() : h;
      }
      case 'o': {
        const d = digits(8);
        return neg + (spec.sharp && d[0] !== '0' ? '0' : '') + d;
      }
      case 'O':
        return neg + '0o' + digits(8);
      case 'b':
        return neg + (spec.sharp ? '0b' : '') + digits(2);
      case 'c':
        return runeOf(big);
      case 'q': {
        // strconv.QuoteRune: escapes as %q of a string has them, ' escaped and " not.
        const ch = runeOf(big);
        return `'${ch === '"' ? '"' : ch === "'" ? "\\'" : goQuote(ch).slice(1, -1)}'`;
      }
      case 'U': {
        const u = 'U+' + big.toString(16).toUpperCase().padStart(4, '0');
        return spec.sharp ? `${u} '${String.fromCodePoint(Number(big))}'` : u;
      }
      default:
        return badVerb(verb, a, spec);
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
        return signed(toFixedEven(f, spec.prec ?? 6), f, spec);
      case 'x':
      case 'X': {
        const h = hexFloat(f, spec.prec);
        return signed(verb === 'X' ? h.toUpperCase() : h, f, spec);
      }
      default:
        return badVerb(verb, a, spec);
    }
  }
  // Structs and other values print themselves (time.Time's String, template.Alert's fields).
  if (verb === 'v' || verb === 's') return formatValue(a, false);
  if (verb === 'q' && isGoFormattable(a)) return goQuote(formatValue(a));
  return badVerb(verb, a, spec);
}

/** %+v: struct fields with their names. */
function plusV(a: unknown): string {
  if (Array.isArray(a)) return '[' + a.map(plusV).join(' ') + ']';
  if (isMap(a)) return 'map[' + Object.keys(a).sort().map((k) => `${k}:${plusV(a[k])}`).join(' ') + ']';
  // (a struct without fields of its own prints itself: time.Time's String)
  if (isStruct(a) && Object.keys(a as object).length > 0) {
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

/** fmt.Sprintf: verbs v s q d x X o O b c U e E f F g G t T %, flags - + # 0 space, width and precision (also * and [n] argument indexes), as fmt.doPrintf reads them. */
export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let argNum = 0;
  let reordered = false;
  const end = format.length;
  const num = (i: number, stop: number): [number | undefined, number] => {
    let n: number | undefined;
    while (i < stop && format.charCodeAt(i) >= 0x30 && format.charCodeAt(i) <= 0x39) {
      n = (n ?? 0) * 10 + format.charCodeAt(i) - 0x30;
      if (n > 1e6) return [undefined, stop];
      i++;
    }
    return [n, i];
  };
  let goodArgNum = true;
  /** `[n]` at i: [argNum, i, found]. */
  const argNumber = (i: number): [number, number, boolean] => {
    if (format[i] !== '[') return [argNum, i, false];
    reordered = true;
    let k = i + 1;
    while (k < end && format[k] !== ']') k++;
    if (end - i < 3 || k >= end) {
      goodArgNum = false;
      return [argNum, i + 1, false];
    }
    const [n, ni] = num(i + 1, k);
    if (n === undefined || ni !== k) {
      goodArgNum = false;
      return [argNum, k + 1, false];
    }
    if (n - 1 >= 0 && n - 1 < args.length) return [n - 1, k + 1, true];
    goodArgNum = false;
    return [argNum, k + 1, true];
  };
  const intFromArg = (): [number | undefined] => {
    if (argNum >= args.length) return [undefined];
    const a = args[argNum++];
    const n = numberOf(a);
    if (n === undefined || isFloat(a) || Number(n) > 1e6 || Number(n) < -1e6) return [undefined];
    return [Number(n)];
  };
  let i = 0;
  while (i < end) {
    goodArgNum = true;
    const lit = format.indexOf('%', i);
    if (lit < 0) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, lit);
    i = lit + 1;
    let [plus, sharp, space, minus, zero] = [false, false, false, false, false];
    for (; i < end; i++) {
      const c = format[i];
      if (c === '#') sharp = true;
      else if (c === '0') zero = !minus;
      else if (c === '+') plus = true;
      else if (c === '-') [minus, zero] = [true, false];
      else if (c === ' ') space = true;
      else break;
    }
    let afterIndex: boolean;
    [argNum, i, afterIndex] = argNumber(i);
    let width: number | undefined;
    if (format[i] === '*') {
      i++;
      [width] = intFromArg();
      if (width === undefined) out += '%!(BADWIDTH)';
      else if (width < 0) [width, minus, zero] = [-width, true, false];
      afterIndex = false;
    } else {
      [width, i] = num(i, end);
      if (afterIndex && width !== undefined) goodArgNum = false;
    }
    let prec: number | undefined;
    if (i + 1 < end && format[i] === '.') {
      i++;
      if (afterIndex) goodArgNum = false;
      [argNum, i, afterIndex] = argNumber(i);
      if (format[i] === '*') {
        i++;
        [prec] = intFromArg();
        if (prec !== undefined && prec < 0) prec = undefined;
        if (prec === undefined) out += '%!(BADPREC)';
        afterIndex = false;
      } else [prec, i] = num(i, end), (prec ??= 0);
    }
    if (!afterIndex) [argNum, i, afterIndex] = argNumber(i);
    if (i >= end) {
      out += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (verb === '%') out += '%';
    else if (!goodArgNum) out += `%!${verb}(BADINDEX)`;
    else if (argNum >= args.length) out += `%!${verb}(MISSING)`;
    else {
      const a = args[argNum++];
      out += fmtOne(a, { verb, plus, sharp, space, prec, width, minus, zero });
    }
  }
  if (!reordered && argNum < args.length) out += '%!(EXTRA ' + args.slice(argNum).map((a) => `${goType(a)}=${formatValue(a, false)}`).join(', ') + ')';
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

/** How many arguments each builtin takes (Go's func signatures): [least, most]. */
export const BUILTIN_ARITY: Record<string, [number, number]> = {
  and: [1, Infinity],
  or: [1, Infinity],
  not: [1, 1],
  len: [1, 1],
  index: [1, Infinity],
  slice: [1, Infinity],
  printf: [1, Infinity],
  eq: [1, Infinity],
  ne: [2, 2],
  lt: [2, 2],
  le: [2, 2],
  gt: [2, 2],
  ge: [2, 2],
  call: [1, Infinity],
};

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
      } else if (isMap(v) && typeof k !== 'string') throw new TemplateExecError(`error calling index: value has type ${goType(k)}; should be string`);
      else if (isMap(v)) v = Object.prototype.hasOwnProperty.call(v, String(k)) ? v[String(k)] : MAP_ZERO in v ? (v as Record<symbol, unknown>)[MAP_ZERO] : NO_VALUE;
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
