/**
 * How a run of a template's literal text moves the HTML context (html/template's transition
 * functions): each takes the context and the text and returns the new context and how much of the
 * text it consumed. Only ASCII characters carry structure, so working on UTF-16 indexes is exact.
 */
import { ctx, errorCtx, type Attr, type Context, type Element, type JsCtx, type State } from './context.js';

const ELEMENTS: Record<string, Element> = { script: 'Script', style: 'Style', textarea: 'Textarea', title: 'Title' };
const ELEMENT_CONTENT: Record<Element, State> = { None: 'Text', Script: 'JS', Style: 'CSS', Textarea: 'RCDATA', Title: 'RCDATA' };
const ATTR_START: Record<Attr, State> = { None: 'Attr', Script: 'JS', ScriptType: 'Attr', Style: 'CSS', URL: 'URL', Srcset: 'Srcset' };
const END_MARKERS: Record<Element, string> = { None: '', Script: 'script', Style: 'style', Textarea: 'textarea', Title: 'title' };
export const DELIM_ENDS: Record<string, string> = { DoubleQuote: '"', SingleQuote: "'", SpaceOrTagEnd: ' \t\n\f\r>' };

export type ContentType = 'Plain' | 'CSS' | 'HTML' | 'HTMLAttr' | 'JS' | 'JSStr' | 'URL' | 'Srcset' | 'Unsafe';

/** The attributes whose values are not plain text (everything else named here is plain). */
const ATTR_TYPES: Record<string, ContentType> = {
  'accept-charset': 'Unsafe', async: 'Unsafe', challenge: 'Unsafe', charset: 'Unsafe', content: 'Unsafe', crossorigin: 'Unsafe',
  defer: 'Unsafe', enctype: 'Unsafe', form: 'Unsafe', formenctype: 'Unsafe', formmethod: 'Unsafe', formnovalidate: 'Unsafe',
  'http-equiv': 'Unsafe', keytype: 'Unsafe', language: 'Unsafe', method: 'Unsafe', novalidate: 'Unsafe', pattern: 'Unsafe',
  rel: 'Unsafe', sandbox: 'Unsafe', type: 'Unsafe', value: 'Unsafe',
  action: 'URL', archive: 'URL', background: 'URL', cite: 'URL', classid: 'URL', codebase: 'URL', data: 'URL', formaction: 'URL',
  href: 'URL', icon: 'URL', longdesc: 'URL', manifest: 'URL', poster: 'URL', profile: 'URL', src: 'URL', usemap: 'URL', xmlns: 'URL',
  srcdoc: 'HTML', srcset: 'Srcset', style: 'CSS',
};
/** Attribute names html/template knows to be plain (so the on/src/uri/url heuristics do not apply). */
const PLAIN_ATTRS = new Set(
  ('accept alt autocomplete autofocus autoplay border checked class cols colspan contenteditable contextmenu controls coords datetime ' +
    'default dir dirname disabled draggable dropzone for formtarget headers height hidden high hreflang id ismap kind label lang list ' +
    'loop low max maxlength media mediagroup min multiple name open optimum placeholder preload pubdate radiogroup readonly required ' +
    'reversed rows rowspan spellcheck scope scoped seamless selected shape size sizes span srclang start step tabindex target title width wrap').split(' '),
);

/** A conservative guess at what a (lower-case) attribute's value holds. */
export function attrType(name: string): ContentType {
  if (name.startsWith('data-')) name = name.slice(5);
  else if (name.includes(':')) {
    const [prefix, short] = [name.slice(0, name.indexOf(':')), name.slice(name.indexOf(':') + 1)];
    if (prefix === 'xmlns') return 'URL';
    name = short;
  }
  if (ATTR_TYPES[name]) return ATTR_TYPES[name]!;
  if (PLAIN_ATTRS.has(name)) return 'Plain';
  if (name.startsWith('on')) return 'JS';
  if (name.includes('src') || name.includes('uri') || name.includes('url')) return 'URL';
  return 'Plain';
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r';
const isAlpha = (c: string | undefined) => c !== undefined && /^[A-Za-z]$/.test(c);
const isAlnum = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9]$/.test(c);

function eatWhiteSpace(s: string, i: number): number {
  while (i < s.length && isSpace(s[i])) i++;
  return i;
}

function indexAny(s: string, chars: string, from = 0): number {
  for (let i = from; i < s.length; i++) if (chars.includes(s[i]!)) return i;
  return -1;
}

