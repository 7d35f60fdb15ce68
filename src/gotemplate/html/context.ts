/**
 * html/template's parsing context: where in an HTML document the output is at a given point
 * (text, inside a tag, an attribute value of some kind, a script, a style sheet, a comment, ...).
 * The escaper carries one through a template's literal text to choose each action's escapers.
 */

export type State =
  | 'Text'
  | 'Tag'
  | 'AttrName'
  | 'AfterName'
  | 'BeforeValue'
  | 'HTMLCmt'
  | 'RCDATA'
  | 'Attr'
  | 'URL'
  | 'Srcset'
  | 'JS'
  | 'JSDqStr'
  | 'JSSqStr'
  | 'JSBqStr'
  | 'JSRegexp'
  | 'JSBlockCmt'
  | 'JSLineCmt'
  | 'CSS'
  | 'CSSDqStr'
  | 'CSSSqStr'
  | 'CSSDqURL'
  | 'CSSSqURL'
  | 'CSSURL'
  | 'CSSBlockCmt'
  | 'CSSLineCmt'
  | 'Error'
  | 'Dead';

/** How the current attribute value ends. */
export type Delim = 'None' | 'DoubleQuote' | 'SingleQuote' | 'SpaceOrTagEnd';
/** Where in a URL: before anything, in scheme/host/path, in query or fragment, or not known (branches disagree). */
export type UrlPart = 'None' | 'PreQuery' | 'QueryOrFrag' | 'Unknown';
/** In JavaScript, whether a `/` next would start a regular expression or a division. */
export type JsCtx = 'Regexp' | 'DivOp' | 'Unknown';
/** What kind of attribute's value this is. */
export type Attr = 'None' | 'Script' | 'ScriptType' | 'Style' | 'URL' | 'Srcset';
/** The special element whose content we are in (raw text or RCDATA). */
export type Element = 'None' | 'Script' | 'Style' | 'Textarea' | 'Title';

export interface Context {
  state: State;
  delim: Delim;
  urlPart: UrlPart;
  jsCtx: JsCtx;
  attr: Attr;
  element: Element;
  /** With state Error: what is wrong (and the template line, when known). */
  err?: EscapeError;
}

/** A template html/template refuses to escape (ambiguous or broken markup), as Go reports it. */
export class EscapeError extends Error {
  constructor(
    readonly description: string,
    public line = 0,
    public template = '',
  ) {
    super(description);
  }

  /** Go's text: `html/template:name:line: description`. */
  text(): string {
    if (this.line) return `html/template:${this.template}:${this.line}: ${this.description}`;
    if (this.template) return `html/template:${this.template}: ${this.description}`;
    return `html/template: ${this.description}`;
  }
}

export const TEXT: Context = { state: 'Text', delim: 'None', urlPart: 'None', jsCtx: 'Regexp', attr: 'None', element: 'None' };

export function ctx(over: Partial<Context>): Context {
  return { ...TEXT, ...over };
}

export function errorCtx(description: string, line = 0): Context {
  return { ...TEXT, state: 'Error', err: new EscapeError(description, line) };
}

export function eq(a: Context, b: Context): boolean {
  return a.state === b.state && a.delim === b.delim && a.urlPart === b.urlPart && a.jsCtx === b.jsCtx && a.attr === b.attr && a.element === b.element && a.err === b.err;
}

/** Go's %v of a context (in error messages): `{stateAttr delimSpaceOrTagEnd urlPartNone ...}`. */
export function describe(c: Context): string {
  const parts = [`state${c.state}`, `delim${c.delim}`, `urlPart${c.urlPart}`, `jsCtx${c.jsCtx}`, `attr${c.attr}`, `element${c.element}`];
  if (c.err) parts.push(c.err.text());
  return `{${parts.join(' ')}}`;
}

/** The name of a template escaped for a context other than text: `name$htmltemplate_stateJS_elementScript`. */
export function mangle(c: Context, name: string): string {
  if (c.state === 'Text') return name;
  let s = `${name}$htmltemplate_state${c.state}`;
  if (c.delim !== 'None') s += `_delim${c.delim}`;
  if (c.urlPart !== 'None') s += `_urlPart${c.urlPart}`;
  if (c.jsCtx !== 'Regexp') s += `_jsCtx${c.jsCtx}`;
  if (c.attr !== 'None') s += `_attr${c.attr}`;
  if (c.element !== 'None') s += `_element${c.element}`;
  return s;
}

export function isComment(s: State): boolean {
  return s === 'HTMLCmt' || s === 'JSBlockCmt' || s === 'JSLineCmt' || s === 'CSSBlockCmt' || s === 'CSSLineCmt';
}

export function isInTag(s: State): boolean {
  return s === 'Tag' || s === 'AttrName' || s === 'AfterName' || s === 'BeforeValue' || s === 'Attr';
}
