import { describe, expect, it } from 'vitest';
import { Templates, TemplateExecError, TemplateSyntaxError } from '../../src/gotemplate/index.js';
import { ALERTMANAGER_FUNCS, templateData } from '../../src/alertmanager/template/data.js';

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
    expect(() => run('{{ $nope }}')).toThrow('template: t:1: undefined variable "$nope"');
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

describe('Go template engine: what Go refuses at parse time', () => {
  const parse = (text: string, name = 'bad.tmpl') => () => new Templates().parse(name, text);
  it('an undefined function, wherever it is named', () => {
    expect(parse('{{ nosuchfunc . }}')).toThrow('template: bad.tmpl:1: function "nosuchfunc" not defined');
    expect(parse('a\n{{ if .X }}{{ .Y | nofn }}{{ end }}')).toThrow('template: bad.tmpl:2: function "nofn" not defined');
    expect(parse('{{ define "x" }}{{ len (nofn 1) }}{{ end }}')).toThrow('function "nofn" not defined');
    expect(parse('{{ with nofn }}{{ end }}')).toThrow(TemplateSyntaxError);
    expect(parse('{{ print .nofn }}')).not.toThrow();
  });
  it('a name defined twice in one text (unless one body is empty); across texts the later wins', () => {
    expect(parse('{{ define "a" }}x{{ end }}\n{{ define "a" }}y\n{{ end }}')).toThrow('template: bad.tmpl:3: template: multiple definition of template "a"');
    expect(parse('{{ define "a" }}x{{ end }}{{ define "a" }} {{ end }}')).not.toThrow();
    const t = new Templates().parse('1', '{{ define "a" }}x{{ end }}').parse('2', '{{ define "a" }}y{{ end }}');
    expect(t.execute('a', null)).toBe('y');
  });
  it('numbers as Go lexes and converts them', () => {
    expect(parse('{{ 1x }}')).toThrow('template: bad.tmpl:1: bad number syntax: "1x"');
    expect(parse('{{ 3kb }}')).toThrow('bad number syntax: "3k"');
    expect(parse('{{ 1e }}')).toThrow('illegal number syntax: "1e"');
    expect(parse('{{ 0x }}')).toThrow('illegal number syntax: "0x"');
    expect(parse('{{ 08 }}')).toThrow('integer overflow: "08"');
    expect(new Templates().parse('n', '{{ 1_000 }} {{ 0x1F }} {{ 017 }} {{ 0o17 }} {{ 0b101 }} {{ 1.5e3 }} {{ -2 }} {{ .5 }} {{ 1. }}').execute('n', null)).toBe('1000 31 15 15 5 1500 -2 0.5 1');
  });
});

describe('Go template engine: execution errors of notification data', () => {
  const data = templateData({ receiver: 'r', status: 'firing', alerts: [{ status: 'firing', labels: { a: 'b' }, annotations: {}, startsAt: 0, endsAt: 0, generatorURL: '', fingerprint: 'f' }], groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: '' });
  const run = (text: string) => new Templates(ALERTMANAGER_FUNCS).parse('t', text).execute('t', data);
  it('a field the data does not have is an error (a label it does not have is "")', () => {
    expect(() => run('{{ .Nope }}')).toThrow('can\'t evaluate field Nope in type *template.Data');
    expect(() => run('{{ range .Alerts }}{{ .Nope }}{{ end }}')).toThrow('can\'t evaluate field Nope in type template.Alert');
    expect(run('[{{ .CommonLabels.nope }}]')).toBe('[]');
  });
  it('eq of incompatible types is an error', () => {
    expect(() => run('{{ eq .Status 1 }}')).toThrow('error calling eq: incompatible types for comparison');
    expect(() => run('{{ if eq (len .Alerts) "1" }}x{{ end }}')).toThrow('incompatible types for comparison');
  });
});

describe('Go template engine: variables out of scope are parse errors, as in Go', () => {
  const parse = (text: string) => () => new Templates().parse('v.tmpl', text);
  it('refuses a variable used before or outside its declaration', () => {
    expect(parse('{{ $x }}')).toThrow('template: v.tmpl:1: undefined variable "$x"');
    expect(parse('{{ if true }}{{ $y := 1 }}{{ end }}\n{{ $y }}')).toThrow('template: v.tmpl:2: undefined variable "$y"');
    expect(parse('{{ range $i, $v := . }}{{ end }}{{ $i }}')).toThrow('undefined variable "$i"');
    // An assignment to an unknown name parses (Go's parser adds it), and fails when run.
    expect(() => new Templates().parse('v', '{{ $z = 1 }}').execute('v', null)).toThrow('undefined variable: $z');
    expect(parse('{{ define "d" }}{{ $top }}{{ end }}{{ $top := 1 }}')).toThrow('undefined variable "$top"');
  });
  it('accepts variables in scope', () => {
    for (const t of ['{{ $x := 1 }}{{ $x }}{{ $x = 2 }}', '{{ if $a := . }}{{ $a }}{{ else }}{{ $a }}{{ end }}', '{{ range $i, $v := . }}{{ $i }}{{ $v }}{{ $ }}{{ end }}', '{{ with $w := . }}{{ range . }}{{ $w }}{{ end }}{{ end }}', '{{ $x := 1 }}{{ if true }}{{ $x = 3 }}{{ end }}{{ $x }}', '{{ $x := $x }}'])
      expect(parse(t), t).not.toThrow();
  });
});
