/**
 * Go text/template, lexing: the text splits into text runs and actions `{{ ... }}` (with the
 * `{{- ` / ` -}}` trim markers, which eat the white space next to them, and `{{/* comments *\/}}`);
 * an action splits into tokens.
 */
import { GoFloat } from './values.js';

export type Token =
  | { t: 'field'; names: string[] } // .A.B (names empty for a lone dot)
  | { t: 'var'; name: string; names: string[] } // $x.A.B ($ alone: name '$')
  | { t: 'ident'; name: string } // a function name or keyword
  | { t: 'string'; value: string }
  | { t: 'number'; value: number | bigint | GoFloat; int: boolean }
  | { t: 'bool'; value: boolean }
  | { t: 'nil' }
  | { t: 'char'; value: number }
  | { t: 'pipe' }
  | { t: 'lparen' }
  | { t: 'rparen' }
  | { t: 'declare' } // :=
  | { t: 'assign' } // =
  | { t: 'comma' }
  | { t: 'chainfield'; names: string[] }; // (x).A.B after a parenthesised term

export type Piece = { kind: 'text'; text: string } | { kind: 'action'; tokens: Token[]; line: number; src: string } | { kind: 'comment' };

export class TemplateSyntaxError extends Error {}

const SPACE = /[ \t\r\n]/;

/** Split a template into text and actions, applying trim markers. */
export function lex(name: string, src: string): Piece[] {
  const out: Piece[] = [];
  let i = 0;
  let line = 1;
  let trimNext = false;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    let text = open === -1 ? src.slice(i) : src.slice(i, open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, '');
    trimNext = false;
    if (open === -1) {
      if (text) out.push({ kind: 'text', text });
      break;
    }
    let p = open + 2;
    // `{{- ` trims the white space before the action.
    if (src[p] === '-' && SPACE.test(src[p + 1] ?? '')) {
      text = text.replace(/[ \t\r\n]+$/, '');
      p += 2;
    }
    if (text) out.push({ kind: 'text', text });
    line += countLines(src.slice(i, open));
    // Find the closing `}}` outside strings and comments.
    const body = scanAction(name, src, p, line);
    let end = body.end;
    let inner = src.slice(p, end);
    if (inner.endsWith(' -') || inner.endsWith('\t-') || inner.endsWith('\n-') || inner.endsWith('\r-')) {
      inner = inner.slice(0, -1);
      trimNext = true;
    }
    end += 2;
    const trimmed = inner.trim();
    if (trimmed.startsWith('/*')) {
      if (!trimmed.endsWith('*/')) throw new TemplateSyntaxError(`template: ${name}:${line}: unclosed comment`);
      out.push({ kind: 'comment' });
    } else {
      out.push({ kind: 'action', tokens: tokenize(name, inner, line), line, src: `{{${trimmed}}}` });
    }
    line += countLines(src.slice(open, end));
    i = end;
  }
  return out;
}

function countLines(s: string): number {
  let n = 0;
  for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) === 10) n++;
  return n;
}

