/**
 * Go's text/template for JavaScript: the language Alertmanager's notification templates are
 * written in. `new Templates()`, `.parse(name, text)` for each file (defines add named templates),
 * `.execute(name, data)`. Data are JavaScript values (see values.ts); functions on objects are Go
 * methods. Errors read as Go's (`template: name:line: ...`).
 */
import { BUILTIN_ARITY, BUILTINS, TemplateExecError, type TemplateFunc } from './funcs.js';
import { TemplateSyntaxError } from './lex.js';
import { parseTemplates, type Arg, type Node, type Pipe } from './parse.js';
import { escapeTemplateSet } from './html/escape.js';
import { EscapeError } from './html/context.js';
import { ESCAPERS } from './html/escapers.js';
import { formatValue, GO_TYPE, isMap, MAP_ZERO, NO_VALUE, truth } from './values.js';

/** A missing key: the map's zero value when it has one (a typed map), else "no value". */
function missing(map: Record<string | symbol, unknown>): unknown {
  return MAP_ZERO in map ? map[MAP_ZERO] : NO_VALUE;
}

export { TemplateSyntaxError } from './lex.js';
export { TemplateExecError, type TemplateFunc } from './funcs.js';
export { GO_FORMAT, GO_JSON, GO_POINTER, GO_SYNTAX, GO_TYPE, MAP_ZERO, NO_VALUE, SAFE_HTML, formatValue, type GoFormattable } from './values.js';
export { EscapeError } from './html/context.js';
export { attrEscaper, htmlEscaper, urlFilter, urlNormalizer } from './html/escapers.js';

const BREAK = Symbol('break');
const CONTINUE = Symbol('continue');
/** Bounds on a template's work, so a hostile or buggy template cannot run away. */
const MAX_DEPTH = 1_000;
const MAX_TEMPLATE_CALLS = 100_000;

interface Frame {
  name: string;
  vars: Map<string, unknown>[];
  calls: { n: number };
  /** The templates `{{ template }}` calls resolve in (the escaped copies in HTML mode). */
  trees: ReadonlyMap<string, Node[]>;
}

export class Templates {
  private readonly trees = new Map<string, Node[]>();
  private readonly funcs: Record<string, TemplateFunc>;
  /** Escaped template sets for HTML output, by the template executed; dropped when templates change. */
  private readonly escaped = new Map<string, Map<string, Node[]> | EscapeError>();

  constructor(funcs: Record<string, TemplateFunc> = {}) {
    this.funcs = { ...BUILTINS, ...ESCAPERS, ...funcs };
  }

  /** Parse `text` as template `name` (and every template it defines). Throws TemplateSyntaxError. */
  parse(name: string, text: string): this {
    const parsed = parseTemplates(name, text);
    // Like Go, a function must exist when the template is parsed.
    for (const nodes of parsed.values()) checkFunctions(name, nodes, this.funcs);
    for (const [n, nodes] of parsed) {
      // Like Go: an empty re-definition does not replace a non-empty one.
      if (this.trees.has(n) && nodes.every((x) => x.k === 'text' && x.text.trim() === '')) continue;
      this.trees.set(n, nodes);
    }
    this.escaped.clear();
    return this;
  }

  has(name: string): boolean {
    return this.trees.has(name);
  }

  /**
   * Run template `name` on `data`. Throws TemplateExecError. With `html`, as Go's html/template:
   * every action is escaped for the HTML context it prints into.
   */
  execute(name: string, data: unknown, opts: { html?: boolean } = {}): string {
    let trees: ReadonlyMap<string, Node[]> = this.trees;
    if (opts.html && this.trees.has(name)) trees = this.escapedSet(name);
    const nodes = trees.get(name);
    if (!nodes) throw new TemplateExecError(`template: no template ${JSON.stringify(name)} associated with template ${JSON.stringify(name)}`);
    const out: string[] = [];
    this.walk(nodes, data, { name, vars: [new Map([['$', data]])], calls: { n: 0 }, trees }, out, 0);
    return out.join('');
  }

