/**
 * Contextual autoescaping (Go's html/template): each table row is a template, the output Go
 * prints for it, by context. The cases follow the behaviour Go's own html/template tests pin down.
 */
import { describe, expect, it } from 'vitest';
import { GO_FORMAT, SAFE_HTML, Templates } from '../../src/gotemplate/index.js';
import { cssEscaper, cssValueFilter, htmlNameFilter, jsValEscaper, stripTags, urlEscaper, urlNormalizer } from '../../src/gotemplate/html/escapers.js';

const W = { [GO_FORMAT]: () => `&iexcl;<b class="foo">Hello</b>, <textarea>O'World</textarea>!`, [SAFE_HTML]: true };
const DATA = { F: false, T: true, C: '<Cincinnati>', G: '<Goodbye>', H: '<Hello>', A: ['<a>', '<b>'], E: [], N: 42, U: null, W, M: { k: 'v', a: [1, 2.5] } };
const html = (text: string, data: unknown = DATA, funcs = {}) => new Templates(funcs).parse('z', text).execute('z', data, { html: true });

const TABLES: Record<string, [string, string][]> = {
  'HTML text': [
    ['{{if .T}}Hello{{end}}, {{.C}}!', 'Hello, &lt;Cincinnati&gt;!'],
    ['{{if .F}}{{.H}}{{else}}{{.G}}{{end}}!', '&lt;Goodbye&gt;!'],
    ['{{with .C}}{{$msg := .}}Hello, {{$msg}}!{{end}}', 'Hello, &lt;Cincinnati&gt;!'],
    ['{{range .A}}{{.}}{{end}}', '&lt;a&gt;&lt;b&gt;'],
    ['{{range .E}}{{.}}{{else}}{{.H}}{{end}}', '&lt;Hello&gt;'],
    ['{{.T}} {{.N}}', 'true 42'],
    ['[{{.U}}]', '[]'],
    [`{{"a+b 'q' \\"d\\" & \\x00"}}`, 'a&#43;b &#39;q&#39; &#34;d&#34; &amp; \ufffd'],
    ['{{.A}}', '[&lt;a&gt; &lt;b&gt;]'],
    ['a < b', 'a &lt; b'],
    ['a << b', 'a &lt;&lt; b'],
    ['<!DOCTYPE html>Hi', '<!DOCTYPE html>Hi'],
    ['<!doCtYPE htMl>Hi', '<!doCtYPE htMl>Hi'],
    [`<!{{"DOCTYPE"}}`, '&lt;!DOCTYPE'],
    [`{{"10$"}}<{{"script src,evil.org/pwnd.js"}}...`, '10$&lt;script src,evil.org/pwnd.js...'],
    [`<{{"!--"}}`, '&lt;!--'],
    ['<p class=x>literal & text "stays"</p>', '<p class=x>literal & text "stays"</p>'],
  ],
  'predefined escapers not applied twice': [
    ['Hello, {{.C | html}}!', 'Hello, &lt;Cincinnati&gt;!'],
    ['Hello, {{html .C}}!', 'Hello, &lt;Cincinnati&gt;!'],
    // text/template's html does not escape '+'; html/template's own escaper does.
    ['{{ "a+b" }} {{ "a+b" | html }}', 'a&#43;b a+b'],
    ['<a href="/q?x={{.C | urlquery}}">', '<a href="/q?x=%3CCincinnati%3E">'],
    ['{{.C | urlquery}}', '%3CCincinnati%3E'],
    [`<button onclick='alert({{.A | html}})'>`, `<button onclick='alert([&#34;\\u003ca\\u003e&#34;,&#34;\\u003cb\\u003e&#34;])'>`],
    [`<button onclick='alert({{.C | urlquery}})'>`, `<button onclick='alert(&#34;%3CCincinnati%3E&#34;)'>`],
  ],
  'HTML comments': [
    ['<b>Hello, <!-- name of world -->{{.C}}</b>', '<b>Hello, &lt;Cincinnati&gt;</b>'],
    ['<<!-- -->!--', '&lt;!--'],
    ['a<<!-- --><!-- -->b', 'a&lt;b'],
    ['<b>Hello, <!-- name of {{if .T}}city -->{{.C}}{{else}}world -->{{.W}}{{end}}</b>', '<b>Hello, &lt;Cincinnati&gt;</b>'],
    ['<p><!-- {{.H}} --></p>', '<p></p>'],
  ],
  attributes: [
    ['<a b=1 c={{.H}}>', '<a b=1 c=&lt;Hello&gt;>'],
    ['<a title="{{.H}}" alt=\'{{"it\'s"}}\'>', '<a title="&lt;Hello&gt;" alt=\'it&#39;s\'>'],
    ['<a title={{"a b=c"}}>', '<a title=a&#32;b&#61;c>'],
    [`<div title="{{.W}}">`, `<div title="&iexcl;Hello, O&#39;World!">`],
    ['<input{{if .T}} checked{{end}} name=n>', '<input checked name=n>'],
    ['<input{{if .T}} {{"checked"}}{{end}} name=n>', '<input checked name=n>'],
    ['<input {{if .T}}{{"checked"}} {{end}}name=n>', '<input checked name=n>'],
    [`<img on{{"load"}}="alert({{"loaded"}})">`, `<img onload="alert(&#34;loaded&#34;)">`],
    [`<input {{"onchange"}}="{{"doEvil()"}}">`, `<input ZgotmplZ="doEvil()">`],
    [`<div {{"sTyle"}}="{{"color: expression(alert(1337))"}}">`, `<div ZgotmplZ="color: expression(alert(1337))">`],
    [`<img {{"src"}}="{{"javascript:doEvil()"}}">`, `<img ZgotmplZ="javascript:doEvil()">`],
    [`<input checked {{""}}="Whose value am I?">`, `<input checked ZgotmplZ="Whose value am I?">`],
    [`<h{{3}}><table><t{{"head"}}>...</h{{3}}>`, `<h3><table><thead>...</h3>`],
    [`<{{"script"}}>{{"doEvil()"}}</{{"script"}}>`, `&lt;script>doEvil()&lt;/script>`],
    [
      `<img class="{{"iconClass"}}"{{if .T}} id="{{"<iconId>"}}"{{end}} src={{if .T}}"?{{"<iconPath>"}}"{{else}}"images/cleardot.gif"{{end}}{{if .T}}title="{{"<title>"}}"{{end}} alt="{{if .T}}{{"<alt>"}}{{else}}{{if .F}}{{"<title>"}}{{end}}{{end}}">`,
      `<img class="iconClass" id="&lt;iconId&gt;" src="?%3ciconPath%3e"title="&lt;title&gt;" alt="&lt;alt&gt;">`,
    ],
  ],
  URLs: [
    [`<a href="/search?q={{"'a<b'"}}">`, `<a href="/search?q=%27a%3cb%27">`],
    [`<a href='{{"/foo/bar?a=b&c=d"}}'>`, `<a href='/foo/bar?a=b&amp;c=d'>`],
    [`<a href='{{"http://example.com/foo/bar?a=b&c=d"}}'>`, `<a href='http://example.com/foo/bar?a=b&amp;c=d'>`],
    [`<a href='{{"//example.com:8000/foo/bar?a=b&c=d"}}'>`, `<a href='//example.com:8000/foo/bar?a=b&amp;c=d'>`],
    [`<a href="{{"/javascript:80/foo/bar"}}">`, `<a href="/javascript:80/foo/bar">`],
    [`<a href='{{"javascript:alert(%22pwned%22)"}}'>`, `<a href='#ZgotmplZ'>`],
    [`<a href='{{"JavaScript:alert(1)"}}'>`, `<a href='#ZgotmplZ'>`],
    [`<a href='{{"data:text/html,x"}}'>`, `<a href='#ZgotmplZ'>`],
    [`<a href='  {{"javascript:alert(%22pwned%22)"}}'>`, `<a href='  #ZgotmplZ'>`],
    [`<a href={{"mailto:Muhammed \\"The Greatest\\" Ali <m.ali@example.com>"}}>`, `<a href=mailto:Muhammed%20%22The%20Greatest%22%20Ali%20%3cm.ali@example.com%3e>`],
    [`<a href='http://{{"javascript:80"}}/foo'>`, `<a href='http://javascript:80/foo'>`],
    [`<a href='/search?q={{.H}}'>`, `<a href='/search?q=%3cHello%3e'>`],
    [`<a href='/faq#{{.H}}'>`, `<a href='/faq#%3cHello%3e'>`],
    [`<a href="{{if .F}}/foo?a=b{{else}}/bar{{end}}">`, `<a href="/bar">`],
    [`<a href="{{if .T}}/foo?a={{else}}/bar#{{end}}{{.C}}">`, `<a href="/foo?a=%3cCincinnati%3e">`],
    [`<a href="/x?v={{"a b&c=d/é+"}}">`, `<a href="/x?v=a%20b%26c%3dd%2f%c3%a9%2b">`],
    [`<a href="{{"/a b/%41%zz"}}">`, `<a href="/a%20b/%41%25zz">`],
    [`<img srcset="{{"/not-an-image#,javascript:alert(1)"}}">`, `<img srcset="/not-an-image#,#ZgotmplZ">`],
    [`<img srcset={{",,,,"}}>`, `<img srcset=,,,,>`],
    [`<a data-url="{{"javascript:x"}}" xlink:href="{{"vbscript:y"}}" data-title="{{"javascript:z"}}">`, `<a data-url="#ZgotmplZ" xlink:href="#ZgotmplZ" data-title="javascript:z">`],
  ],
  JavaScript: [
    [`<button onclick='alert({{.H}})'>`, `<button onclick='alert(&#34;\\u003cHello\\u003e&#34;)'>`],
    [`<button onclick='alert({{.N}})'>`, `<button onclick='alert( 42 )'>`],
    [`<button onclick='alert({{.T}})'>`, `<button onclick='alert( true )'>`],
    [`<button onclick='alert(typeof{{.U}})'>`, `<button onclick='alert(typeof null )'>`],
    [`<button onclick='alert({{.A}})'>`, `<button onclick='alert([&#34;\\u003ca\\u003e&#34;,&#34;\\u003cb\\u003e&#34;])'>`],
    [`<script>alert({{.A}})</script>`, `<script>alert(["\\u003ca\\u003e","\\u003cb\\u003e"])</script>`],
    [`<script>var m = {{.M}};</script>`, `<script>var m = {"a":[1,2.5],"k":"v"};</script>`],
    ['<script type=" ">{{.H}}</script>', '<script type=" ">"\\u003cHello\\u003e"</script>'],
    ['<script type="">{{.H}}</script>', '<script type="">"\\u003cHello\\u003e"</script>'],
    ['<script type="text/template">{{.H}}</script>', '<script type="text/template">&lt;Hello&gt;</script>'],
    [`<button onclick='alert(&quot;{{.H}}&quot;)'>`, `<button onclick='alert(&quot;\\u003cHello\\u003e&quot;)'>`],
    [`<script>var s = "{{"a\\"b'c\\\\d</script>\\n\u2028"}}";</script>`, `<script>var s = "a\\u0022b\\u0027c\\\\d\\u003c\\/script\\u003e\\n\\u2028";</script>`],
    [`<script>var s = '{{"+&"}}';</script>`, `<script>var s = '\\u002b\\u0026';</script>`],
    [`<button onclick='alert(/{{"foo+bar"}}/.test(""))'>`, `<button onclick='alert(/foo\\u002bbar/.test(""))'>`],
    [`<script>alert(/{{""}}/.test(""));</script>`, `<script>alert(/(?:)/.test(""));</script>`],
    ['<script>{{if true}}var x = 1{{end}}</script>', '<script>var x = 1</script>'],
    [`<script>var x = {{"\u2028"}};</script>`, `<script>var x = "\\u2028";</script>`],
    ['<script>for (;;) { if (c()) break// foo not a label\nfoo({{.T}});}</script>', '<script>for (;;) { if (c()) break\nfoo( true );}</script>'],
    ['<script>for (;;) { if (c()) break/* foo not a label\n */foo({{.T}});}</script>', '<script>for (;;) { if (c()) break\nfoo( true );}</script>'],
    ['<script>for (;;) {\nif (c()) break/* foo a label */foo;x({{.T}});}</script>', '<script>for (;;) {\nif (c()) break foo;x( true );}</script>'],
    ['<script>var a/*b*//c\nd</script>', '<script>var a /c\nd</script>'],
    ['<script>var a/*b*///c\nd</script>', '<script>var a \nd</script>'],
    [`<a onclick="f(&quot;&quot;); /* alert({{.H}}) */">`, `<a onclick="f(&quot;&quot;); /* alert() */">`],
    [`<a onclick="// alert({{.G}})">`, `<a onclick="// alert()">`],
    [`<button onclick="alert({{.W}})">`, `<button onclick="alert(&#34;\\u0026iexcl;\\u003cb class=\\&#34;foo\\&#34;\\u003eHello\\u003c/b\\u003e, \\u003ctextarea\\u003eO&#39;World\\u003c/textarea\\u003e!&#34;)">`],
  ],
  CSS: [
    [`<p style="dir: {{"ltr"}}">`, `<p style="dir: ltr">`],
    [`<p style="border-{{"left"}}: 0; border-{{"right"}}: 1in">`, `<p style="border-left: 0; border-right: 1in">`],
    [`<p style="width: {{"expression(alert(1337))"}}">`, `<p style="width: ZgotmplZ">`],
    [`<style>{{"p"}} { color: pink }</style>`, `<style>p { color: pink }</style>`],
    [`<style>p{{"#my-ID"}} { font: Arial }</style>`, `<style>p#my-ID { font: Arial }</style>`],
    [`<a style="left: {{"2em"}}; top: {{0}}">`, `<a style="left: 2em; top: 0">`],
    [`<table style=width:{{"100%"}}>`, `<table style=width:100%>`],
    [`<p style="color: {{"#8ff"}}; background: {{"#000"}}">`, `<p style="color: #8ff; background: #000">`],
    [`<p style="width: {{"  e\\\\78preS\\x00Sio/**/n(alert(1337))"}}">`, `<p style="width: ZgotmplZ">`],
    [`<p style="{{"-moz-binding(alert(1337))"}}: ...">`, `<p style="ZgotmplZ: ...">`],
    [`<p style='font-family: "{{"Times New Roman"}}"'>`, `<p style='font-family: "Times New Roman"'>`],
    [`<p style='font-family: {{"Times New Roman"}}'>`, `<p style='font-family: Times New Roman'>`],
    [`<p style="background: url(/img?name={{"O'Reilly Animal(1)<2>.png"}})">`, `<p style="background: url(/img?name=O%27Reilly%20Animal%281%29%3c2%3e.png)">`],
    [`<p style="background: url('/img?name={{"O'Reilly Animal(1)<2>.png"}}')">`, `<p style="background: url('/img?name=O%27Reilly%20Animal%281%29%3c2%3e.png')">`],
    [`<a style="background: url('{{"javascript:alert(1337)"}}')">`, `<a style="background: url('#ZgotmplZ')">`],
    [`<a style="background: '{{"vbscript:alert(1337)"}}'">`, `<a style="background: '#ZgotmplZ'">`],
    [`<a style="background: '{{"javascript\\\\3a alert(1337)"}}'">`, `<a style="background: 'javascript\\\\3a alert\\28 1337\\29 '">`],
    [`<a style="background: '{{"http://oreilly.com/O'Reilly Animals(1)<2>;{}.html"}}'">`, `<a style="background: 'http\\3a\\2f\\2foreilly.com\\2fO\\27Reilly Animals\\28 1\\29\\3c 2\\3e\\3b\\7b\\7d.html'">`],
    [`<a style="background: url('{{"/search?img=foo&size=icon"}}')">`, `<a style="background: url('/search?img=foo&amp;size=icon')">`],
    [`<style>body { background: url('{{"/search?img=foo&size=icon"}}') }</style>`, `<style>body { background: url('/search?img=foo&size=icon') }</style>`],
    [`<p style="background: URL(#{{.H}})">`, `<p style="background: URL(#%3cHello%3e)">`],
    [`<a style='{{"color: red"}}'>`, `<a style='color: red'>`],
    ['<style>p// paragraph\n{border: 1px/* color */{{"#00f"}}}</style>', '<style>p\n{border: 1px #00f}</style>'],
    [`<a style="/* color: {{.H}} */">`, `<a style="/* color:  */">`],
  ],
  'raw text and RCDATA': [
    [`<textarea>{{.W}}</textarea>`, `<textarea>&iexcl;&lt;b class=&#34;foo&#34;&gt;Hello&lt;/b&gt;, &lt;textarea&gt;O&#39;World&lt;/textarea&gt;!</textarea>`],
    ['<textarea>{{range .A}}{{.}}{{end}}</textarea>', '<textarea>&lt;a&gt;&lt;b&gt;</textarea>'],
    [`<textarea><{{"/textarea "}}...</textarea>`, `<textarea>&lt;/textarea ...</textarea>`],
    ['<title>{{.H}} & co</title>', '<title>&lt;Hello&gt; & co</title>'],
    ['{{.W}}', `&iexcl;<b class="foo">Hello</b>, <textarea>O'World</textarea>!`],
  ],
  'comments stripped everywhere': [
    ['<!--{{.}}--><script>/*{{.}}*///{{.}}\n</script><style>/*{{.}}*///{{.}}\n</style><a onclick=\'/*{{.}}*///{{.}}\' style=\'/*{{.}}*///{{.}}\'>', "<script> \n</script><style> \n</style><a onclick='/**///' style='/**///'>"],
  ],
};

