/**
 * html/template's escapers and filters: the functions the escaper appends to an action's pipeline,
 * one per context (`_html_template_htmlescaper`, ...). Each takes the pipeline's value(s) and
 * returns text safe where it lands. A value of a trusted type (template.HTML, from `safeHtml`) is
 * passed through where that type is safe.
 */
import { formatValue, GO_JSON, isGoFormattable, isMap, NO_VALUE, SAFE_HTML } from '../values.js';
import { TRANSITIONS, DELIM_ENDS, decodeCSS, isJSIdentPart, attrType, type ContentType } from './transition.js';
import { TEXT, isInTag, type Context } from './context.js';

/** What a filter prints instead of a value it refuses. */
export const FAILSAFE = 'ZgotmplZ';

/** The pipeline's values as one string, and their trusted type when there is one value of such a type. */
export function stringify(args: unknown[]): [string, ContentType] {
  if (args.length === 1) {
    const a = args[0];
    if (typeof a === 'string') return [a, 'Plain'];
    if (a && typeof a === 'object' && SAFE_HTML in a) return [formatValue(a), 'HTML'];
  }
  // nil values print nothing (text/template would print <no value>).
  const rest = args.filter((a) => a !== null && a !== undefined && a !== NO_VALUE);
  let out = '';
  rest.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof rest[i - 1] !== 'string') out += ' ';
    out += formatValue(a, false);
  });
  return [out, 'Plain'];
}

type Table = Record<string, string>;

const HTML_TABLE: Table = { '\0': '\ufffd', '"': '&#34;', '&': '&amp;', "'": '&#39;', '+': '&#43;', '<': '&lt;', '>': '&gt;' };
const HTML_NORM_TABLE: Table = { ...HTML_TABLE };
delete HTML_NORM_TABLE['&'];
const NOSPACE_TABLE: Table = {
  '\0': '&#xfffd;', '\t': '&#9;', '\n': '&#10;', '\v': '&#11;', '\f': '&#12;', '\r': '&#13;', ' ': '&#32;', '"': '&#34;', '&': '&amp;',
  "'": '&#39;', '+': '&#43;', '<': '&lt;', '=': '&#61;', '>': '&gt;', '`': '&#96;',
};
const NOSPACE_NORM_TABLE: Table = { ...NOSPACE_TABLE };
delete NOSPACE_NORM_TABLE['&'];

function htmlReplace(s: string, table: Table, badRunes: boolean): string {
  let out = '';
  for (const ch of s) {
    const r = table[ch];
    if (r !== undefined) out += r;
    else if (!badRunes && ch.length === 1 && ((ch >= '\ufdd0' && ch <= '\ufdef') || ch >= '\ufff0')) out += `&#x${ch.charCodeAt(0).toString(16)};`;
    else out += ch;
  }
  return out;
}

/** The text content of an HTML fragment (tags, comments and attribute values dropped). */
export function stripTags(html: string): string {
  let out = '';
  let c: Context = TEXT;
  let i = 0;
  let allText = true;
  while (i !== html.length) {
    if (c.delim === 'None') {
      let st = c.state;
      // Read special elements' content as RCDATA, not as script or style.
      if (c.element !== 'None' && !isInTag(st)) st = 'RCDATA';
      const [d, n] = TRANSITIONS[st](c, html.slice(i));
      const i1 = i + n;
      if (c.state === 'Text' || c.state === 'RCDATA') {
        let j = i1;
        if (d.state !== c.state) {
          for (let j1 = j - 1; j1 >= i; j1--) {
            if (html[j1] === '<') {
              j = j1;
              break;
            }
          }
        }
        out += html.slice(i, j);
      } else allText = false;
      if (n === 0 && d.state === c.state) break;
      c = d;
      i = i1;
      continue;
    }
    let i1 = -1;
    const ends = DELIM_ENDS[c.delim]!;
    for (let k = i; k < html.length; k++) {
      if (ends.includes(html[k]!)) {
        i1 = k;
        break;
      }
    }
    if (i1 === -1) break;
    if (c.delim !== 'SpaceOrTagEnd') i1++;
    c = { ...TEXT, state: 'Tag', element: c.element };
    i = i1;
  }
  if (allText) return html;
  if (c.state === 'Text' || c.state === 'RCDATA') out += html.slice(i);
  return out;
}

export function htmlEscaper(...args: unknown[]): string {
  const [s, t] = stringify(args);
  return t === 'HTML' ? s : htmlReplace(s, HTML_TABLE, true);
}

export function attrEscaper(...args: unknown[]): string {
  const [s, t] = stringify(args);
  return t === 'HTML' ? htmlReplace(stripTags(s), HTML_NORM_TABLE, true) : htmlReplace(s, HTML_TABLE, true);
}

