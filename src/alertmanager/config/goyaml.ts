/**
 * The YAML dialect of gopkg.in/yaml.v2 (what Alertmanager 0.25 reads and writes):
 *  - `resolvePlain`: the tag a plain scalar resolves to (YAML 1.1 booleans, ints with 0x/0o/0b,
 *    floats, timestamps), used to type-check values and to decide quoting;
 *  - `emitYaml`: a libyaml-style block emitter (2-space indent, indentless sequences in
 *    mappings, plain/single/double/literal scalar styles chosen like libyaml, 80-column folding)
 *    so `config.original` reads as Alertmanager's re-marshalled configuration.
 */

export type Tag = '!!str' | '!!int' | '!!float' | '!!bool' | '!!null' | '!!timestamp' | '!!merge' | '!!binary';

const BOOL_TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON', 'true', 'True', 'TRUE']);
const BOOL_FALSE = new Set(['n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF', 'false', 'False', 'FALSE']);
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const FLOAT_SPECIAL = new Set(['.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF']);
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;

export interface Resolved {
  tag: Tag;
  /** Parsed value: boolean, number/bigint, null, or the string itself. */
  value: unknown;
}

/** go-yaml v2 `resolve("", s)` for a plain (unquoted, untagged) scalar. */
export function resolvePlain(s: string): Resolved {
  if (NULLS.has(s)) return { tag: '!!null', value: null };
  if (BOOL_TRUE.has(s)) return { tag: '!!bool', value: true };
  if (BOOL_FALSE.has(s)) return { tag: '!!bool', value: false };
  if (FLOAT_SPECIAL.has(s)) return { tag: '!!float', value: s.includes('nan') || s.includes('NaN') || s.includes('NAN') ? NaN : s.startsWith('-') ? -Infinity : Infinity };
  if (s === '<<') return { tag: '!!merge', value: s };
  const c = s[0]!;
  if (c === '+' || c === '-' || c === '.' || (c >= '0' && c <= '9')) {
    if (c !== '.') {
      const ts = parseTimestamp(s);
      if (ts !== null) return { tag: '!!timestamp', value: ts };
    }
    const plain = s.replace(/_/g, '');
    const i = parseGoInt(plain);
    if (i !== null) return { tag: '!!int', value: i };
    if (YAML_FLOAT.test(plain)) return { tag: '!!float', value: Number(plain) };
    if (/^[-+]?0b[01]+$/.test(plain)) {
      const neg = plain.startsWith('-');
      const v = BigInt('0b' + plain.replace(/^[-+]?0b/, ''));
      return { tag: '!!int', value: neg ? -v : v };
    }
  }
  return { tag: '!!str', value: s };
}

/** strconv.ParseInt(s, 0, 64) then ParseUint: decimal, 0x, 0o, 0b, leading-0 octal. */
function parseGoInt(s: string): bigint | null {
  const m = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return null;
  const body = m[2]!;
  let v: bigint;
  if (/^0[oO]/.test(body)) v = BigInt('0o' + body.slice(2));
  else if (/^0[xXbB]/.test(body)) v = BigInt(body.toLowerCase());
  else if (body.length > 1 && body[0] === '0') v = BigInt('0o' + body.slice(1));
  else v = BigInt(body);
  if (m[1] === '-') v = -v;
  if (v > 18446744073709551615n || v < -9223372036854775808n) return null;
  return v;
}