describe('html/template escaping by context', () => {
  for (const [name, rows] of Object.entries(TABLES)) {
    it(name, () => {
      for (const [input, want] of rows) expect(html(input), input).toBe(want);
    });
  }

  it('leaves text mode alone: the same template executed as text is not escaped', () => {
    const t = new Templates().parse('z', '<a href="{{.}}">{{.}}</a>');
    expect(t.execute('z', 'javascript:x<')).toBe('<a href="javascript:x<">javascript:x<</a>');
    expect(t.execute('z', 'javascript:x<', { html: true })).toBe('<a href="#ZgotmplZ">javascript:x&lt;</a>');
    // and text again after HTML (the escaped copy does not replace the template)
    expect(t.execute('z', 'a+b')).toBe('<a href="a+b">a+b</a>');
  });
});

describe('templates called in other contexts', () => {
  const data = { Children: [{ X: 'foo' }, { X: '<bar>' }, { Children: [{ X: 'baz' }] }] };
  const SETS: [Record<string, string>, string][] = [
    [{ main: '' }, ''],
    [{ main: 'Hello, {{template "helper"}}!', helper: '{{"<World>"}}' }, 'Hello, &lt;World&gt;!'],
    [{ main: `<a onclick='a = {{template "helper"}};'>`, helper: '{{"<a>"}}<b' }, `<a onclick='a = &#34;\\u003ca\\u003e&#34;<b;'>`],
    [{ main: '{{range .Children}}{{template "main" .}}{{else}}{{.X}} {{end}}' }, 'foo &lt;bar&gt; baz '],
    [{ main: '{{template "helper" .}}', helper: '{{if .Children}}<ul>{{range .Children}}<li>{{template "main" .}}</li>{{end}}</ul>{{else}}{{.X}}{{end}}' }, '<ul><li>foo</li><li>&lt;bar&gt;</li><li><ul><li>baz</li></ul></li></ul>'],
    [{ main: '<blockquote>{{range .Children}}{{template "helper" .}}{{end}}</blockquote>', helper: '{{if .Children}}{{template "main" .}}{{else}}{{.X}}<br>{{end}}' }, '<blockquote>foo<br>&lt;bar&gt;<br><blockquote>baz<br></blockquote></blockquote>'],
    [{ main: `<button onclick="title='{{template "helper"}}'; ...">{{template "helper"}}</button>`, helper: '{{11}} of {{"<100>"}}' }, `<button onclick="title='11 of \\u003c100\\u003e'; ...">11 of &lt;100&gt;</button>`],
    [{ main: '<script>var x={{template "helper"}}/{{"42"}};</script>', helper: '{{126}}' }, '<script>var x= 126 /"42";</script>'],
    [{ main: '<script>var x=[{{template "countdown" 4}}];</script>', countdown: '{{.}}{{if .}},{{template "countdown" . | pred}}{{end}}' }, '<script>var x=[ 4 , 3 , 2 , 1 , 0 ];</script>'],
  ];
  const pred = (a: unknown) => (typeof a === 'number' && a > 0 ? a - 1 : null);
  it('escapes each called template for the context it is called in', () => {
    for (const [set, want] of SETS) {
      const src = Object.entries(set).map(([k, v]) => `{{define "${k}"}}${v}{{end}} `).join('');
      expect(new Templates({ pred }).parse('root', src).execute('main', data, { html: true }), src).toBe(want);
    }
  });
});