export function rcdataEscaper(...args: unknown[]): string {
  const [s, t] = stringify(args);
  return htmlReplace(s, t === 'HTML' ? HTML_NORM_TABLE : HTML_TABLE, true);
}

export function htmlNospaceEscaper(...args: unknown[]): string {
  const [s, t] = stringify(args);
  return t === 'HTML' ? htmlReplace(stripTags(s), NOSPACE_NORM_TABLE, false) : htmlReplace(s, NOSPACE_TABLE, false);
}

export function commentEscaper(): string {
  return '';
}

/** An attribute or element name: lower-case letters and digits only, and no name with a special meaning. */
export function htmlNameFilter(...args: unknown[]): string {
  let [s] = stringify(args);
  if (s.length === 0) return FAILSAFE;
  s = s.toLowerCase();
  if (attrType(s) !== 'Plain') return FAILSAFE;
  return /^[a-z0-9]+$/.test(s) ? s : FAILSAFE;
}

/** A URL is safe when it has no scheme, or http, https or mailto. */
export function isSafeURL(s: string): boolean {
  const colon = s.indexOf(':');
  if (colon >= 0 && !s.slice(0, colon).includes('/')) return ['http', 'https', 'mailto'].includes(s.slice(0, colon).toLowerCase());
  return true;
}

export function urlFilter(...args: unknown[]): string {
  const [s] = stringify(args);
  return isSafeURL(s) ? s : '#' + FAILSAFE;
}

/** %-encodes what is not allowed in a URL; with `norm`, keeps reserved characters and valid escapes. */
function processURL(s: string, norm: boolean): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if ('!#$&*+,/:;=?@[]'.includes(c) && norm) out += c;
    else if ('-._~'.includes(c) || /[A-Za-z0-9]/.test(c)) out += c;
    else out += '%' + byte.toString(16).padStart(2, '0');
  }
  // Keep existing %XX escapes when normalising.
  if (norm) out = out.replace(/%25([0-9A-Fa-f]{2})/g, '%$1');
  return out;
}

export function urlEscaper(...args: unknown[]): string {
  return processURL(stringify(args)[0], false);
}

export function urlNormalizer(...args: unknown[]): string {
  return processURL(stringify(args)[0], true);
}

const isHTMLSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';

export function srcsetFilterAndEscaper(...args: unknown[]): string {
  const [s] = stringify(args);
  return s
    .split(',')
    .map((el) => {
      let start = 0;
      while (start < el.length && isHTMLSpace(el[start]!)) start++;
      let end = el.length;
      for (let i = start; i < el.length; i++) {
        if (isHTMLSpace(el[i]!)) {
          end = i;
          break;
        }
      }
      const url = el.slice(start, end);
      const metadata = el.slice(end);
      if (isSafeURL(url) && /^[\t\n\f\r A-Za-z0-9]*$/.test(metadata)) return el.slice(0, start) + processURL(url, true) + metadata;
      return '#' + FAILSAFE;
    })
    .join(',');
}

const LOW_UNICODE: string[] = Array.from({ length: 0x20 }, (_, i) => `\\u${i.toString(16).padStart(4, '0')}`);
LOW_UNICODE[8] = '\\b';
LOW_UNICODE[9] = '\\t';
LOW_UNICODE[10] = '\\n';
LOW_UNICODE[12] = '\\f';
LOW_UNICODE[13] = '\\r';

const JS_STR_TABLE: Table = { '"': '\\u0022', '&': '\\u0026', "'": '\\u0027', '+': '\\u002b', '/': '\\/', '<': '\\u003c', '>': '\\u003e', '\\': '\\\\', '`': '\\u0060' };
const JS_REGEXP_TABLE: Table = {
  '"': '\\u0022', $: '\\u0024', '&': '\\u0026', "'": '\\u0027', '(': '\\u0028', ')': '\\u0029', '*': '\\u002a', '+': '\\u002b', '-': '\\u002d',
  '.': '\\u002e', '/': '\\/', '<': '\\u003c', '>': '\\u003e', '?': '\\u003f', '[': '\\u005b', '\\': '\\\\', ']': '\\u005d', '^': '\\u005e',
  '{': '\\u007b', '|': '\\u007c', '}': '\\u007d',
};

function jsReplace(s: string, table: Table): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x20) out += LOW_UNICODE[c];
    else if (table[ch] !== undefined) out += table[ch];
    else if (c === 0x2028) out += '\\u2028';
    else if (c === 0x2029) out += '\\u2029';
    else out += ch;
  }
  return out;
}

export function jsStrEscaper(...args: unknown[]): string {
  return jsReplace(stringify(args)[0], JS_STR_TABLE);
}

export function jsRegexpEscaper(...args: unknown[]): string {
  const s = jsReplace(stringify(args)[0], JS_REGEXP_TABLE);
  return s === '' ? '(?:)' : s;
}