const TS_RE = [
  /^(\d{4})-(\d{1,2})-(\d{1,2})[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/,
  /^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?$/,
  /^(\d{4})-(\d{1,2})-(\d{1,2})$/,
];

/** go-yaml v2 parseTimestamp: only the four allowed layouts (date, or date and time). */
function parseTimestamp(s: string): string | null {
  if (!/^\d{4}-/.test(s)) return null;
  for (const re of TS_RE) if (re.test(s)) return s;
  return null;
}

export function isBase60Float(s: string): boolean {
  return s !== '' && BASE60_FLOAT.test(s);
}

// ---- emitter ---------------------------------------------------------------------------------

/** A value to emit, with the style decisions go-yaml makes from Go types. */
export type YNode =
  | { t: 'map'; entries: [string, YNode][] }
  | { t: 'seq'; items: YNode[]; flow?: boolean }
  | { t: 'str'; v: string }
  | { t: 'raw'; v: string }; // ints, bools, null: written as is

export const ystr = (v: string): YNode => ({ t: 'str', v });
export const yraw = (v: string | number | boolean | null): YNode => ({ t: 'raw', v: v === null ? 'null' : String(v) });

const BEST_WIDTH = 80;

interface Analysis {
  multiline: boolean;
  flowPlain: boolean;
  blockPlain: boolean;
  single: boolean;
  block: boolean;
}

const isBreak = (c: string) => c === '\r' || c === '\n' || c === '\x85' || c === '\u2028' || c === '\u2029';
const isBlankZ = (c: string | undefined) => c === undefined || c === ' ' || c === '\t' || isBreak(c);

function isPrintable(c: string): boolean {
  const n = c.codePointAt(0)!;
  return (
    n === 0x0a ||
    (n >= 0x20 && n <= 0x7e) ||
    n === 0x85 ||
    (n >= 0xa0 && n <= 0xd7ff) ||
    (n >= 0xe000 && n <= 0xfffd && n !== 0xfeff) ||
    (n >= 0x10000 && n <= 0x10ffff)
  );
}

/** libyaml yaml_emitter_analyze_scalar. */
function analyze(s: string): Analysis {
  if (s.length === 0) return { multiline: false, flowPlain: false, blockPlain: true, single: true, block: false };
  const chars = Array.from(s);
  let blockInd = false;
  let flowInd = false;
  if (s.startsWith('---') || s.startsWith('...')) {
    blockInd = true;
    flowInd = true;
  }
  let lineBreaks = false, special = false;
  let leadingSpace = false, leadingBreak = false, trailingSpace = false, trailingBreak = false;
  let breakSpace = false, spaceBreak = false, prevSpace = false, prevBreak = false;
  let precededByWs = true;
  let followedByWs = isBlankZ(chars[1]);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const first = i === 0;
    const last = i === chars.length - 1;
    if (first) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) {
        flowInd = true;
        blockInd = true;
      }
      if (c === '?' || c === ':') {
        flowInd = true;
        if (followedByWs) blockInd = true;
      }
      if (c === '-' && followedByWs) {
        flowInd = true;
        blockInd = true;
      }
    } else {
      if (',?[]{}'.includes(c)) flowInd = true;
      if (c === ':') {
        flowInd = true;
        if (followedByWs) blockInd = true;
      }
      if (c === '#' && precededByWs) {
        flowInd = true;
        blockInd = true;
      }
    }
    if (!isPrintable(c)) special = true;
    if (isBreak(c)) lineBreaks = true;
    if (c === ' ') {
      if (first) leadingSpace = true;
      if (last) trailingSpace = true;
      if (prevBreak) breakSpace = true;
      prevSpace = true;
      prevBreak = false;
    } else if (isBreak(c)) {
      if (first) leadingBreak = true;
      if (last) trailingBreak = true;
      if (prevSpace) spaceBreak = true;
      prevSpace = false;
      prevBreak = true;
    } else {
      prevSpace = false;
      prevBreak = false;
    }
    precededByWs = isBlankZ(c);
    if (i + 1 < chars.length) followedByWs = isBlankZ(chars[i + 2]);
  }
  const a: Analysis = { multiline: lineBreaks, flowPlain: true, blockPlain: true, single: true, block: true };
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) {
    a.flowPlain = false;
    a.blockPlain = false;
  }
  if (trailingSpace) a.block = false;
  if (breakSpace) {
    a.flowPlain = false;
    a.blockPlain = false;
    a.single = false;
  }
  if (spaceBreak || special) {
    a.flowPlain = false;
    a.blockPlain = false;
    a.single = false;
    a.block = false;
  }
  if (lineBreaks) {
    a.flowPlain = false;
    a.blockPlain = false;
  }
  if (flowInd) a.flowPlain = false;
  if (blockInd) a.blockPlain = false;
  return a;
}

type Style = 'plain' | 'single' | 'double' | 'literal';

/** go-yaml's requested style for a Go string, then libyaml's select_scalar_style. */
function chooseStyle(s: string, flow: boolean, simpleKey: boolean): Style {
  const r = resolvePlain(s);
  const canUsePlain = r.tag === '!!str' && !isBase60Float(s);
  let style: Style = s.includes('\n') ? 'literal' : canUsePlain ? 'plain' : 'double';
  const a = analyze(s);
  if (style === 'plain') {
    if ((flow && !a.flowPlain) || (!flow && !a.blockPlain)) style = 'single';
    if (s.length === 0 && (flow || simpleKey)) style = 'single';
  }
  if (style === 'single' && !a.single) style = 'double';
  if (style === 'literal' && (!a.block || flow || simpleKey)) style = 'double';
  return style;
}