describe('templates html/template refuses', () => {
  const ERRORS: [string, string][] = [
    ['{{if .Cond}}<a>{{else}}<b>{{end}}', ''],
    ['{{if .Cond}}<a>{{end}}', ''],
    ['{{with .Cond}}<div>{{end}}', ''],
    ["<a href='/foo?{{range .Items}}&{{.K}}={{.V}}{{end}}'>", ''],
    ['{{range .Items}}<a{{if .X}}{{end}}>{{end}}', ''],
    ['{{range .Items}}<a{{if .X}}{{end}}>{{break}}{{end}}', ''],
    ['{{if .Cond}}<a{{end}}', 'html/template:z:1: {{if}} branches end in different contexts'],
    ['{{if .Cond}}\n{{else}}\n<a{{end}}', '{{if}} branches'],
    [`{{if .Cond}}<a href="foo">{{else}}<a href="bar>{{end}}`, '{{if}} branches'],
    ["<a {{if .Cond}}href='{{else}}title='{{end}}{{.X}}'>", '{{if}} branches'],
    ['\n{{with .X}}<a{{end}}', 'html/template:z:2: {{with}} branches'],
    ['{{range .Items}}<a{{end}}', 'on range loop re-entry: "<" in attribute name: "<a"'],
    ['\n{{range .Items}} x=\'<a{{end}}', 'html/template:z:2: on range loop re-entry: {{range}} branches'],
    ['{{range .Items}}<a{{if .X}}{{break}}{{end}}>{{end}}', 'at range loop break: {{range}} branches end in different contexts'],
    ['{{range .Items}}<a{{if .X}}{{continue}}{{end}}>{{end}}', 'at range loop continue: {{range}} branches end in different contexts'],
    ['<a b=1 c={{.H}}', 'html/template:z: ends in a non-text context: {stateAttr delimSpaceOrTagEnd'],
    ['<script>foo();', 'ends in a non-text context: {stateJS'],
    [`<a href="{{if .F}}/foo?a={{else}}/bar/{{end}}{{.H}}">`, '{{.H}} appears in an ambiguous context within a URL'],
    [`<a onclick="alert('Hello \\`, 'unfinished escape sequence in JS string: "Hello \\\\"'],
    [`<a onclick="/foo[\\]/`, 'unfinished JS regexp charset: "foo[\\\\]/"'],
    [`<script>{{if false}}var x = 1{{end}}/-{{"1.5"}}/i.test(x)</script>`, `'/' could start a division or regexp: "/-"`],
    ['{{template "foo"}}', 'no such template "foo"'],
    [`<div{{template "y"}}>{{define "y"}} foo<b{{end}}`, '"<" in attribute name: " foo<b"'],
    [`<script>reverseList = [{{template "t"}}]</script>{{define "t"}}{{if .Tail}}{{template "t" .Tail}}{{end}}{{.Head}}",{{end}}`, 'cannot compute output context for template t$htmltemplate_stateJS_elementScript'],
    [`<input type=button value=onclick=>`, `"=" in unquoted attr: "onclick="`],
    [`<input type=button value= 1+1=2>`, `"=" in unquoted attr: "1+1=2"`],
    [`<a class=\`foo>`, '"`" in unquoted attr: "`foo"'],
    ['<a href="{{.X | urlquery | html}}">', 'predefined escaper "urlquery" disallowed in template'],
    ['<a title={{.X | html}}>', 'predefined escaper "html" disallowed in template'],
    ['<script>var a = `{{.X}}`</script>', '{{.X}} appears in a JS template literal'],
  ];
  it('fails the execution with Go’s description, and prints nothing', () => {
    for (const [src, want] of ERRORS) {
      const run = () => new Templates().parse('z', src).execute('z', { Items: [], Cond: true, X: 1, H: 'h' }, { html: true });
      if (want === '') expect(run, src).not.toThrow();
      else expect(run, src).toThrow(want);
    }
  });
});