function scanAction(name: string, src: string, p: number, line: number): { end: number } {
  let k = p;
  while (k < src.length) {
    const c = src[k]!;
    if (c === '"' || c === "'") {
      k++;
      while (k < src.length && src[k] !== c) {
        if (src[k] === '\\') k++;
        if (src[k] === '\n') throw new TemplateSyntaxError(`template: ${name}:${line}: unterminated quoted string`);
        k++;
      }
      if (k >= src.length) throw new TemplateSyntaxError(`template: ${name}:${line}: unterminated quoted string`);
      k++;
    } else if (c === '`') {
      const close = src.indexOf('`', k + 1);
      if (close === -1) throw new TemplateSyntaxError(`template: ${name}:${line}: unterminated raw quoted string`);
      k = close + 1;
    } else if (c === '/' && src[k + 1] === '*') {
      const close = src.indexOf('*/', k + 2);
      if (close === -1) throw new TemplateSyntaxError(`template: ${name}:${line}: unclosed comment`);
      k = close + 2;
    } else if (c === '}' && src[k + 1] === '}') {
      return { end: k };
    } else k++;
  }
  throw new TemplateSyntaxError(`template: ${name}:${line}: unclosed action`);
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*/;

function tokenize(name: string, s: string, line: number): Token[] {
  const out: Token[] = [];
  let i = 0;
  const fail = (m: string): never => {
    throw new TemplateSyntaxError(`template: ${name}:${line}: ${m}`);
  };
  const names = (): string[] => {
    const list: string[] = [];
    while (s[i] === '.') {
      const m = IDENT.exec(s.slice(i + 1));
      if (!m) break;
      list.push(m[0]);
      i += 1 + m[0].length;
    }
    return list;
  };
  while (i < s.length) {
    const c = s[i]!;
    if (SPACE.test(c)) {
      i++;
      continue;
    }
    if (c === '|') {
      out.push({ t: 'pipe' });
      i++;
    } else if (c === '(') {
      out.push({ t: 'lparen' });
      i++;
    } else if (c === ')') {
      out.push({ t: 'rparen' });
      i++;
      if (s[i] === '.' && IDENT.test(s.slice(i + 1))) out.push({ t: 'chainfield', names: names() });
    } else if (c === ',') {
      out.push({ t: 'comma' });
      i++;
    } else if (c === ':' && s[i + 1] === '=') {
      out.push({ t: 'declare' });
      i += 2;
    } else if (c === '=') {
      out.push({ t: 'assign' });
      i++;
    } else if (c === '.' && !/[0-9]/.test(s[i + 1] ?? '')) {
      if (IDENT.test(s.slice(i + 1))) out.push({ t: 'field', names: names() });
      else {
        out.push({ t: 'field', names: [] });
        i++;
      }
    } else if (c === '$') {
      const m = IDENT.exec(s.slice(i + 1));
      const v = m ? '$' + m[0] : '$';
      i += v.length;
      out.push({ t: 'var', name: v, names: names() });
    } else if (c === '"') {
      let k = i + 1;
      while (k < s.length && s[k] !== '"') k += s[k] === '\\' ? 2 : 1;
      out.push({ t: 'string', value: unquote(s.slice(i, k + 1), fail) });
      i = k + 1;
    } else if (c === '`') {
      const k = s.indexOf('`', i + 1);
      out.push({ t: 'string', value: s.slice(i + 1, k) });
      i = k + 1;
    } else if (c === "'") {
      let k = i + 1;
      while (k < s.length && s[k] !== "'") k += s[k] === '\\' ? 2 : 1;
      const v = unquote('"' + s.slice(i + 1, k).replace(/"/g, '\\"') + '"', fail);
      out.push({ t: 'char', value: v.codePointAt(0) ?? 0 });
      i = k + 1;
    } else if (/[0-9+\-.]/.test(c)) {
      const [end, ok] = scanNumber(s, i);
      const text = s.slice(i, end);
      if (!ok) fail(`bad number syntax: ${goQuote(text)}`);
      const n = goNumber(text);
      if (typeof n === 'string') fail(n);
      out.push({ t: 'number', value: (n as { value: number | bigint | GoFloat }).value, int: (n as { int: boolean }).int });
      i = end;
    } else {
      const m = IDENT.exec(s.slice(i));
      if (!m) fail(`unexpected ${JSON.stringify(c)} in command`);
      const word = m![0];
      i += word.length;
      if (word === 'true' || word === 'false') out.push({ t: 'bool', value: word === 'true' });
      else if (word === 'nil') out.push({ t: 'nil' });
      else out.push({ t: 'ident', name: word });
    }
  }
  return out;
}

/** strconv.Unquote for a double-quoted Go string. */
function unquote(q: string, fail: (m: string) => never): string {
  try {
    // Go's escapes are JSON's plus \a \v \x.. \NNN \U........ ; translate those first.
    const js = q.replace(/\\(a|v|x[0-9a-fA-F]{2}|[0-7]{3}|U[0-9a-fA-F]{8}|')/g, (_, e: string) => {
      if (e === 'a') return '\\u0007';
      if (e === 'v') return '\\u000b';
      if (e === "'") return "'";
      if (e[0] === 'x') return '\\u00' + e.slice(1);
      if (e[0] === 'U') {
        const cp = parseInt(e.slice(1), 16);
        return JSON.stringify(String.fromCodePoint(cp)).slice(1, -1);
      }
      return '\\u' + parseInt(e, 8).toString(16).padStart(4, '0');
    });
    // Raw control characters are allowed in a Go string (JSON wants them escaped).
    return JSON.parse(js.replace(/[\u0000-\u001f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))) as string;
  } catch {
    return fail(`malformed string ${q}`);
  }
}

function acceptRun(s: string, i: number, chars: string): number {
  while (i < s.length && chars.includes(s[i]!)) i++;
  return i;
}

/** Go's lexer: the extent of a number, and false when a letter or digit runs into it ("1x"). */
function scanNumber(s: string, i: number): [number, boolean] {
  if (s[i] === '+' || s[i] === '-') i++;
  let digits = '0123456789_';
  if (s[i] === '0') {
    i++;
    if (s[i] === 'x' || s[i] === 'X') {
      i++;
      digits = '0123456789abcdefABCDEF_';
    } else if (s[i] === 'o' || s[i] === 'O') {
      i++;
      digits = '01234567_';
    } else if (s[i] === 'b' || s[i] === 'B') {
      i++;
      digits = '01_';
    }
  }
  i = acceptRun(s, i, digits);
  if (s[i] === '.') i = acceptRun(s, i + 1, digits);
  if (digits.length === 11 && (s[i] === 'e' || s[i] === 'E')) {
    i++;
    if (s[i] === '+' || s[i] === '-') i++;
    i = acceptRun(s, i, '0123456789_');
  }
  if (digits.length === 23 && (s[i] === 'p' || s[i] === 'P')) {
    i++;
    if (s[i] === '+' || s[i] === '-') i++;
    i = acceptRun(s, i, '0123456789_');
  }
  if (s[i] === 'i') i++;
  if (i < s.length && /[\p{L}\p{N}_]/u.test(s[i]!)) return [i + 1, false];
  return [i, true];
}

/** Go's number constant: an int when it parses as one (any base), else a float; Go's errors otherwise. */
function goNumber(text: string): { value: number | bigint | GoFloat; int: boolean } | string {
  const sign = text[0] === '-' ? -1 : 1;
  const body = text.replace(/^[+-]/, '');
  // Underscores only between digits (or after a base prefix).
  const clean = /(^_|__|_$|\._|_\.)/.test(body.replace(/^0[xXbBoO]_/, '0x')) ? undefined : body.replace(/_/g, '');
  if (clean !== undefined) {
    let big: bigint | undefined;
    if (/^0[xX][0-9a-fA-F]+$/.test(clean) || /^0[bB][01]+$/.test(clean) || /^0[oO][0-7]+$/.test(clean)) big = BigInt(clean.toLowerCase());
    else if (/^0[0-7]*$/.test(clean)) big = BigInt('0o' + (clean.slice(1) || '0'));
    else if (/^[1-9][0-9]*$/.test(clean)) big = BigInt(clean);
    if (big !== undefined) {
      if (big > 18446744073709551615n) return `integer overflow: ${goQuote(text)}`;
      // Past 2^53 an int stays exact as a bigint (9223372036854775807 prints as it is written).
      return { value: big > 9007199254740991n ? BigInt(sign) * big : sign * Number(big), int: true };
    }
    // A hexadecimal float (0x1p-2): mantissa times a power of two.
    const hex = /^0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)$/.exec(clean);
    if (hex && (hex[1] || hex[2])) {
      const frac = hex[2] ?? '';
      const f = sign * Number(BigInt('0x' + (hex[1]! + frac || '0'))) * 2 ** (Number(hex[3]) - 4 * frac.length);
      return { value: Number.isInteger(f) ? new GoFloat(f) : f, int: false };
    }
    if (/^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(clean)) {
      // A float that looks like an integer ("08") is an integer too big (or bad) for Go.
      if (!/[.eE]/.test(clean)) return `integer overflow: ${goQuote(text)}`;
      const f = sign * Number(clean);
      // A whole float stays a float64 (it prints as one: 1e+06).
      return { value: Number.isInteger(f) ? new GoFloat(f) : f, int: false };
    }
  }
  return `illegal number syntax: ${goQuote(text)}`;
}

/** %q of a short ASCII text. */
function goQuote(s: string): string {
  return JSON.stringify(s);
}
