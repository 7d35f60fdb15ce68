import { describe, expect, it } from 'vitest';
import { Templates, TemplateExecError, TemplateSyntaxError } from '../../src/gotemplate/index.js';

const run = (text: string, data: unknown = {}) => new Templates().parse('t', text).execute('t', data);

describe('Go template engine: errors are errors, never a crash or a hang', () => {
  it('refuses malformed templates at parse time, naming the line', () => {
    for (const [text, msg] of [
      ['{{ .A', /unclosed action/],
      ['{{ if .A }}x', /unexpected EOF/],
      ['{{ end }}', /unexpected \{\{end\}\}/],
      ['{{ break }}', /outside \{\{range\}\}/],
      ['a\n{{ "x }}', /t:2: unterminated quoted string/],
      ['{{ (1 }}', /unclosed left paren/],
      ['{{/* x }}', /unclosed comment/],
    ] as const) {
      expect(() => run(text), text).toThrow(TemplateSyntaxError);
      expect(() => run(text), text).toThrow(msg);
    }
  });
  it('reports execution errors as Go does, with the template and line', () => {
    expect(() => run('{{ $nope }}')).toThrow(/undefined variable: \$nope/);
    expect(() => run('{{ nofunc 1 }}')).toThrow(/function "nofunc" not defined/);
    expect(() => run('{{ template "missing" }}')).toThrow(/no such template "missing"/);
    expect(() => run('{{ lt 1 "a" }}')).toThrow(/incompatible types for comparison/);
    expect(() => run('{{ index .L 5 }}', { L: [1] })).toThrow(/index out of range/);
    expect(() => run('{{ nil }}')).toThrow(TemplateExecError);
  });
  it('stops a template that calls itself forever with an error, not a stack overflow', () => {
    expect(() => run('{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}')).toThrow(/maximum template depth/);
  });
  it('maps print their keys sorted; missing keys print <no value>; methods are called', () => {
    const data = { M: { b: 2, a: 1 }, O: { Hello(name: string) { return `hi ${name}`; } } };
    expect(run('{{ .M }} {{ .M.zz }} {{ .O.Hello "x" }} {{ "y" | .O.Hello }}', data)).toBe('map[a:1 b:2] <no value> hi x hi y');
  });
});