describe('escapers', () => {
  it('strip tags of trusted HTML for attribute values', () => {
    expect(stripTags('I <3 Ponies!')).toBe('I <3 Ponies!');
    expect(stripTags('<a href="/">x</a> & <div title="1>2">y</div>')).toBe('x & y');
    expect(stripTags('<script>var a = "<b>"</script>ok<textarea><i>x</i></textarea>')).toBe('ok<i>x');
  });
  it('filter attribute names', () => {
    expect(['checked', 'onclick', 'style', 'href', 'data-x', 'Title', '', 'a b'].map((n) => htmlNameFilter(n))).toEqual(['checked', 'ZgotmplZ', 'ZgotmplZ', 'ZgotmplZ', 'ZgotmplZ', 'title', 'ZgotmplZ', 'ZgotmplZ']);
  });
  it('escape and normalise URLs byte by byte', () => {
    expect(urlEscaper('a b/c?d=é&%41')).toBe('a%20b%2fc%3fd%3d%c3%a9%26%2541');
    expect(urlNormalizer('a b/c?d=é&%41%4')).toBe('a%20b/c?d=%c3%a9&%41%254');
  });
  it('write JS values as JSON, padded where they could run into a keyword', () => {
    expect(jsValEscaper('x')).toBe('"x"');
    expect(jsValEscaper(1.5)).toBe(' 1.5 ');
    expect(jsValEscaper(1e21)).toBe(' 1e+21 ');
    expect(jsValEscaper(1e-7)).toBe(' 1e-7 ');
    expect(jsValEscaper(null)).toBe(' null ');
    expect(jsValEscaper('a', 1)).toBe('"a1"');
    expect(jsValEscaper({ b: '<&>', a: [true] })).toBe('{"a":[true],"b":"\\u003c\\u0026\\u003e"}');
  });
  it('escape CSS strings and filter CSS values', () => {
    expect(cssEscaper('a:b(1)')).toBe('a\\3a b\\28 1\\29 ');
    expect(cssValueFilter('red')).toBe('red');
    expect(cssValueFilter('\\72 ed')).toBe('red');
    expect(cssValueFilter('a;b')).toBe('ZgotmplZ');
    expect(cssValueFilter('x--y')).toBe('ZgotmplZ');
  });
});
