/**
 * html/template's contextual autoescaping over a parsed template set: the literal text is read as
 * HTML to know, at each action, whether its value lands in text, an attribute, a URL, a script, a
 * style sheet or a comment, and the matching escapers are appended to the action's pipeline. A
 * template called in a context other than text is escaped as a copy for that context, under a
 * mangled name (`t$htmltemplate_stateJS...`). Branches must end in the same context; a template
 * that ends outside text, or a context the escaper cannot decide, is an error.
 */
import type { Cmd, Node, Pipe } from '../parse.js';
import { contextAfterText } from './transition.js';
import { ctx, describe, eq, errorCtx, EscapeError, isComment, mangle, TEXT, type Attr, type Context, type State } from './context.js';

type Branch = Extract<Node, { k: 'if' | 'with' | 'range' }>;
type ActionNode = Extract<Node, { k: 'action' }>;

const ATTR_START: Record<Attr, State> = { None: 'Attr', Script: 'JS', ScriptType: 'Attr', Style: 'CSS', URL: 'URL', Srcset: 'Srcset' };

/** The escapers a predefined escaper can stand in for, by the name it normalises to. */
const EQUIV: Record<string, string> = {
  _html_template_attrescaper: 'html',
  _html_template_htmlescaper: 'html',
  _html_template_rcdataescaper: 'html',
  _html_template_urlescaper: 'urlquery',
  _html_template_urlnormalizer: 'urlquery',
};
const PREDEFINED = new Set(['html', 'urlquery']);
const norm = (name: string) => EQUIV[name] ?? name;

/** In `<a {{.}}`, `<a x={{.}}`, `<a x {{.}}`: the context the action is really in. */
function nudge(c: Context): Context {
  switch (c.state) {
    case 'Tag':
      return { ...c, state: 'AttrName' };
    case 'BeforeValue':
      return { ...c, state: ATTR_START[c.attr], delim: 'SpaceOrTagEnd', attr: 'None' };
    case 'AfterName':
      return { ...c, state: 'AttrName', attr: 'None' };
    default:
      return c;
  }
}

/** The context after two branches: the same, or one that covers both, or an error. */
function join(a: Context, b: Context, line: number, nodeName: string): Context {
  if (a.state === 'Error') return a;
  if (b.state === 'Error') return b;
  if (a.state === 'Dead') return b;
  if (b.state === 'Dead') return a;
  if (eq(a, b)) return a;
  if (eq({ ...a, urlPart: b.urlPart }, b)) return { ...a, urlPart: 'Unknown' };
  if (eq({ ...a, jsCtx: b.jsCtx }, b)) return { ...a, jsCtx: 'Unknown' };
  // A nudged context may join an unnudged one: `<p title={{if .C}}{{.}}{{end}}`.
  const na = nudge(a);
  const nb = nudge(b);
  if (!(eq(na, a) && eq(nb, b))) {
    const e = join(na, nb, line, nodeName);
    if (e.state !== 'Error') return e;
  }
  return errorCtx(`{{${nodeName}}} branches end in different contexts: ${describe(a)}, ${describe(b)}`, line);
}

interface RangeCtx {
  outer: RangeCtx | undefined;
  breaks: [Context, number][];
  continues: [Context, number][];
}

function joinRange(c0: Context, rc: RangeCtx): Context {
  for (const [list, what] of [[rc.breaks, 'break'], [rc.continues, 'continue']] as const) {
    for (const [c, line] of list) {
      c0 = join(c0, c, line, 'range');
      if (c0.state === 'Error') {
        return { ...c0, err: new EscapeError(`at range loop ${what}: ${c0.err!.description}`, line) };
      }
    }
  }
  return c0;
}

/** `{{ html .X }}` as `{{ _eval_args_ .X | html }}`; escapers the pipeline already ends with are not added twice. */
function ensurePipelineContains(p: Pipe, escapers: string[]): Pipe {
  if (escapers.length === 0) return p;
  let s = [...escapers];
  const cmds: Cmd[] = [...p.cmds];
  let len = cmds.length;
  const last = cmds[len - 1];
  const id = last?.args[0];
  if (last && id && id.k === 'ident' && PREDEFINED.has(id.name)) {
    if (len === 1 && last.args.length > 1) {
      cmds[0] = { args: [{ k: 'ident', name: '_eval_args_' }, ...last.args.slice(1)] };
      cmds.push({ args: [{ k: 'ident', name: id.name }] });
      len++;
    }
    let dup = false;
    s = s.map((e) => {
      if (norm(e) === norm(id.name)) {
        dup = true;
        return id.name;
      }
      return e;
    });
    if (dup) len--;
  }
  const out = cmds.slice(0, len);
  const inserted = new Set(out.map((c) => (c.args[0]?.k === 'ident' ? norm(c.args[0].name) : '')));
  for (const name of s) if (!inserted.has(norm(name))) out.push({ args: [{ k: 'ident', name }] });
  return { ...p, cmds: out };
}

