/**
 * Label matchers in the browser, in Alertmanager's syntax (pkg/labels.ParseMatcher/ParseMatchers,
 * as src/alertmanager/matchers.ts parses them on the server): `name="value"`, `=~`, `!=`, `!~`,
 * unquoted or double-quoted values with `\"`, `\\` and `\n` escapes, lists with optional braces.
 * Regular expressions are anchored; JavaScript's RegExp stands in for Go's RE2 (the same for the
 * syntax people write in matchers: classes, alternation, repetition, `.*`).
 */
export type MatchType = '=' | '!=' | '=~' | '!~';

export interface Matcher {
  name: string;
  type: MatchType;
  value: string;
  /** Compiled, anchored; for `=~` and `!~`. */
  re?: RegExp;
}

export interface ApiMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual?: boolean;
}

export class MatcherError extends Error {}

const MATCHER_RE = /^[\t\n\f\r ]*([a-zA-Z_:][a-zA-Z0-9_:]*)[\t\n\f\r ]*(=~|=|!=|!~)[\t\n\f\r ]*([\s\S]*?)[\t\n\f\r ]*$/;

export function compile(type: MatchType, name: string, value: string): Matcher {
  const m: Matcher = { name, type, value };
  if (type === '=~' || type === '!~') {
    try {
      m.re = new RegExp(`^(?:${value})$`);
    } catch (e) {
      throw new MatcherError(`invalid regular expression in ${name}${type}"${value}": ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`);
    }
  }
  return m;
}

export function parseMatcher(s: string): Matcher {
  const m = MATCHER_RE.exec(s);
  if (!m) throw new MatcherError(`bad matcher format: ${s.trim()}`);
  const raw0 = m[3]!;
  let raw = raw0;
  let expectTrailingQuote = false;
  if (raw.startsWith('"')) {
    raw = raw.slice(1);
    expectTrailingQuote = true;
  }
  let value = '';
  let escaped = false;
  const chars = Array.from(raw);
  for (let i = 0; i < chars.length; i++) {
    const r = chars[i]!;
    if (escaped) {
      escaped = false;
      if (r === 'n') value += '\n';
      else if (r === '"' || r === '\\') value += r;
      else value += '\\' + r;
      continue;
    }
    if (r === '\\') {
      if (i < chars.length - 1) {
        escaped = true;
        continue;
      }
      value += '\\';
    } else if (r === '"') {
      if (!expectTrailingQuote || i < chars.length - 1) throw new MatcherError(`matcher value contains unescaped double quote: ${raw0}`);
      expectTrailingQuote = false;
    } else {
      value += r;
    }
  }
  if (expectTrailingQuote) throw new MatcherError(`matcher value contains unescaped double quote: ${raw0}`);
  return compile(m[2] as MatchType, m[1]!, value);
}

/** A comma-separated list, optionally in braces; commas inside quotes do not split. Empty: []. */
export function parseMatchers(input: string): Matcher[] {
  let s = input.trim();
  if (s.startsWith('{')) s = s.slice(1);
  if (s.endsWith('}')) s = s.slice(0, -1);
  const tokens: string[] = [];
  let insideQuotes = false;
  let escaped = false;
  let token = '';
  for (const r of s) {
    if (r === ',' && !insideQuotes) {
      tokens.push(token);
      token = '';
      continue;
    }
    if (r === '"') {
      if (!escaped) insideQuotes = !insideQuotes;
      else escaped = false;
    } else if (r === '\\') {
      escaped = !escaped;
    } else {
      escaped = false;
    }
    token += r;
  }
  const last = token.trim();
  if (last !== '') tokens.push(last);
  return tokens.filter((t) => t.trim() !== '').map(parseMatcher);
}

export function matches(m: Matcher, v: string): boolean {
  switch (m.type) {
    case '=':
      return v === m.value;
    case '!=':
      return v !== m.value;
    case '=~':
      return m.re!.test(v);
    case '!~':
      return !m.re!.test(v);
  }
}

/** Every matcher matches (a missing label is the empty string). */
export function matchesAll(ms: readonly Matcher[], labels: Record<string, string>): boolean {
  for (const m of ms) if (!matches(m, labels[m.name] ?? '')) return false;
  return true;
}

export function escapeValue(s: string): string {
  return s.replace(/[\\\n"]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : '\\"'));
}

export function formatMatcher(m: { name: string; type: MatchType; value: string }): string {
  return `${m.name}${m.type}"${escapeValue(m.value)}"`;
}

/** `{a="b", c=~"d"}`, the form of Alertmanager's `filter` query parameter in UI links. */
export function formatMatchers(ms: ReadonlyArray<{ name: string; type: MatchType; value: string }>): string {
  return `{${ms.map(formatMatcher).join(', ')}}`;
}

export function fromApi(m: ApiMatcher): Matcher {
  const eq = m.isEqual ?? true;
  return compile(m.isRegex ? (eq ? '=~' : '!~') : eq ? '=' : '!=', m.name, m.value);
}

export function toApi(m: { name: string; type: MatchType; value: string }): ApiMatcher {
  return { name: m.name, value: m.value, isRegex: m.type === '=~' || m.type === '!~', isEqual: m.type === '=' || m.type === '=~' };
}
