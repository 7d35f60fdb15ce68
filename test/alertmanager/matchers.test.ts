import { describe, expect, it } from 'vitest';
import { Matcher, matchesAll, parseMatcher, parseMatchers } from '../../src/alertmanager/matchers.js';
import { checkUnanchored, compileAnchored } from '../../src/alertmanager/regex.js';

describe('parseMatcher (API filter syntax, 0.25)', () => {
  it('parses the four operators with optional quotes and spaces', () => {
    expect(parseMatcher('job=~"a.*"')).toMatchObject({ name: 'job', type: '=~', value: 'a.*' });
    expect(parseMatcher('job=~a.*')).toMatchObject({ name: 'job', type: '=~', value: 'a.*' });
    expect(parseMatcher(' env != prod ')).toMatchObject({ name: 'env', type: '!=', value: 'prod' });
    expect(parseMatcher('a!~"x"')).toMatchObject({ type: '!~' });
    expect(parseMatcher('severity=')).toMatchObject({ name: 'severity', type: '=', value: '' });
    expect(parseMatcher('a:b="c"')).toMatchObject({ name: 'a:b' });
  });
  it('unescapes \\" \\\\ and \\n and keeps spurious escapes', () => {
    expect(parseMatcher('q="a\\"b\\\\c\\nd\\x"').value).toBe('a"b\\c\nd\\x');
  });
  it('rejects braces, lists and junk with Alertmanager text', () => {
    expect(() => parseMatcher('{job=~"a.*"}')).toThrow('bad matcher format: {job=~"a.*"}');
    expect(() => parseMatcher('job=~"a.*",env!="prod"')).toThrow('matcher value contains unescaped double quote: "a.*",env!="prod"');
    expect(() => parseMatcher('foo')).toThrow('bad matcher format: foo');
    expect(() => parseMatcher('')).toThrow(/^bad matcher format: $/);
    expect(() => parseMatcher('job=~(a')).toThrow('error parsing regexp: missing closing ): `^(?:(a)$`');
    expect(() => parseMatcher('a="x')).toThrow('matcher value contains unescaped double quote: "x');
  });
  it('String() re-escapes', () => {
    expect(parseMatcher('q="a\\"b"').toString()).toBe('q="a\\"b"');
    expect(new Matcher('=~', 'x', 'a|b').toString()).toBe('x=~"a|b"');
  });
});

describe('parseMatchers (config syntax)', () => {
  it('accepts braces, commas, quoted commas and a trailing comma', () => {
    const ms = parseMatchers('{foo = "bar", dings != "bums", }');
    expect(ms.map(String)).toEqual(['foo="bar"', 'dings!="bums"']);
    expect(parseMatchers('a="x,y",b=~"1|2"').map((m) => m.value)).toEqual(['x,y', '1|2']);
  });
});

describe('regex matching (RE2 via re2js, anchored)', () => {
  it('is anchored', () => {
    const m = new Matcher('=~', 'alertname', 'R');
    expect(m.matches('R')).toBe(true);
    expect(m.matches('R1')).toBe(false);
    expect(new Matcher('=~', 'alertname', 'R.').matches('R1')).toBe(true);
  });
  it('accepts Go syntax JS lacks and rejects what Go 1.19 rejects', () => {
    expect(compileAnchored('(?i)foo').test('FOO')).toBe(true);
    expect(compileAnchored('[[:alpha:]]+').test('abc')).toBe(true);
    expect(compileAnchored('\\pL+').test('é')).toBe(true);
    expect(() => checkUnanchored('(?<n>x)')).toThrow('error parsing regexp: invalid or unsupported Perl syntax: `(?<`');
    expect(() => checkUnanchored('(?=x)')).toThrow('invalid or unsupported Perl syntax');
    expect(() => checkUnanchored('a{1001}')).toThrow('invalid repeat count');
    expect(() => checkUnanchored('(foo')).toThrow('error parsing regexp: missing closing ): `(foo`');
  });
  it('literal and alternation fast paths agree with the engine', () => {
    expect(compileAnchored('a|b').test('a')).toBe(true);
    expect(compileAnchored('a|b').test('ab')).toBe(false);
    expect(compileAnchored('.*').test('')).toBe(true);
    expect(compileAnchored('.*').test('a\nb')).toBe(false);
    expect(compileAnchored('.+').test('')).toBe(false);
  });
  it('missing labels count as the empty string', () => {
    expect(matchesAll([new Matcher('=', 'x', '')], { y: '1' })).toBe(true);
    expect(matchesAll([new Matcher('!=', 'x', 'prod')], {})).toBe(true);
  });
});