/** encoding/json's string form: <, > and & as \u003c..., U+2028/9 escaped, invalid UTF-16 replaced. */
function jsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) out += '\\u' + c.toString(16).padStart(4, '0');
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return out + '"';
}

/** A number as encoding/json writes it: plain up to 1e21, else 1e+21 / 1e-7. */
function jsonNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`json: unsupported value: ${formatValue(n)}`);
  // JavaScript switches to exponents at the same bounds (1e-6, 1e21) and writes them as Go does (1e-7, 1e+21).
  return String(n);
}

/** encoding/json.Marshal of a template value. */
export function toJSON(v: unknown): string {
  if (v === null || v === undefined || v === NO_VALUE) return 'null';
  if (typeof v === 'string') return jsonString(v);
  if (typeof v === 'number') return jsonNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return '[' + v.map(toJSON).join(',') + ']';
  if (typeof v === 'object') {
    const o = v as Record<string | symbol, unknown>;
    if (typeof o[GO_JSON] === 'function') return (o[GO_JSON] as () => string)();
    if (SAFE_HTML in o) return jsonString(formatValue(v));
    const keys = Object.keys(o);
    if (isMap(v)) keys.sort();
    else if (keys.length === 0 && isGoFormattable(v)) return jsonString(formatValue(v));
    return '{' + keys.map((k) => `${jsonString(k)}:${toJSON(o[k])}`).join(',') + '}';
  }
  return 'null';
}

/** A value as a JavaScript expression (JSON), padded with spaces when it could run into a keyword. */
export function jsValEscaper(...args: unknown[]): string {
  const a = args.length === 1 ? args[0] : stringify(args)[0];
  let b: string;
  try {
    b = toJSON(a);
  } catch (e) {
    // A comment then null, so the script still parses (as Go does).
    return ` /* ${(e as Error).message.replace(/\*\//g, '* /')} */null `;
  }
  if (b.length === 0) return ' null ';
  const first = b[0];
  const last = b[b.length - 1];
  const pad = isJSIdentPart(first) || isJSIdentPart(last);
  return pad ? ` ${b} ` : b;
}

const CSS_TABLE: Table = {
  '\0': '\\0', '\t': '\\9', '\n': '\\a', '\f': '\\c', '\r': '\\d', '"': '\\22', '&': '\\26', "'": '\\27', '(': '\\28', ')': '\\29',
  '+': '\\2b', '/': '\\2f', ':': '\\3a', ';': '\\3b', '<': '\\3c', '>': '\\3e', '\\': '\\\\', '{': '\\7b', '}': '\\7d',
};

export function cssEscaper(...args: unknown[]): string {
  const [s] = stringify(args);
  let out = '';
  const chars = [...s];
  chars.forEach((ch, i) => {
    const r = CSS_TABLE[ch];
    if (r === undefined) {
      out += ch;
      return;
    }
    out += r;
    const next = chars[i + 1];
    // A hex escape ends at a space when the next character could continue it.
    if (r !== '\\\\' && (next === undefined || /^[0-9A-Fa-f \t\n\f\r]$/.test(next))) out += ' ';
  });
  return out;
}

/** A CSS value: no quotes, brackets, comments or escapes that could end it, no expression() or -moz-binding. */
export function cssValueFilter(...args: unknown[]): string {
  const [s] = stringify(args);
  const b = decodeCSS(s);
  let id = '';
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if ('\0"\'()/;@[\\]`{}'.includes(c)) return FAILSAFE;
    if (c === '-' && i !== 0 && b[i - 1] === '-') return FAILSAFE;
    if (/[A-Za-z0-9_-]/.test(c)) id += c;
  }
  id = id.toLowerCase();
  if (id.includes('expression') || id.includes('mozbinding')) return FAILSAFE;
  return b;
}

/** `{{ html .X }}`'s arguments, evaluated, for the html that follows it in the pipeline. */
export function evalArgs(...args: unknown[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(a, false);
  });
  return out;
}

export const ESCAPERS: Record<string, (...args: unknown[]) => string> = {
  _html_template_attrescaper: attrEscaper,
  _html_template_commentescaper: commentEscaper,
  _html_template_cssescaper: cssEscaper,
  _html_template_cssvaluefilter: cssValueFilter,
  _html_template_htmlnamefilter: htmlNameFilter,
  _html_template_htmlescaper: htmlEscaper,
  _html_template_jsregexpescaper: jsRegexpEscaper,
  _html_template_jsstrescaper: jsStrEscaper,
  _html_template_jsvalescaper: jsValEscaper,
  _html_template_nospaceescaper: htmlNospaceEscaper,
  _html_template_rcdataescaper: rcdataEscaper,
  _html_template_srcsetescaper: srcsetFilterAndEscaper,
  _html_template_urlescaper: urlEscaper,
  _html_template_urlfilter: urlFilter,
  _html_template_urlnormalizer: urlNormalizer,
  _eval_args_: evalArgs,
};