class Writer {
  out = '';
  column = 0;
  whitespace = true;
  indent = 0;

  put(s: string): void {
    this.out += s;
    this.column += Array.from(s).length;
    this.whitespace = false;
  }

  newline(): void {
    this.out += '\n';
    this.column = 0;
    this.whitespace = true;
  }

  /** libyaml write_indent: new line unless already at the indentation, then spaces. */
  writeIndent(indent: number): void {
    if (this.column > indent || (this.column === indent && !this.whitespace)) {
      this.newline();
    }
    if (this.column < indent) {
      this.out += ' '.repeat(indent - this.column);
      this.column = indent;
    }
    this.whitespace = true;
  }
}

function escapeDouble(c: string): string {
  switch (c) {
    case '\0': return '\\0';
    case '\x07': return '\\a';
    case '\b': return '\\b';
    case '\t': return '\\t';
    case '\n': return '\\n';
    case '\x0b': return '\\v';
    case '\f': return '\\f';
    case '\r': return '\\r';
    case '\x1b': return '\\e';
    case '"': return '\\"';
    case '\\': return '\\\\';
    case '\x85': return '\\N';
    case '\xa0': return '\\_';
    case '\u2028': return '\\L';
    case '\u2029': return '\\P';
  }
  const n = c.codePointAt(0)!;
  if (n <= 0xff) return '\\x' + n.toString(16).toUpperCase().padStart(2, '0');
  if (n <= 0xffff) return '\\u' + n.toString(16).toUpperCase().padStart(4, '0');
  return '\\U' + n.toString(16).toUpperCase().padStart(8, '0');
}

function writeScalar(w: Writer, s: string, indent: number, flow: boolean, simpleKey: boolean): void {
  const style = chooseStyle(s, flow, simpleKey);
  const allowBreaks = !simpleKey;
  const chars = Array.from(s);
  if (!w.whitespace) w.put(' ');
  switch (style) {
    case 'plain': {
      let spaces = false;
      for (let i = 0; i < chars.length; i++) {
        const c = chars[i]!;
        if (c === ' ') {
          if (allowBreaks && !spaces && w.column > BEST_WIDTH && chars[i + 1] !== ' ') {
            w.writeIndent(indent);
            w.whitespace = false;
          } else w.put(c);
          spaces = true;
        } else {
          w.put(c);
          spaces = false;
        }
      }
      break;
    }
    case 'single': {
      w.put("'");
      let spaces = false;
      for (let i = 0; i < chars.length; i++) {
        const c = chars[i]!;
        if (c === ' ') {
          if (allowBreaks && !spaces && w.column > BEST_WIDTH && i !== 0 && i !== chars.length - 1 && chars[i + 1] !== ' ') {
            w.writeIndent(indent);
            w.whitespace = false;
          } else w.put(c);
          spaces = true;
        } else {
          w.put(c === "'" ? "''" : c);
          spaces = false;
        }
      }
      w.put("'");
      break;
    }
    case 'double': {
      w.put('"');
      let spaces = false;
      for (let i = 0; i < chars.length; i++) {
        const c = chars[i]!;
        if (!isPrintable(c) || c === '\ufeff' || isBreak(c) || c === '"' || c === '\\') {
          w.put(escapeDouble(c));
          spaces = false;
        } else if (c === ' ') {
          if (allowBreaks && !spaces && w.column > BEST_WIDTH && i !== 0 && i !== chars.length - 1) {
            w.writeIndent(indent);
            w.whitespace = false;
            if (chars[i + 1] === ' ') w.put('\\');
          } else w.put(c);
          spaces = true;
        } else {
          w.put(c);
          spaces = false;
        }
      }
      w.put('"');
      break;
    }
    case 'literal': {
      let chomp = '';
      if (!s.endsWith('\n')) chomp = '-';
      else if (s.length === 1 || isBreak(s[s.length - 2]!)) chomp = '+';
      const hint = s[0] === ' ' || isBreak(s[0]!) ? '2' : '';
      w.put('|' + hint + chomp);
      w.newline();
      let breaks = true;
      for (const c of chars) {
        if (isBreak(c)) {
          w.newline();
          breaks = true;
        } else {
          if (breaks) {
            w.out += ' '.repeat(indent);
            w.column = indent;
          }
          w.put(c);
          breaks = false;
        }
      }
      break;
    }
  }
}