  private escapedSet(name: string): ReadonlyMap<string, Node[]> {
    let set = this.escaped.get(name);
    if (!set) {
      try {
        set = escapeTemplateSet(this.trees, name);
      } catch (e) {
        if (!(e instanceof EscapeError)) throw e;
        set = e;
      }
      this.escaped.set(name, set);
    }
    if (set instanceof EscapeError) throw new TemplateExecError(set.text());
    return set;
  }

  private walk(nodes: Node[], dot: unknown, f: Frame, out: string[], depth: number): typeof BREAK | typeof CONTINUE | undefined {
    if (depth > MAX_DEPTH) throw new TemplateExecError(`template: ${f.name}: exceeded maximum template depth (${MAX_DEPTH})`);
    for (const n of nodes) {
      switch (n.k) {
        case 'text':
          out.push(n.text);
          break;
        case 'action': {
          const v = this.pipe(n.pipe, dot, f, n.line);
          if (n.pipe.decl.length === 0) out.push(formatValue(v));
          break;
        }
        case 'if':
        case 'with': {
          f.vars.push(new Map());
          try {
            const v = this.pipe(n.pipe, dot, f, n.line);
            if (truth(v)) {
              const r = this.walk(n.list, n.k === 'with' ? v : dot, f, out, depth + 1);
              if (r) return r;
            } else if (n.else) {
              const r = this.walk(n.else, dot, f, out, depth + 1);
              if (r) return r;
            }
          } finally {
            f.vars.pop();
          }
          break;
        }
        case 'range': {
          f.vars.push(new Map());
          try {
            const pipe = { ...n.pipe, decl: [] };
            const v = this.pipe(pipe, dot, f, n.line);
            const items: [unknown, unknown][] = Array.isArray(v)
              ? v.map((x, i) => [i, x])
              : isMap(v)
                ? Object.keys(v).sort().map((k) => [k, v[k]])
                : typeof v === 'number' && Number.isInteger(v)
                  ? Array.from({ length: Math.max(0, v) }, (_, i) => [i, i])
                  : v === null || v === undefined || v === NO_VALUE
                    ? []
                    : this.fail(f, n.line, `range can't iterate over ${formatValue(v)}`);
            if (items.length === 0) {
              if (n.else) {
                const r = this.walk(n.else, dot, f, out, depth + 1);
                if (r) return r;
              }
              break;
            }
            for (const [k, x] of items) {
              const scope = f.vars[f.vars.length - 1]!;
              if (n.pipe.decl.length === 1) scope.set(n.pipe.decl[0]!, x);
              if (n.pipe.decl.length === 2) {
                scope.set(n.pipe.decl[0]!, k);
                scope.set(n.pipe.decl[1]!, x);
              }
              const r = this.walk(n.list, x, f, out, depth + 1);
              if (r === BREAK) break;
            }
          } finally {
            f.vars.pop();
          }
          break;
        }
        case 'template': {
          const t = f.trees.get(n.name);
          if (!t) this.fail(f, n.line, `template: no such template ${JSON.stringify(n.name)}`);
          if (++f.calls.n > MAX_TEMPLATE_CALLS) this.fail(f, n.line, 'too many template calls');
          const v = n.pipe ? this.pipe(n.pipe, dot, f, n.line) : null;
          // A called template sees only its own $ (the value it was given).
          this.walk(t!, v, { name: n.name, vars: [new Map([['$', v]])], calls: f.calls, trees: f.trees }, out, depth + 1);
          break;
        }
        case 'break':
          return BREAK;
        case 'continue':
          return CONTINUE;
      }
    }
    return undefined;
  }

  private fail(f: Frame, line: number, m: string): never {
    throw new TemplateExecError(`template: ${f.name}:${line}: executing ${JSON.stringify(f.name)}: ${m}`);
  }