function eatTagName(s: string, i: number): [number, Element] {
  if (i === s.length || !isAlpha(s[i])) return [i, 'None'];
  let j = i + 1;
  while (j < s.length) {
    const x = s[j]!;
    if (isAlnum(x)) {
      j++;
      continue;
    }
    // "x-y" and "x:y", but not "x-", "-y" or "x--y".
    if ((x === ':' || x === '-') && j + 1 < s.length && isAlnum(s[j + 1])) {
      j += 2;
      continue;
    }
    break;
  }
  return [j, ELEMENTS[s.slice(i, j).toLowerCase()] ?? 'None'];
}

function eatAttrName(s: string, i: number): number | Context {
  for (let j = i; j < s.length; j++) {
    const c = s[j]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r' || c === '=' || c === '>') return j;
    if (c === "'" || c === '"' || c === '<') return errorCtx(`${goQ(c)} in attribute name: ${goQ(s.slice(0, 32))}`);
  }
  return s.length;
}

/** Go's %q of a short string, for error messages. */
export function goQ(s: string): string {
  return JSON.stringify(s).replace(/\\u00([0-9a-f]{2})/g, '\\x$1');
}

function tText(c: Context, s: string): [Context, number] {
  let k = 0;
  for (;;) {
    const i = s.indexOf('<', k);
    if (i === -1 || i + 1 === s.length) return [c, s.length];
    if (s.startsWith('<!--', i)) return [ctx({ state: 'HTMLCmt' }), i + 4];
    let j = i + 1;
    let end = false;
    if (s[j] === '/') {
      if (j + 1 === s.length) return [c, s.length];
      end = true;
      j++;
    }
    const [after, element] = eatTagName(s, j);
    if (after !== j) return [ctx({ state: 'Tag', element: end ? 'None' : element }), after];
    k = after;
  }
}

function tTag(c: Context, s: string): [Context, number] {
  const i = eatWhiteSpace(s, 0);
  if (i === s.length) return [c, s.length];
  if (s[i] === '>') return [ctx({ state: ELEMENT_CONTENT[c.element], element: c.element }), i + 1];
  const j = eatAttrName(s, i);
  if (typeof j !== 'number') return [j, s.length];
  if (i === j) return [errorCtx(`expected space, attr name, or end of tag, but got ${goQ(s.slice(i))}`), s.length];
  const name = s.slice(i, j).toLowerCase();
  let attr: Attr = 'None';
  if (c.element === 'Script' && name === 'type') attr = 'ScriptType';
  else {
    const t = attrType(name);
    attr = t === 'URL' ? 'URL' : t === 'CSS' ? 'Style' : t === 'JS' ? 'Script' : t === 'Srcset' ? 'Srcset' : 'None';
  }
  return [ctx({ state: j === s.length ? 'AttrName' : 'AfterName', element: c.element, attr }), j];
}

function tAttrName(c: Context, s: string): [Context, number] {
  const i = eatAttrName(s, 0);
  if (typeof i !== 'number') return [i, s.length];
  if (i !== s.length) return [{ ...c, state: 'AfterName' }, i];
  return [c, i];
}

function tAfterName(c: Context, s: string): [Context, number] {
  const i = eatWhiteSpace(s, 0);
  if (i === s.length) return [c, s.length];
  // A '>' ending the tag, or another (valueless) attribute.
  if (s[i] !== '=') return [{ ...c, state: 'Tag' }, i];
  return [{ ...c, state: 'BeforeValue' }, i + 1];
}

function tBeforeValue(c: Context, s: string): [Context, number] {
  let i = eatWhiteSpace(s, 0);
  if (i === s.length) return [c, s.length];
  let delim: Context['delim'] = 'SpaceOrTagEnd';
  if (s[i] === "'") {
    delim = 'SingleQuote';
    i++;
  } else if (s[i] === '"') {
    delim = 'DoubleQuote';
    i++;
  }
  return [{ ...c, state: ATTR_START[c.attr], delim }, i];
}

function tHTMLCmt(c: Context, s: string): [Context, number] {
  const i = s.indexOf('-->');
  return i === -1 ? [c, s.length] : [ctx({}), i + 3];
}

/** The index of `</name` (any case) followed by a space, '/' or '>' (or the end), or -1. */
function indexTagEnd(s: string, name: string): number {
  const lower = s.toLowerCase();
  let from = 0;
  for (;;) {
    const i = lower.indexOf('</', from);
    if (i === -1) return -1;
    const after = i + 2 + name.length;
    if (lower.startsWith(name, i + 2) && (after === s.length || isSpace(s[after]) || s[after] === '/' || s[after] === '>')) return i;
    from = i + 2;
  }
}

