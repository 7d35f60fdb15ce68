/** Go text/template, parsing the lexed pieces into a tree per template name. */
import { lex, TemplateSyntaxError, type Piece, type Token } from './lex.js';

export type Arg =
  | { k: 'field'; names: string[] }
  | { k: 'var'; name: string; names: string[] }
  | { k: 'ident'; name: string }
  | { k: 'lit'; value: unknown; int?: boolean }
  | { k: 'nil' }
  | { k: 'sub'; pipe: Pipe; names: string[] };

export interface Cmd {
  args: Arg[];
}

export interface Pipe {
  decl: string[];
  assign: boolean;
  cmds: Cmd[];
}

export type Node =
  | { k: 'text'; text: string }
  | { k: 'action'; pipe: Pipe; line: number; src: string }
  | { k: 'if' | 'with' | 'range'; pipe: Pipe; list: Node[]; else?: Node[]; line: number }
  | { k: 'template'; name: string; pipe?: Pipe; line: number }
  | { k: 'break' | 'continue'; line: number };

/** Parse `src`; its top level becomes template `name`, each `define`/`block` one more. */
export function parseTemplates(name: string, src: string): Map<string, Node[]> {
  const pieces = lex(name, src);
  const out = new Map<string, Node[]>();
  let pos = 0;
  const fail = (line: number, m: string): never => {
    throw new TemplateSyntaxError(`template: ${name}:${line}: ${m}`);
  };

  /** Nodes until one of `stops` (an action starting with that keyword); returns it too. */
  const list = (stops: string[], depth: { range: number }): { nodes: Node[]; stop?: { word: string; tokens: Token[]; line: number } } => {
    const nodes: Node[] = [];
    while (pos < pieces.length) {
      const p: Piece = pieces[pos++]!;
      if (p.kind === 'text') {
        nodes.push({ k: 'text', text: p.text });
        continue;
      }
      if (p.kind === 'comment') continue;
      const first = p.tokens[0];
      const word = first?.t === 'ident' ? first.name : '';
      if (stops.includes(word)) return { nodes, stop: { word, tokens: p.tokens.slice(1), line: p.line } };
      if (word === 'end' || word === 'else') fail(p.line, `unexpected {{${word}}}`);
      if (p.tokens.length === 0) fail(p.line, 'missing value for command');
      if (word === 'if' || word === 'with' || word === 'range') {
        nodes.push(control(word, p.tokens.slice(1), p.line, depth));
      } else if (word === 'template' || word === 'block') {
        const rest = p.tokens.slice(1);
        const n = rest[0];
        if (!n || n.t !== 'string') fail(p.line, `unexpected ${describe(n)} in ${word} clause`);
        const tname = (n as { value: string }).value;
        const pipe = rest.length > 1 ? pipeline(rest.slice(1), p.line) : undefined;
        if (word === 'block') {
          const body = list(['end'], { range: 0 });
          if (!body.stop) fail(p.line, 'unexpected EOF');
          define(tname, body.nodes, body.stop!.line);
        }
        nodes.push({ k: 'template', name: tname, ...(pipe ? { pipe } : {}), line: p.line });
      } else if (word === 'define') {
        const n = p.tokens[1];
        if (!n || n.t !== 'string') fail(p.line, 'define clause needs a template name');
        const body = list(['end'], { range: 0 });
        if (!body.stop) fail(p.line, 'unexpected EOF');
        define((n as { value: string }).value, body.nodes, body.stop!.line);
      } else if (word === 'break' || word === 'continue') {
        if (depth.range === 0) fail(p.line, `{{${word}}} outside {{range}}`);
        nodes.push({ k: word, line: p.line });
      } else {
        nodes.push({ k: 'action', pipe: pipeline(p.tokens, p.line), line: p.line, src: p.src });
      }
    }
    return { nodes };
  };

  const control = (word: 'if' | 'with' | 'range', tokens: Token[], line: number, depth: { range: number }): Node => {
    if (tokens.length === 0) fail(line, `missing value for ${word}`);
    const pipe = pipeline(tokens, line);
    const inner = { range: depth.range + (word === 'range' ? 1 : 0) };
    const body = list(['else', 'end'], inner);
    if (!body.stop) fail(line, 'unexpected EOF');
    const node: Node = { k: word, pipe, list: body.nodes, line };
    if (body.stop!.word === 'else') {
      const rest = body.stop!.tokens;
      const chained = rest[0]?.t === 'ident' && (rest[0].name === 'if' || rest[0].name === 'with') ? rest[0].name : undefined;
      if (chained) {
        // {{else if ...}}: an if inside the else branch, sharing this one's {{end}}.
        node.else = [control(chained as 'if' | 'with', rest.slice(1), body.stop!.line, depth)];
      } else {
        const alt = list(['end'], depth);
        if (!alt.stop) fail(line, 'unexpected EOF');
        node.else = alt.nodes;
      }
    }
    return node;
  };

  const empty = (nodes: Node[]) => nodes.every((x) => x.k === 'text' && x.text.trim() === '');
  /** A name defined twice in one text is an error, unless one of the bodies is empty (Go's rule). */
  const define = (tname: string, nodes: Node[], endLine: number) => {
    const prev = out.get(tname);
    if (prev === undefined || empty(prev)) out.set(tname, nodes);
    else if (!empty(nodes)) fail(endLine, `template: multiple definition of template ${JSON.stringify(tname)}`);
  };
  const top = list([], { range: 0 });
  if (out.has(name) && !empty(top.nodes) && !empty(out.get(name)!)) throw new TemplateSyntaxError(`template: multiple definition of template "${name}"`);
  if (!out.has(name) || !empty(top.nodes)) out.set(name, top.nodes);
  return out;

  function pipeline(tokens: Token[], line: number): Pipe {
    let i = 0;
    const decl: string[] = [];
    let assign = false;
    // `$x :=` / `$x, $y :=` / `$x =`
    const save = i;
    while (tokens[i]?.t === 'var' && (tokens[i] as { names: string[] }).names.length === 0) {
      decl.push((tokens[i] as { name: string }).name);
      i++;
      if (tokens[i]?.t === 'comma') {
        i++;
        continue;
      }
      break;
    }
    if (decl.length > 0 && (tokens[i]?.t === 'declare' || tokens[i]?.t === 'assign')) {
      assign = tokens[i]!.t === 'assign';
      i++;
    } else {
      decl.length = 0;
      i = save;
    }
    const cmds: Cmd[] = [];
    let args: Arg[] = [];
    const endCmd = () => {
      if (args.length === 0) fail(line, 'missing value for command');
      cmds.push({ args });
      args = [];
    };
    while (i < tokens.length) {
      const tk = tokens[i]!;
      if (tk.t === 'pipe') {
        endCmd();
        i++;
        continue;
      }
      if (tk.t === 'lparen') {
        let depth = 1;
        let k = i + 1;
        while (k < tokens.length && depth > 0) {
          if (tokens[k]!.t === 'lparen') depth++;
          if (tokens[k]!.t === 'rparen') depth--;
          k++;
        }
        if (depth !== 0) fail(line, 'unclosed left paren');
        const sub = pipeline(tokens.slice(i + 1, k - 1), line);
        const chain = tokens[k]?.t === 'chainfield' ? (tokens[k] as { names: string[] }).names : [];
        args.push({ k: 'sub', pipe: sub, names: chain });
        i = chain.length > 0 ? k + 1 : k;
        continue;
      }
      if (tk.t === 'rparen') fail(line, 'unexpected right paren');
      args.push(toArg(tk, line));
      i++;
    }
    if (args.length > 0 || cmds.length === 0) endCmd();
    return { decl, assign, cmds };
  }

  function toArg(tk: Token, line: number): Arg {
    switch (tk.t) {
      case 'field':
        return { k: 'field', names: tk.names };
      case 'var':
        return { k: 'var', name: tk.name, names: tk.names };
      case 'ident':
        return { k: 'ident', name: tk.name };
      case 'string':
        return { k: 'lit', value: tk.value };
      case 'number':
        return { k: 'lit', value: tk.value, int: tk.int };
      case 'char':
        return { k: 'lit', value: tk.value, int: true };
      case 'bool':
        return { k: 'lit', value: tk.value };
      case 'nil':
        return { k: 'nil' };
      default:
        return fail(line, `unexpected ${describe(tk)} in command`);
    }
  }
}

function describe(tk: Token | undefined): string {
  if (!tk) return 'end of action';
  return tk.t === 'ident' ? `<${tk.name}>` : `"${tk.t}"`;
}
