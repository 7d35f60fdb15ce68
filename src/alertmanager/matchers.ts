import { compileAnchored, type AnchoredRegex } from './regex.js';
import { MATCHER_RE, splitMatcherList, unquoteMatcherValue } from './matcher-syntax.js';
import type { LabelSet } from './labels.js';

/** The four match operators, in Alertmanager's MatchType order (used when sorting matchers). */
export type MatchType = '=' | '!=' | '=~' | '!~';
const TYPE_ORDER: Record<MatchType, number> = { '=': 0, '!=': 1, '=~': 2, '!~': 3 };

/** One label matcher (pkg/labels.Matcher). Regex matchers are anchored and run on re2js. */
export class Matcher {
  private readonly re?: AnchoredRegex;

  /** Throws RegexError (Go's text) for a bad regex. */
  constructor(
    readonly type: MatchType,
    readonly name: string,
    readonly value: string,
  ) {
    if (type === '=~' || type === '!~') this.re = compileAnchored(value);
  }

  get isRegex(): boolean {
    return this.type === '=~' || this.type === '!~';
  }

  get isEqual(): boolean {
    return this.type === '=' || this.type === '=~';
  }

  matches(s: string): boolean {
    switch (this.type) {
      case '=':
        return s === this.value;
      case '!=':
        return s !== this.value;
      case '=~':
        return this.re!.test(s);
      case '!~':
        return !this.re!.test(s);
    }
  }

  /** `name="value"` with OpenMetrics escaping, as Matcher.String(). */
  toString(): string {
    return `${this.name}${this.type}"${openMetricsEscape(this.value)}"`;
  }

  static fromApi(m: { name: string; value: string; isRegex: boolean; isEqual?: boolean }): Matcher {
    const eq = m.isEqual ?? true;
    const type: MatchType = m.isRegex ? (eq ? '=~' : '!~') : eq ? '=' : '!=';
    return new Matcher(type, m.name, m.value);
  }
}

export function openMetricsEscape(s: string): string {
  return s.replace(/[\\\n"]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : '\\"'));
}

/** All matchers match (a missing label counts as ""). */
export function matchesAll(ms: readonly Matcher[], labels: LabelSet): boolean {
  for (const m of ms) if (!m.matches(labels[m.name] ?? '')) return false;
  return true;
}

/** labels.Matchers order: name, then value, then type. */
export function compareMatchers(a: Matcher, b: Matcher): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.value !== b.value) return a.value < b.value ? -1 : 1;
  return TYPE_ORDER[a.type] - TYPE_ORDER[b.type];
}

export class MatcherParseError extends Error {}

/**
 * One matcher in pkg/labels.ParseMatcher syntax (0.25): `name op value`, value optionally
 * double-quoted with `\"`, `\\` and `\n` escapes. Used by the API's `filter` parameter.
 */
export function parseMatcher(s: string): Matcher {
  const m = MATCHER_RE.exec(s);
  if (!m) throw new MatcherParseError(`bad matcher format: ${s}`);
  const raw0 = m[3]!;
  if (hasLoneSurrogate(raw0.startsWith('"') ? raw0.slice(1) : raw0)) throw new MatcherParseError(`matcher value not valid UTF-8: ${raw0}`);
  const value = unquoteMatcherValue(raw0, (message) => new MatcherParseError(message));
  return new Matcher(m[2] as MatchType, m[1]!, value);
}

/**
 * A comma-separated list (pkg/labels.ParseMatchers): optional braces, commas inside double
 * quotes do not split. Used for `matchers:` lines in the configuration and by the CLI.
 */
export function parseMatchers(s: string): Matcher[] {
  return splitMatcherList(s).map(parseMatcher);
}

function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return true;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}