class Escaper {
  /** Output context of each (mangled) template escaped or being escaped. */
  output = new Map<string, Context>();
  /** Escaped bodies, by mangled name. */
  derived = new Map<string, Node[]>();
  /** Mangled names called while escaping. */
  called = new Set<string>();
  rangeCtx: RangeCtx | undefined;

  constructor(readonly trees: ReadonlyMap<string, Node[]>) {}

  list(c: Context, nodes: Node[]): [Context, Node[]] {
    const out: Node[] = [];
    let k = 0;
    for (; k < nodes.length; k++) {
      const [c1, n] = this.node(c, nodes[k]!);
      out.push(n);
      c = c1;
      if (c.state === 'Dead') {
        k++;
        break;
      }
    }
    // Nodes after a break or continue are never reached: left as they are.
    return [c, [...out, ...nodes.slice(k)]];
  }

  /** Escape `nodes` speculatively; the results are kept only when `accept` says so. */
  conditionally(c: Context, nodes: Node[], accept?: (e: Escaper, c: Context) => boolean): [Context, boolean, Node[]] {
    const e1 = new Escaper(this.trees);
    e1.rangeCtx = this.rangeCtx;
    for (const [k, v] of this.output) e1.output.set(k, v);
    for (const [k, v] of this.derived) e1.derived.set(k, v);
    const [c1, out] = e1.list(c, nodes);
    const ok = accept !== undefined && accept(e1, c1);
    if (ok) {
      for (const [k, v] of e1.output) this.output.set(k, v);
      for (const [k, v] of e1.derived) this.derived.set(k, v);
      for (const k of e1.called) this.called.add(k);
    }
    return [c1, ok, out];
  }

  node(c: Context, n: Node): [Context, Node] {
    switch (n.k) {
      case 'text': {
        const [c1, text] = escapeText(c, n.text);
        return [c1, text === n.text ? n : { k: 'text', text }];
      }
      case 'action':
        return this.action(c, n);
      case 'if':
      case 'with':
      case 'range':
        return this.branch(c, n);
      case 'template': {
        const [c1, name] = this.tree(c, n.name, n.line);
        return [c1, name === n.name ? n : { ...n, name }];
      }
      case 'break':
      case 'continue':
        if (this.rangeCtx) (n.k === 'break' ? this.rangeCtx.breaks : this.rangeCtx.continues).push([c, n.line]);
        return [{ ...TEXT, state: 'Dead' }, n];
    }
  }

  action(c: Context, n: ActionNode): [Context, Node] {
    // An assignment prints nothing.
    if (n.pipe.decl.length !== 0) return [c, n];
    c = nudge(c);
    const cmds = n.pipe.cmds;
    for (let pos = 0; pos < cmds.length; pos++) {
      const id = cmds[pos]!.args[0];
      if (id?.k !== 'ident' || !PREDEFINED.has(id.name)) continue;
      if (pos < cmds.length - 1 || (c.state === 'Attr' && c.delim === 'SpaceOrTagEnd' && id.name === 'html')) {
        return [errorCtx(`predefined escaper "${id.name}" disallowed in template`, n.line), n];
      }
    }
    const s: string[] = [];
    switch (c.state) {
      case 'Error':
        return [c, n];
      case 'URL':
      case 'CSSDqStr':
      case 'CSSSqStr':
      case 'CSSDqURL':
      case 'CSSSqURL':
      case 'CSSURL':
        switch (c.urlPart) {
          case 'None':
          case 'PreQuery':
            if (c.urlPart === 'None') s.push('_html_template_urlfilter');
            s.push(c.state === 'CSSDqStr' || c.state === 'CSSSqStr' ? '_html_template_cssescaper' : '_html_template_urlnormalizer');
            break;
          case 'QueryOrFrag':
            s.push('_html_template_urlescaper');
            break;
          case 'Unknown':
            return [errorCtx(`${n.src} appears in an ambiguous context within a URL`, n.line), n];
        }
        break;
      case 'JS':
        s.push('_html_template_jsvalescaper');
        // A '/' after a value is a division.
        c = { ...c, jsCtx: 'DivOp' };
        break;
      case 'JSDqStr':
      case 'JSSqStr':
        s.push('_html_template_jsstrescaper');
        break;
      case 'JSBqStr':
        return [errorCtx(`${n.src} appears in a JS template literal`, n.line), n];
      case 'JSRegexp':
        s.push('_html_template_jsregexpescaper');
        break;
      case 'CSS':
        s.push('_html_template_cssvaluefilter');
        break;
      case 'Text':
        s.push('_html_template_htmlescaper');
        break;
      case 'RCDATA':
        s.push('_html_template_rcdataescaper');
        break;
      case 'Attr':
        break;
      case 'AttrName':
      case 'Tag':
        c = { ...c, state: 'AttrName' };
        s.push('_html_template_htmlnamefilter');
        break;
      case 'Srcset':
        s.push('_html_template_srcsetescaper');
        break;
      default:
        if (isComment(c.state)) s.push('_html_template_commentescaper');
        else return [errorCtx(`unexpected state ${c.state}`, n.line), n];
    }
    if (c.delim === 'SpaceOrTagEnd') s.push('_html_template_nospaceescaper');
    else if (c.delim !== 'None') s.push('_html_template_attrescaper');
    return [c, { ...n, pipe: ensurePipelineContains(n.pipe, s) }];
  }