  private lookupVar(f: Frame, name: string, line: number): unknown {
    for (let i = f.vars.length - 1; i >= 0; i--) if (f.vars[i]!.has(name)) return f.vars[i]!.get(name);
    return this.fail(f, line, `undefined variable: ${name}`);
  }

  private pipe(p: Pipe, dot: unknown, f: Frame, line: number): unknown {
    let v: unknown = undefined;
    let has = false;
    for (const cmd of p.cmds) {
      v = this.command(cmd.args, dot, f, line, has ? [v] : []);
      has = true;
    }
    if (p.decl.length > 0) {
      if (p.assign) {
        for (let i = f.vars.length - 1; i >= 0; i--) {
          if (f.vars[i]!.has(p.decl[0]!)) {
            f.vars[i]!.set(p.decl[0]!, v);
            return v;
          }
        }
        this.fail(f, line, `undefined variable: ${p.decl[0]}`);
      }
      f.vars[f.vars.length - 1]!.set(p.decl[0]!, v);
    }
    return v;
  }

  private command(args: Arg[], dot: unknown, f: Frame, line: number, piped: unknown[]): unknown {
    const first = args[0]!;
    if (first.k === 'nil') this.fail(f, line, 'nil is not a command');
    if (first.k === 'ident') {
      const fn = this.funcs[first.name];
      if (!fn) this.fail(f, line, `function ${JSON.stringify(first.name)} not defined`);
      // The builtins' argument counts, as Go checks them before the call.
      const arity = BUILTIN_ARITY[first.name];
      if (arity && fn === BUILTINS[first.name]) {
        const n = args.length - 1 + piped.length;
        if (n < arity[0]) this.fail(f, line, `wrong number of args for ${first.name}: want ${arity[1] === arity[0] ? '' : 'at least '}${arity[0]} got ${n}`);
        if (n > arity[1]) this.fail(f, line, `wrong number of args for ${first.name}: want ${arity[1]} got ${n}`);
      }
      // and/or stop at the first operand that decides (Go 1.18+).
      if ((first.name === 'and' || first.name === 'or') && piped.length === 0) {
        let last: unknown;
        for (const a of args.slice(1)) {
          last = this.arg(a, dot, f, line);
          if (first.name === 'and' ? !truth(last) : truth(last)) return last;
        }
        return last;
      }
      const values = [...args.slice(1).map((a) => this.arg(a, dot, f, line)), ...piped];
      try {
        return fn!(...values);
      } catch (e) {
        if (e instanceof TemplateExecError && !e.message.startsWith('template:')) this.fail(f, line, e.message);
        throw e;
      }
    }
    // A field or method chain, possibly called with the rest as arguments.
    if (args.length > 1 || piped.length > 0) {
      const target = first.k === 'field' || first.k === 'var' || first.k === 'sub' ? first : undefined;
      if (!target || target.names.length === 0) this.fail(f, line, `can't give argument to non-function ${describeArg(first)}`);
      const base = target.k === 'field' ? dot : target.k === 'var' ? this.lookupVar(f, target.name, line) : this.pipe(target.pipe, dot, f, line);
      const owner = this.chain(base, target.names.slice(0, -1), f, line);
      const method = target.names[target.names.length - 1]!;
      const m = owner !== null && typeof owner === 'object' ? (owner as Record<string, unknown>)[method] : undefined;
      if (typeof m !== 'function') this.fail(f, line, `can't give argument to non-function .${method}`);
      const values = [...args.slice(1).map((a) => this.arg(a, dot, f, line)), ...piped];
      return (m as TemplateFunc).apply(owner, values);
    }
    return this.arg(first, dot, f, line);
  }

