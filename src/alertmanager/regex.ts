import { RE2JS } from 're2js';

/** A Go RE2 pattern compiled with re2js, anchored `^(?:re)$` as Alertmanager does everywhere. */
export interface AnchoredRegex {
  readonly source: string;
  test(s: string): boolean;
}

export class RegexError extends Error {}

const CACHE_LIMIT = 4096;
const LITERAL = /^[^\\.+*?()|[\]{}^$]*$/;

/**
 * Compile `^(?:src)$`. Error text is Go's (`error parsing regexp: missing closing ): ...`).
 * Literal patterns and alternations of literals skip the regex engine; other patterns keep a
 * bounded per-pattern cache of results, since label values repeat a lot.
 */
export function compileAnchored(src: string): AnchoredRegex {
  rejectUnsupported(src);
  let re: RE2JS;
  try {
    re = RE2JS.compile(`^(?:${src})$`);
  } catch (e) {
    throw new RegexError((e as Error).message);
  }
  if (LITERAL.test(src)) return { source: src, test: (s) => s === src };
  const alts = src.split('|');
  if (alts.length > 1 && alts.every((a) => LITERAL.test(a))) {
    const set = new Set(alts);
    return { source: src, test: (s) => set.has(s) };
  }
  if (src === '.*') return { source: src, test: (s) => !s.includes('\n') };
  if (src === '.+') return { source: src, test: (s) => s.length > 0 && !s.includes('\n') };
  const cache = new Map<string, boolean>();
  return {
    source: src,
    test(s: string): boolean {
      let r = cache.get(s);
      if (r === undefined) {
        r = re.matches(s);
        if (cache.size >= CACHE_LIMIT) cache.clear();
        cache.set(s, r);
      }
      return r;
    },
  };
}

/** Compile without anchors, only to validate (silence matchers are checked this way). */
export function checkUnanchored(src: string): void {
  rejectUnsupported(src);
  try {
    RE2JS.compile(src);
  } catch (e) {
    throw new RegexError((e as Error).message);
  }
}

/**
 * silence.matchesEmpty: Go runs `regexp.MatchString(pattern, "")` on the pattern as written (not
 * anchored) and takes an error as "does not match". `\Qx` compiles alone but not inside `^(?:…)$`.
 */
export function matchesEmpty(src: string): boolean {
  try {
    return RE2JS.compile(src).matcher('').find();
  } catch {
    return false;
  }
}

/**
 * re2js accepts `(?<name>x)` as Go >= 1.22 does; Alertmanager 0.25 (Go 1.19) rejects every `(?<`
 * with "invalid or unsupported Perl syntax". Reproduce that so configs and silences behave the same.
 */
function rejectUnsupported(src: string): void {
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (src[i + 1] === '^') i++;
      if (src[i + 1] === ']') i++;
      continue;
    }
    if (c === '(' && src[i + 1] === '?' && src[i + 2] === '<') {
      throw new RegexError('error parsing regexp: invalid or unsupported Perl syntax: `(?<`');
    }
  }
}