  branch(c: Context, n: Branch): [Context, Node] {
    if (n.k === 'range') this.rangeCtx = { outer: this.rangeCtx, breaks: [], continues: [] };
    let [c0, list] = this.list(c, n.list);
    if (n.k === 'range') {
      if (c0.state !== 'Error') c0 = joinRange(c0, this.rangeCtx!);
      this.rangeCtx = this.rangeCtx!.outer;
      if (c0.state === 'Error') return [c0, n];
      // The body may run again: it must end where it started the second time too.
      this.rangeCtx = { outer: this.rangeCtx, breaks: [], continues: [] };
      const [c1] = this.conditionally(c0, n.list);
      c0 = join(c0, c1, n.line, 'range');
      if (c0.state === 'Error') {
        this.rangeCtx = this.rangeCtx.outer;
        return [{ ...c0, err: new EscapeError(`on range loop re-entry: ${c0.err!.description}`, n.line) }, n];
      }
      c0 = joinRange(c0, this.rangeCtx);
      this.rangeCtx = this.rangeCtx.outer;
      if (c0.state === 'Error') return [c0, n];
    }
    const [c1, alt] = this.list(c, n.else ?? []);
    return [join(c0, c1, n.line, n.k), { ...n, list, ...(n.else ? { else: alt } : {}) }];
  }

  /** Escape template `name` for context `c` (once per context); its output context and the name to call. */
  tree(c: Context, name: string, line: number): [Context, string] {
    const dname = mangle(c, name);
    this.called.add(dname);
    const known = this.output.get(dname);
    if (known) return [known, dname];
    const body = this.trees.get(name);
    if (!body) return [errorCtx(`no such template "${name}"`, line), dname];
    let [c1, ok] = this.body(c, dname, body);
    if (!ok) {
      // Try again assuming the output context found the first time (a recursive template).
      const [c2, ok2] = this.body(c1, dname, body);
      if (ok2) [c1, ok] = [c2, true];
    }
    if (!ok && c1.state !== 'Error') return [errorCtx(`cannot compute output context for template ${dname}`), dname];
    return [c1, dname];
  }

  body(c: Context, dname: string, body: Node[]): [Context, boolean] {
    // Assume the output context is the input one, so recursive calls stop here.
    this.output.set(dname, c);
    // Accurate when the body did not call itself, or ended where it was assumed to.
    const [c1, ok, out] = this.conditionally(c, body, (e1, c1) => c1.state !== 'Error' && (!e1.called.has(dname) || eq(c, c1)));
    if (ok) this.derived.set(dname, out);
    return [c1, ok];
  }
}

/** Literal text: the context after it, and the text with comments removed and stray '<' in text escaped. */
export function escapeText(c: Context, s: string): [Context, string] {
  let written = 0;
  let i = 0;
  let b = '';
  while (i !== s.length) {
    const [c1, nread] = contextAfterText(c, s.slice(i));
    const i1 = i + nread;
    if (c.state === 'Text' || c.state === 'RCDATA') {
      let end = i1;
      if (c1.state !== c.state) {
        for (let j = end - 1; j >= i; j--) {
          if (s[j] === '<') {
            end = j;
            break;
          }
        }
      }
      for (let j = i; j < end; j++) {
        if (s[j] === '<' && !s.slice(j, j + 9).toUpperCase().startsWith('<!DOCTYPE')) {
          b += s.slice(written, j) + '&lt;';
          written = j + 1;
        }
      }
    } else if (isComment(c.state) && c.delim === 'None') {
      // A block comment that spanned lines stays a line end in JS; otherwise a space.
      if (c.state === 'JSBlockCmt') b += /[\n\r\u2028\u2029]/.test(s.slice(written, i1)) ? '\n' : ' ';
      else if (c.state === 'CSSBlockCmt') b += ' ';
      written = i1;
    }
    if (c.state !== c1.state && isComment(c1.state) && c1.delim === 'None') {
      const cs = i1 - (c1.state === 'HTMLCmt' ? 4 : 2);
      b += s.slice(written, cs);
      written = i1;
    }
    if (i === i1 && c.state === c1.state) break;
    c = c1;
    i = i1;
  }
  if (written !== 0 && c.state !== 'Error') {
    if (!isComment(c.state) || c.delim !== 'None') b += s.slice(written);
    return [c, b];
  }
  return [c, s];
}

/**
 * Escape template `name` of `trees` for HTML output: the escaped templates it needs, by the names
 * its calls now use. Throws EscapeError when the template cannot be escaped safely.
 */
export function escapeTemplateSet(trees: ReadonlyMap<string, Node[]>, name: string): Map<string, Node[]> {
  const e = new Escaper(trees);
  const [c] = e.tree(ctx({}), name, 0);
  if (c.state === 'Error') {
    const err = c.err!;
    err.template = name;
    throw err;
  }
  if (c.state !== 'Text') throw new EscapeError(`ends in a non-text context: ${describe(c)}`, 0, name);
  return e.derived;
}