function tSpecialTagEnd(c: Context, s: string): [Context, number] {
  if (c.element !== 'None') {
    const i = indexTagEnd(s, END_MARKERS[c.element]);
    if (i !== -1) return [ctx({}), i];
  }
  return [c, s.length];
}

function tAttr(c: Context, s: string): [Context, number] {
  return [c, s.length];
}

function tURL(c: Context, s: string): [Context, number] {
  if (/[#?]/.test(s)) return [{ ...c, urlPart: 'QueryOrFrag' }, s.length];
  if (s.length !== eatWhiteSpace(s, 0) && c.urlPart === 'None') return [{ ...c, urlPart: 'PreQuery' }, s.length];
  return [c, s.length];
}

const REGEXP_PRECEDERS = new Set(['break', 'case', 'continue', 'delete', 'do', 'else', 'finally', 'in', 'instanceof', 'return', 'throw', 'try', 'typeof', 'void']);

export function isJSIdentPart(c: string | undefined): boolean {
  return c !== undefined && /^[A-Za-z0-9_$]$/.test(c);
}

/** Whether a '/' after `s` would start a regular expression or a division. */
export function nextJSCtx(s: string, preceding: JsCtx): JsCtx {
  s = s.replace(/[\t\n\f\r \u2028\u2029]+$/, '');
  if (s.length === 0) return preceding;
  const n = s.length;
  const c = s[n - 1]!;
  switch (c) {
    case '+':
    case '-': {
      let start = n - 1;
      while (start > 0 && s[start - 1] === c) start--;
      return (n - start) % 2 === 1 ? 'Regexp' : 'DivOp';
    }
    case '.':
      return n !== 1 && s[n - 2]! >= '0' && s[n - 2]! <= '9' ? 'DivOp' : 'Regexp';
    case ',': case '<': case '>': case '=': case '*': case '%': case '&': case '|': case '^': case '?':
    case '!': case '~': case '(': case '[': case ':': case ';': case '{': case '}':
      return 'Regexp';
    default: {
      let j = n;
      while (j > 0 && isJSIdentPart(s[j - 1])) j--;
      return REGEXP_PRECEDERS.has(s.slice(j)) ? 'Regexp' : 'DivOp';
    }
  }
}

function tJS(c: Context, s: string): [Context, number] {
  const i = indexAny(s, '"\'`/');
  if (i === -1) return [{ ...c, jsCtx: nextJSCtx(s, c.jsCtx) }, s.length];
  const out: Context = { ...c, jsCtx: nextJSCtx(s.slice(0, i), c.jsCtx) };
  let end = i;
  switch (s[i]) {
    case '"':
      Object.assign(out, { state: 'JSDqStr', jsCtx: 'Regexp' });
      break;
    case "'":
      Object.assign(out, { state: 'JSSqStr', jsCtx: 'Regexp' });
      break;
    case '`':
      Object.assign(out, { state: 'JSBqStr', jsCtx: 'Regexp' });
      break;
    default:
      if (s[i + 1] === '/') {
        out.state = 'JSLineCmt';
        end++;
      } else if (s[i + 1] === '*') {
        out.state = 'JSBlockCmt';
        end++;
      } else if (out.jsCtx === 'Regexp') out.state = 'JSRegexp';
      else if (out.jsCtx === 'DivOp') out.jsCtx = 'Regexp';
      else return [errorCtx(`'/' could start a division or regexp: ${goQ(s.slice(i, i + 32))}`), s.length];
  }
  return [out, end + 1];
}

function tJSDelimited(c: Context, s: string): [Context, number] {
  const specials = c.state === 'JSSqStr' ? "\\'" : c.state === 'JSBqStr' ? '`\\' : c.state === 'JSRegexp' ? '\\/[]' : '\\"';
  let k = 0;
  let inCharset = false;
  for (;;) {
    let i = indexAny(s, specials, k);
    if (i === -1) break;
    switch (s[i]) {
      case '\\':
        i++;
        if (i === s.length) return [errorCtx(`unfinished escape sequence in JS string: ${goQ(s)}`), s.length];
        break;
      case '[':
        inCharset = true;
        break;
      case ']':
        inCharset = false;
        break;
      default:
        if (!inCharset) return [{ ...c, state: 'JS', jsCtx: 'DivOp' }, i + 1];
    }
    k = i + 1;
  }
  if (inCharset) return [errorCtx(`unfinished JS regexp charset: ${goQ(s)}`), s.length];
  return [c, s.length];
}

function tBlockCmt(c: Context, s: string): [Context, number] {
  const i = s.indexOf('*/');
  if (i === -1) return [c, s.length];
  return [{ ...c, state: c.state === 'JSBlockCmt' ? 'JS' : 'CSS' }, i + 2];
}

function tLineCmt(c: Context, s: string): [Context, number] {
  const [ends, back]: [string, State] = c.state === 'JSLineCmt' ? ['\n\r\u2028\u2029', 'JS'] : ['\n\f\r', 'CSS'];
  const i = indexAny(s, ends);
  if (i === -1) return [c, s.length];
  // The line end is not part of the comment.
  return [{ ...c, state: back }, i];
}

const isCSSNmchar = (c: string) => /^[A-Za-z0-9_-]$/.test(c) || c.codePointAt(0)! >= 0x80;

function endsWithCSSKeyword(b: string, kw: string): boolean {
  const i = b.length - kw.length;
  if (i < 0) return false;
  if (i !== 0 && isCSSNmchar(b[i - 1]!)) return false;
  return b.slice(i).toLowerCase() === kw;
}

function tCSS(c: Context, s: string): [Context, number] {
  let k = 0;
  for (;;) {
    const i = indexAny(s, '("\'/', k);
    if (i === -1) return [c, s.length];
    switch (s[i]) {
      case '(': {
        const p = s.slice(0, i).replace(/[\t\n\f\r ]+$/, '');
        if (endsWithCSSKeyword(p, 'url')) {
          let j = s.length - s.slice(i + 1).replace(/^[\t\n\f\r ]+/, '').length;
          let state: State = 'CSSURL';
          if (j !== s.length && s[j] === '"') {
            state = 'CSSDqURL';
            j++;
          } else if (j !== s.length && s[j] === "'") {
            state = 'CSSSqURL';
            j++;
          }
          return [{ ...c, state }, j];
        }
        break;
      }
      case '/':
        if (s[i + 1] === '/') return [{ ...c, state: 'CSSLineCmt' }, i + 2];
        if (s[i + 1] === '*') return [{ ...c, state: 'CSSBlockCmt' }, i + 2];
        break;
      case '"':
        return [{ ...c, state: 'CSSDqStr' }, i + 1];
      case "'":
        return [{ ...c, state: 'CSSSqStr' }, i + 1];
    }
    k = i + 1;
  }
}

const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

/** CSS escapes decoded: `\3a ` is ':', `\"` is '"'. */
export function decodeCSS(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const b = s.indexOf('\\', i);
    if (b === -1) {
      out += s.slice(i);
      break;
    }
    out += s.slice(i, b);
    if (b + 1 >= s.length) break;
    if (isHex(s[b + 1])) {
      let j = b + 2;
      while (j < s.length && j < b + 7 && isHex(s[j])) j++;
      let r = parseInt(s.slice(b + 1, j), 16);
      if (r > 0x10ffff) {
        r = Math.floor(r / 16);
        j--;
      }
      out += String.fromCodePoint(r >= 0xd800 && r <= 0xdfff ? 0xfffd : r);
      // One white space after the hex digits belongs to the escape ("\r\n" counts as one).
      if (s[j] === '\r' && s[j + 1] === '\n') j += 2;
      else if (isSpace(s[j])) j++;
      i = j;
    } else {
      const ch = String.fromCodePoint(s.codePointAt(b + 1)!);
      out += ch;
      i = b + 1 + ch.length;
    }
  }
  return out;
}

function tCSSStr(c: Context, s: string): [Context, number] {
  const ends = c.state === 'CSSDqStr' || c.state === 'CSSDqURL' ? '\\"' : c.state === 'CSSSqStr' || c.state === 'CSSSqURL' ? "\\'" : '\\\t\n\f\r )';
  let k = 0;
  for (;;) {
    let i = indexAny(s, ends, k);
    if (i === -1) {
      const [c1, n] = tURL(c, decodeCSS(s.slice(k)));
      return [c1, k + n];
    }
    if (s[i] === '\\') {
      i++;
      if (i === s.length) return [errorCtx(`unfinished escape sequence in CSS string: ${goQ(s)}`), s.length];
    } else return [{ ...c, state: 'CSS' }, i + 1];
    c = tURL(c, decodeCSS(s.slice(0, i + 1)))[0];
    k = i + 1;
  }
}

function tError(c: Context, s: string): [Context, number] {
  return [c, s.length];
}

export const TRANSITIONS: Record<State, (c: Context, s: string) => [Context, number]> = {
  Text: tText,
  Tag: tTag,
  AttrName: tAttrName,
  AfterName: tAfterName,
  BeforeValue: tBeforeValue,
  HTMLCmt: tHTMLCmt,
  RCDATA: tSpecialTagEnd,
  Attr: tAttr,
  URL: tURL,
  Srcset: tURL,
  JS: tJS,
  JSDqStr: tJSDelimited,
  JSSqStr: tJSDelimited,
  JSBqStr: tJSDelimited,
  JSRegexp: tJSDelimited,
  JSBlockCmt: tBlockCmt,
  JSLineCmt: tLineCmt,
  CSS: tCSS,
  CSSDqStr: tCSSStr,
  CSSSqStr: tCSSStr,
  CSSDqURL: tCSSStr,
  CSSSqURL: tCSSStr,
  CSSURL: tCSSStr,
  CSSBlockCmt: tBlockCmt,
  CSSLineCmt: tLineCmt,
  Error: tError,
  Dead: tError,
};

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', sol: '/', lpar: '(', rpar: ')', colon: ':', semi: ';', bsol: '\\', grave: '`', equals: '=', num: '#', quest: '?', Tab: '\t', NewLine: '\n' };

/**
 * HTML character references decoded (numeric ones, and the named ones that can change how a
 * script, style or URL inside an attribute reads), so `onclick="f(&quot;x&quot;)"` is seen as JS.
 */
export function unescapeHtml(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#[xX][0-9A-Fa-f]+|#[0-9]+|[A-Za-z]+);?/g, (m, body: string) => {
    if (body[0] === '#') {
      const n = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : '\ufffd';
    }
    return NAMED_ENTITIES[body] ?? m;
  });
}

/** The context after `s` (or after part of it: the returned count), attribute values handled as a whole. */
export function contextAfterText(c: Context, s: string): [Context, number] {
  if (c.delim === 'None') {
    const [c1, i] = tSpecialTagEnd(c, s);
    // A special end tag (`</script>`): everything before it has been consumed.
    if (i === 0) return [c1, 0];
    return TRANSITIONS[c.state](c, s.slice(0, i));
  }
  // In an attribute value.
  let i = indexAny(s, DELIM_ENDS[c.delim]!);
  if (i === -1) i = s.length;
  if (c.delim === 'SpaceOrTagEnd') {
    // Characters HTML parsers disagree about in an unquoted value.
    const j = indexAny(s.slice(0, i), '"\'<=`');
    if (j >= 0) return [errorCtx(`${goQ(s[j]!)} in unquoted attr: ${goQ(s.slice(0, i))}`), s.length];
  }
  if (i === s.length) {
    // Still inside the value: read it decoded, so entities cannot hide a quote or a slash.
    let u = unescapeHtml(s);
    while (u.length !== 0) {
      const [c1, n] = TRANSITIONS[c.state](c, u);
      c = c1;
      u = u.slice(n);
      if (n === 0 && c.state === c1.state && u.length) break;
    }
    return [c, s.length];
  }
  let element = c.element;
  // A script's non-JS "type" makes its content plain text.
  if (c.state === 'Attr' && c.element === 'Script' && c.attr === 'ScriptType' && !isJSType(s.slice(0, i))) element = 'None';
  if (c.delim !== 'SpaceOrTagEnd') i++;
  return [ctx({ state: 'Tag', element }), i];
}

/** Whether a `<script type=...>` holds JavaScript (or JSON). */
export function isJSType(mime: string): boolean {
  let m = mime.toLowerCase();
  const semi = m.indexOf(';');
  if (semi >= 0) m = m.slice(0, semi);
  m = m.trim();
  return [
    'application/ecmascript', 'application/javascript', 'application/json', 'application/ld+json', 'application/x-ecmascript',
    'application/x-javascript', 'module', 'text/ecmascript', 'text/javascript', 'text/javascript1.0', 'text/javascript1.1',
    'text/javascript1.2', 'text/javascript1.3', 'text/javascript1.4', 'text/javascript1.5', 'text/jscript', 'text/livescript',
    'text/x-ecmascript', 'text/x-javascript', '',
  ].includes(m);
}