function isEmptyCollection(n: YNode): boolean {
  return (n.t === 'map' && n.entries.length === 0) || (n.t === 'seq' && n.items.length === 0);
}

/** Emit a block node whose parent already wrote `key:` (or `- `) at column `indent`. */
function emitValue(w: Writer, n: YNode, indent: number, inSeqItem: boolean): void {
  switch (n.t) {
    case 'str':
      writeScalar(w, n.v, indent + 2, false, false);
      return;
    case 'raw':
      if (!w.whitespace) w.put(' ');
      w.put(n.v);
      return;
    case 'seq':
      if (n.items.length === 0) {
        if (!w.whitespace) w.put(' ');
        w.put('[]');
        return;
      }
      if (n.flow) {
        emitFlowSeq(w, n, indent + 2);
        return;
      }
      // Block sequence: indentless under a mapping key, nested one level under a sequence item.
      emitBlockSeq(w, n, inSeqItem ? indent + 2 : indent);
      return;
    case 'map':
      if (n.entries.length === 0) {
        if (!w.whitespace) w.put(' ');
        w.put('{}');
        return;
      }
      emitBlockMap(w, n, indent + 2, false);
  }
}

function emitBlockMap(w: Writer, n: Extract<YNode, { t: 'map' }>, indent: number, firstInline: boolean): void {
  n.entries.forEach(([k, v], i) => {
    if (!(i === 0 && firstInline)) w.writeIndent(indent);
    writeScalar(w, k, indent, false, true);
    w.put(':');
    w.whitespace = false;
    if (v.t === 'map' && !isEmptyCollection(v)) emitBlockMap(w, v, indent + 2, false);
    else if (v.t === 'seq' && !isEmptyCollection(v) && !v.flow) emitBlockSeq(w, v, indent);
    else emitValue(w, v, indent, false);
  });
}

function emitBlockSeq(w: Writer, n: Extract<YNode, { t: 'seq' }>, indent: number): void {
  for (const item of n.items) {
    w.writeIndent(indent);
    w.put('-');
    w.whitespace = false;
    if (item.t === 'map' && !isEmptyCollection(item)) {
      w.put(' ');
      w.whitespace = true;
      emitBlockMap(w, item, indent + 2, true);
    } else if (item.t === 'seq' && !isEmptyCollection(item) && !item.flow) {
      w.put(' ');
      w.whitespace = true;
      emitBlockSeqInline(w, item, indent + 2);
    } else emitValue(w, item, indent, true);
  }
}

function emitBlockSeqInline(w: Writer, n: Extract<YNode, { t: 'seq' }>, indent: number): void {
  n.items.forEach((item, i) => {
    if (i > 0) w.writeIndent(indent);
    w.put('-');
    emitValue(w, item, indent, true);
  });
}

function emitFlowSeq(w: Writer, n: Extract<YNode, { t: 'seq' }>, indent: number): void {
  if (!w.whitespace) w.put(' ');
  w.put('[');
  n.items.forEach((item, i) => {
    if (i > 0) w.put(',');
    if (w.column > BEST_WIDTH) w.writeIndent(indent);
    else if (i > 0) w.put(' ');
    w.whitespace = true;
    if (item.t === 'str') writeScalar(w, item.v, indent, true, false);
    else if (item.t === 'raw') w.put(item.v);
    else throw new Error('nested collections in flow sequences are not emitted');
  });
  w.put(']');
}

/** Marshal a top-level mapping the way yaml.v2's Marshal does (ends with a newline). */
export function emitYaml(root: YNode): string {
  const w = new Writer();
  if (root.t === 'map') {
    if (root.entries.length === 0) return '{}\n';
    emitBlockMap(w, root, 0, true);
  } else if (root.t === 'seq') {
    if (root.items.length === 0) return '[]\n';
    emitBlockSeq(w, root, 0);
  } else {
    emitValue(w, root, -2, false);
  }
  return w.out + '\n';
}