  private arg(a: Arg, dot: unknown, f: Frame, line: number): unknown {
    switch (a.k) {
      case 'lit':
        return a.value;
      case 'nil':
        return null;
      case 'field':
        return this.chain(dot, a.names, f, line);
      case 'var':
        return this.chain(this.lookupVar(f, a.name, line), a.names, f, line);
      case 'sub':
        return this.chain(this.pipe(a.pipe, dot, f, line), a.names, f, line);
      case 'ident': {
        const fn = this.funcs[a.name];
        if (!fn) this.fail(f, line, `function ${JSON.stringify(a.name)} not defined`);
        return fn!();
      }
    }
  }

  /** `.A.B.C` on a value: map keys, object fields, methods without arguments. */
  private chain(v: unknown, names: string[], f: Frame, line: number): unknown {
    let cur = v;
    for (const name of names) {
      if (cur === null || cur === undefined || cur === NO_VALUE) {
        if (cur === NO_VALUE || cur === undefined) return NO_VALUE;
        this.fail(f, line, `nil pointer evaluating .${name}`);
      }
      if (isMap(cur)) {
        const val = Object.prototype.hasOwnProperty.call(cur, name) ? cur[name] : missing(cur);
        cur = typeof val === 'function' ? (val as TemplateFunc).call(cur) : val;
        continue;
      }
      if (typeof cur === 'object') {
        const val = (cur as Record<string, unknown>)[name];
        if (val === undefined) this.fail(f, line, `can't evaluate field ${name} in type ${typeName(cur)}`);
        cur = typeof val === 'function' ? (val as TemplateFunc).call(cur) : val;
        continue;
      }
      this.fail(f, line, `can't evaluate field ${name} in type ${typeof cur === 'string' ? 'string' : typeof cur === 'number' ? 'int' : typeof cur}`);
    }
    return cur;
  }
}

function describeArg(a: Arg): string {
  if (a.k === 'lit') return formatValue(a.value);
  if (a.k === 'nil') return 'nil';
  return a.k;
}

function typeName(v: object): string {
  if (GO_TYPE in v) return String((v as Record<symbol, unknown>)[GO_TYPE]);
  return Array.isArray(v) ? '[]interface {}' : (v.constructor?.name ?? 'struct');
}

/** Go refuses, at parse time, a template that calls a function it does not know or uses a variable not in scope. */
function checkFunctions(name: string, nodes: Node[], funcs: Record<string, TemplateFunc>): void {
  const fail = (line: number, m: string): never => {
    throw new TemplateSyntaxError(`template: ${name}:${line}: ${m}`);
  };
  type Scope = Set<string>[];
  const known = (scope: Scope, v: string) => v === '$' || scope.some((s) => s.has(v));
  const pipe = (p: Pipe | undefined, line: number, scope: Scope) => {
    if (!p) return;
    // As Go's parser: a declared (or assigned) name is in scope from there on, even in its own pipeline.
    for (const d of p.decl) scope[scope.length - 1]!.add(d);
    for (const cmd of p.cmds) for (const a of cmd.args) arg(a, line, scope);
  };
  const arg = (a: Arg, line: number, scope: Scope) => {
    if (a.k === 'ident' && !funcs[a.name]) fail(line, `function ${JSON.stringify(a.name)} not defined`);
    if (a.k === 'var' && !known(scope, a.name)) fail(line, `undefined variable ${JSON.stringify(a.name)}`);
    if (a.k === 'sub') pipe(a.pipe, line, scope);
  };
  const walk = (list: Node[] | undefined, scope: Scope) => {
    for (const n of list ?? []) {
      if (n.k === 'action' || n.k === 'template') pipe(n.pipe, n.line, scope);
      if (n.k === 'if' || n.k === 'with' || n.k === 'range') {
        // A control structure's variables live until its {{end}}, in both branches.
        const inner = [...scope, new Set<string>()];
        pipe(n.pipe, n.line, inner);
        walk(n.list, inner);
        walk(n.else, inner);
      }
    }
  };
  walk(nodes, [new Set()]);
}
