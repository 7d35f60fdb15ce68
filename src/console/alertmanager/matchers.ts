/**
 * Label matchers in the browser, in Alertmanager's syntax (pkg/labels.ParseMatcher/ParseMatchers,
 * as src/alertmanager/matchers.ts parses them on the server): `name="value"`, `=~`, `!=`, `!~`,
 * unquoted or double-quoted values with `\"`, `\\` and `\n` escapes, lists with optional braces.
 * Regular expressions are anchored; JavaScript's RegExp stands in for Go's RE2 (the same for the
 * syntax people write in matchers: classes, alternation, repetition, `.*`).
 */
import { MATCHER_RE, splitMatcherList, unquoteMatcherValue } from '../../alertmanager/matcher-syntax.js';

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
  return compile(m[2] as MatchType, m[1]!, unquoteMatcherValue(m[3]!, (message) => new MatcherError(message)));
}

/** A comma-separated list, optionally in braces; commas inside quotes do not split. Empty: []. */
export function parseMatchers(input: string): Matcher[] {
  return splitMatcherList(input.trim())
    .filter((t) => t.trim() !== '')
    .map(parseMatcher);
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
