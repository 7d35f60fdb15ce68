/**
 * What each built-in guardrail looks for. Every pattern runs on re2js (RE2: linear time, no
 * backtracking), and only over the regions of the text around an anchor the pattern cannot match
 * without (an @ for emails, a digit for numbers, a key's prefix for secrets): ordinary text costs a
 * few native `indexOf` passes, and crafted text costs one linear pass per rule. Numbers are
 * confirmed by their checksums (Luhn for cards, mod 97 for IBANs) so ordinary numbers, ids and code
 * are not taken for personal data.
 *
 * RE2 has no lookahead: a trailing "not followed by" is written as a consumed `(?:[^…]|$)` and cut
 * off the match afterwards, which accepts exactly what the lookahead did. Leading lookbehinds use
 * re2js's linear-time lookbehinds. Repetitions above RE2's 1,000 (private keys, JWTs) are checked
 * by hand scanners around RE2 matches of the fixed parts.
 */
import { RE2JS } from 're2js';

export interface Finding {
  /** What was found (email, card, aws-key, …). */
  kind: string;
  start: number;
  end: number;
}

/**
 * How much RE2 work a scan may still do, in characters (each search also counts as SEARCH_COST
 * characters: re2js spends tens of microseconds setting one up). A scan that would go past it throws
 * OverBudget before doing the work, so the caller can run it elsewhere (a worker thread).
 */
export interface Budget {
  left: number;
}
export const SEARCH_COST = 16;

export class OverBudget extends Error {
  constructor() {
    super('guardrail scan over its budget');
  }
}

function spend(budget: Budget | undefined, chars: number): void {
  if (!budget) return;
  budget.left -= chars;
  if (budget.left < 0) throw new OverBudget();
}

/** One detector: the findings in `text`, in order, not overlapping. */
export interface Rule {
  kind: string;
  find(text: string, budget?: Budget): Finding[];
}

function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function ibanValid(raw: string): boolean {
  const s = raw.replace(/ /g, '');
  if (s.length < 15 || s.length > 34) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const v = code >= 65 ? String(code - 55) : ch;
    for (const digit of v) rem = (rem * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return rem === 1;
}

/** Card numbers of the big networks (Visa, Mastercard, Amex, Discover, JCB, Diners), 13 to 19 digits. */
const CARD_PREFIX = RE2JS.compile('^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|5|4[4-9])|35)');

// ---- anchors: where a match can be ----

/** Positions of each literal (case-sensitive) in the text. */
function literalAnchors(...literals: string[]) {
  return (text: string, _lower: () => string, out: number[]): void => {
    for (const lit of literals) for (let i = text.indexOf(lit); i >= 0; i = text.indexOf(lit, i + 1)) out.push(i);
  };
}

/**
 * Digits: numbers (cards, IBANs, SSNs, phones) cannot match without one. A run of digits gives its
 * first digit and every DIGIT_STRIDE-th after it, so a rule's reach after an anchor adds DIGIT_STRIDE.
 */
const DIGIT_STRIDE = 32;
function digitAnchors(text: string, _lower: () => string, out: number[]): void {
  let run = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (run < 0 || i - run >= DIGIT_STRIDE) {
        out.push(i);
        run = i;
      }
    } else run = -1;
  }
}

type Anchors = (text: string, lower: () => string, out: number[]) => void;

/** Which characters a match can consist of (ASCII), as a lookup table built from a character-class body. */
function alphabet(cls: string): Uint8Array {
  const table = new Uint8Array(128);
  const re = new RegExp(`[${cls}]`);
  for (let c = 0; c < 128; c++) if (re.test(String.fromCharCode(c))) table[c] = 1;
  return table;
}

/**
 * The regions of the text that can hold a match, as [start, end, start, end, …]: every match
 * contains an anchor, lies within `before` characters before it and `after` after it (its trailing
 * "not followed by" character included), and consists of characters of its alphabet (null: any),
 * so a region stops where the alphabet does. Overlapping regions merge; regions shorter than
 * `shortest` are left out. Going left stops at the previous region and going right resumes where
 * the last scan stopped, so each character is looked at a bounded number of times: linear.
 */
function regions(text: string, lower: () => string, anchors: Anchors, before: number, after: number, abc: Uint8Array | null, shortest: number): number[] {
  const at: number[] = [];
  anchors(text, lower, at);
  if (at.length === 0) return at;
  for (let i = 1; i < at.length; i++)
    if (at[i]! < at[i - 1]!) {
      at.sort((x, y) => x - y);
      break;
    }
  const n = text.length;
  const out: number[] = [];
  let ls = -1; // the open region
  let le = -1;
  let scanned = 0;
  for (const a of at) {
    let s = a;
    if (a >= le) {
      const floor = Math.max(0, a - before, le);
      if (abc === null) s = floor;
      else
        while (s > floor) {
          const c = text.charCodeAt(s - 1);
          if (c >= 128 || abc[c] !== 1) break;
          s--;
        }
    }
    let e = Math.max(a, scanned);
    const ceiling = Math.min(n, a + after);
    if (abc === null) e = Math.max(e, ceiling);
    else
      while (e < ceiling) {
        const c = text.charCodeAt(e);
        if (c >= 128 || abc[c] !== 1) break;
        e++;
      }
    scanned = Math.max(scanned, e);
    if (ls >= 0 && s <= le) le = Math.max(le, e);
    else {
      if (ls >= 0 && le - ls >= shortest) out.push(ls, le);
      ls = s;
      le = e;
    }
  }
  if (ls >= 0 && le - ls >= shortest) out.push(ls, le);
  return out;
}

interface PatternOptions {
  /** Where a match can be, and how far around it. */
  anchors: Anchors;
  before: number;
  after: number;
  /** The characters a match is made of (a character-class body), when fewer than all. */
  chars?: string;
  /** The shortest match: shorter regions are skipped. */
  shortest?: number;
  /** Accept the match (checksums, never-issued numbers). */
  check?: (match: string) => boolean;
  /** On a failed check, search again from the next character (a lookahead's semantics) instead of after the match. */
  retryInside?: boolean;
  flags?: number;
}

/** The "not followed by" at the end of a pattern: group 1, when it took a character, is cut off the match. */
const notFollowedBy = (cls: string) => `(?:([^${cls}])|$)`;

/** A detector from one RE2 pattern, run over the regions its anchors give. */
function pattern(kind: string, source: string, o: PatternOptions): Rule {
  const re = RE2JS.compile(source, RE2JS.LOOKBEHINDS | (o.flags ?? 0));
  const guarded = re.groupCount() > 0;
  const abc = o.chars === undefined ? null : alphabet(o.chars);
  const shortest = o.shortest ?? 1;
  return {
    kind,
    find(text, budget) {
      let lowered: string | undefined;
      const lower = () => (lowered ??= text.toLowerCase());
      const out: Finding[] = [];
      const found = regions(text, lower, o.anchors, o.before, o.after, abc, shortest);
      if (budget) {
        let work = 0;
        for (let i = 0; i < found.length; i += 2) work += found[i + 1]! - found[i]! + SEARCH_COST;
        spend(budget, work);
      }
      for (let i = 0; i < found.length; i += 2) {
        const s = found[i]!;
        const e = found[i + 1]!;
        // One character either side of the region, so \b, lookbehinds and "not followed by" see their neighbours.
        const from = s > 0 ? s - 1 : 0;
        const sub = text.slice(from, Math.min(text.length, e + 1));
        const m = re.matcher(sub);
        let pos = s - from;
        while (pos <= sub.length && m.find(pos)) {
          const start = m.start();
          const end = guarded && m.start(1) >= 0 ? m.start(1) : m.end();
          if (o.check && !o.check(sub.slice(start, end))) {
            pos = o.retryInside ? start + 1 : Math.max(end, start + 1);
            continue;
          }
          out.push({ kind, start: from + start, end: from + end });
          pos = end > start ? end : start + 1;
        }
      }
      return out;
    },
  };
}

// ---- PII ----

export const PII_RULES: Rule[] = [
  pattern('email', `(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\\.[A-Za-z0-9-]{1,63}){0,6}\\.[A-Za-z]{2,24}${notFollowedBy('A-Za-z0-9-')}`, {
    anchors: literalAnchors('@'),
    chars: 'A-Za-z0-9._%+@-',
    shortest: 6,
    before: 64,
    after: 64 * 8 + 26,
  }),
  pattern('card', `(?<![\\d-])\\d(?:[ -]?\\d){12,18}${notFollowedBy('\\d-')}`, {
    anchors: digitAnchors,
    chars: '0-9 -',
    shortest: 13,
    before: 37,
    after: 38 + DIGIT_STRIDE,
    check: (m) => {
      const d = m.replace(/[ -]/g, '');
      return d.length >= 13 && d.length <= 19 && CARD_PREFIX.test(d) && luhn(d);
    },
  }),
  pattern('iban', '\\b[A-Z]{2}\\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\\b', { anchors: digitAnchors, chars: 'A-Z0-9 ', shortest: 15, before: 44, after: 45 + DIGIT_STRIDE, check: ibanValid }),
  // Area 000, 666 and 9xx, group 00 and serial 0000 are never issued.
  pattern('us-ssn', '\\b\\d{3}-\\d{2}-\\d{4}\\b', {
    anchors: digitAnchors,
    chars: '0-9-',
    shortest: 11,
    before: 11,
    after: 12 + DIGIT_STRIDE,
    check: (m) => !/^(?:000|666|9)/.test(m) && m.slice(4, 6) !== '00' && m.slice(7) !== '0000',
    retryInside: true,
  }),
  // The letter classes already leave out D, F, I, Q, U, V (and O second).
  pattern('uk-nino', '\\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\\d{2} ?\\d{2} ?\\d{2} ?[A-D]\\b', { anchors: digitAnchors, chars: 'A-Z0-9 ', shortest: 9, before: 13, after: 14 + DIGIT_STRIDE }),
  // International numbers written with a + and a country code, and North American (xxx) xxx-xxxx / xxx-xxx-xxxx.
  pattern('phone', '(?<![\\w+])\\+\\d{1,3}[ .-]?(?:\\(\\d{1,4}\\)[ .-]?)?\\d{2,4}(?:[ .-]?\\d{2,4}){1,3}' + notFollowedBy('\\d'), {
    anchors: literalAnchors('+'),
    chars: '0-9 .()+-',
    shortest: 6,
    before: 0,
    after: 40,
  }),
  pattern('phone', '(?<!\\d)(?:\\(\\d{3}\\) ?|\\d{3}[-.])\\d{3}[-.]\\d{4}' + notFollowedBy('\\d'), { anchors: digitAnchors, chars: '0-9 .()-', shortest: 12, before: 14, after: 16 + DIGIT_STRIDE }),
];

// ---- secrets ----

/** The kinds of a `-----BEGIN <kind>PRIVATE KEY-----` line (an empty one: PKCS #8). */
const KEY_KINDS = ['RSA ', 'EC ', 'DSA ', 'OPENSSH ', 'PGP ', 'ENCRYPTED ', ''];

/** The end of `-----<word> [kind ]PRIVATE KEY[ BLOCK]-----` at i, or -1. */
function keyLine(text: string, i: number, word: string): number {
  if (!text.startsWith(word, i)) return -1;
  let at = i + word.length;
  const kind = KEY_KINDS.find((k) => text.startsWith(k, at) && text.startsWith('PRIVATE KEY', at + k.length));
  if (kind === undefined) return -1;
  at += kind.length + 'PRIVATE KEY'.length;
  if (text.startsWith(' BLOCK-----', at)) return at + ' BLOCK-----'.length;
  return text.startsWith('-----', at) ? at + 5 : -1;
}

/** A private key's body is at most this long (between its BEGIN and END lines). */
const KEY_BODY_MAX = 10_000;

/**
 * `-----BEGIN … PRIVATE KEY-----`, at most 10,000 characters, then the first `-----END … PRIVATE
 * KEY-----`. A bounded scanner: each line is checked where `indexOf` finds its start, and the END
 * lines are listed once, so each BEGIN line costs a step along that list, not a search.
 */
const privateKey: Rule = {
  kind: 'private-key',
  find(text) {
    if (!text.includes('-----BEGIN ')) return [];
    const ends: number[] = [];
    for (let i = text.indexOf('-----END '); i >= 0; i = text.indexOf('-----END ', i + 1)) {
      const end = keyLine(text, i, '-----END ');
      if (end >= 0) ends.push(i, end);
    }
    const out: Finding[] = [];
    let e = 0;
    for (let i = text.indexOf('-----BEGIN '); i >= 0 && e < ends.length; ) {
      const bodyFrom = keyLine(text, i, '-----BEGIN ');
      if (bodyFrom >= 0) {
        while (e < ends.length && ends[e]! < bodyFrom) e += 2;
        if (e < ends.length && ends[e]! - bodyFrom <= KEY_BODY_MAX) {
          out.push({ kind: 'private-key', start: i, end: ends[e + 1]! });
          i = text.indexOf('-----BEGIN ', ends[e + 1]!);
          continue;
        }
      }
      i = text.indexOf('-----BEGIN ', i + 1);
    }
    return out;
  },
};

/** A JWT's characters (base64url), and the longest header, payload and signature (after `eyJ`). */
const JWT_MAX = [2000, 4000, 2000] as const;
const isB64url = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
const isWord = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/**
 * `eyJ<8–2000>.eyJ<8–4000>.<8–2000>` (base64url between the dots, a word boundary before), by hand:
 * base64url has no dot, so each part ends where its run of base64url ends. Runs are measured once
 * (a later start inside a measured run reuses its end), so crafted text stays linear.
 */
const jwt: Rule = {
  kind: 'jwt',
  find(text) {
    const out: Finding[] = [];
    // One cache per part: successive starts share the runs their parts fall in.
    const header = runs(text);
    const payload = runs(text);
    const signature = runs(text);
    for (let p = text.indexOf('eyJ'); p >= 0; ) {
      let end = -1;
      if (p === 0 || !isWord(text.charCodeAt(p - 1))) {
        const d1 = header(p + 3);
        const l1 = d1 - (p + 3);
        if (l1 >= 8 && l1 <= JWT_MAX[0] && text.charCodeAt(d1) === 46 && text.startsWith('eyJ', d1 + 1)) {
          const d2 = payload(d1 + 4);
          const l2 = d2 - (d1 + 4);
          if (l2 >= 8 && l2 <= JWT_MAX[1] && text.charCodeAt(d2) === 46) {
            const l3 = signature(d2 + 1) - (d2 + 1);
            if (l3 >= 8) end = d2 + 1 + Math.min(l3, JWT_MAX[2]);
          }
        }
      }
      if (end >= 0) {
        out.push({ kind: 'jwt', start: p, end });
        p = text.indexOf('eyJ', end);
      } else p = text.indexOf('eyJ', p + 1);
    }
    return out;
  },
};

/** Where the run of base64url from i ends; the last run measured is kept (all of it is base64url, so a later i inside it ends there too). */
function runs(text: string): (i: number) => number {
  let from = -1;
  let end = -1;
  return (i) => {
    if (from >= 0 && i >= from && i <= end) return end;
    let e = i;
    while (e < text.length && isB64url(text.charCodeAt(e))) e++;
    from = i;
    end = e;
    return e;
  };
}

/** A key: a literal prefix (the anchor; matches start there), then characters of `chars`. */
function token(kind: string, source: string, prefixes: string[], chars: string, [shortest, longest]: [number, number], extra: Partial<PatternOptions> = {}): Rule {
  return pattern(kind, source, { anchors: literalAnchors(...prefixes), chars, shortest, before: 0, after: longest, ...extra });
}

export const SECRET_RULES: Rule[] = [
  privateKey,
  token('aws-access-key', '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b', ['AKIA', 'ASIA'], 'A-Z0-9', [20, 20]),
  token('github-token', '\\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\\b', ['gh'], 'A-Za-z0-9_', [33, 266]),
  token('anthropic-key', '\\bsk-ant-[A-Za-z0-9_-]{20,200}', ['sk-ant-'], 'A-Za-z0-9_-', [27, 207]),
  // `sk-` not followed by `ant-`: RE2 has no lookahead, so a check on the match says it.
  token('openai-key', '\\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}', ['sk-'], 'A-Za-z0-9_-', [23, 211], { check: (m) => !m.startsWith('sk-ant-'), retryInside: true }),
  token('slack-token', '\\bxox[abposr]-[A-Za-z0-9-]{10,200}', ['xox'], 'A-Za-z0-9-', [15, 205]),
  token('google-api-key', '\\bAIza[0-9A-Za-z_-]{35}\\b', ['AIza'], 'A-Za-z0-9_-', [39, 39]),
  token('stripe-key', '\\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,200}\\b', ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_'], 'A-Za-z0-9_', [24, 208]),
  jwt,
];

// ---- prompt injection ----

/** What JavaScript's \\s matches (RE2's \\s is ASCII only). */
const SPACE = '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
const SPACE_CHARS = /[\s]/;
/** Whitespace between words: up to 40 characters (RE2 counts repetitions; a longer gap is not read as one phrase). */
const GAP = 40;
const S = `[${SPACE}]{1,${GAP}}`;
/** Longer than the longest phrase (about 350 characters with 40-character gaps). */
const INJECTION_REACH = 400;

/**
 * Where a phrase can start: one of its first words (lower-cased text), followed after whitespace by
 * one of the words that can come second. Where lower-casing changed the length (U+0130 becomes two
 * characters) positions would not line up, and every position is a candidate.
 */
function phraseAnchors(first: string[], second: string[]): Anchors {
  return (text, lower, out) => {
    const t = lower();
    if (t.length !== text.length) {
      for (let i = 0; i < text.length; i += 32) out.push(i);
      return;
    }
    for (const w of first) {
      for (let i = t.indexOf(w); i >= 0; i = t.indexOf(w, i + 1)) {
        let j = i + w.length;
        const stop = Math.min(t.length, j + GAP);
        while (j < stop && SPACE_CHARS.test(t[j]!)) j++;
        if (j > i + w.length && second.some((x) => t.startsWith(x, j))) out.push(i);
      }
    }
  };
}

function phrase(kind: string, source: string, first: string[], second: string[]): Rule {
  // A match starts at its anchor; 32 characters back cover the every-32nd-position case.
  return pattern(kind, source, { anchors: phraseAnchors(first, second), before: 32, after: INJECTION_REACH, flags: RE2JS.CASE_INSENSITIVE });
}

/** Attempts to override the system's instructions. */
export const INJECTION_RULES: Rule[] = [
  phrase(
    'ignore-instructions',
    `\\b(?:ignore|disregard|forget|override)${S}(?:all${S}|any${S}|the${S}|your${S})?(?:previous|prior|above|earlier|preceding|system)${S}(?:instructions|prompts?|rules|directions|messages)\\b`,
    ['ignore', 'disregard', 'forget', 'override'],
    ['all', 'any', 'the', 'your', 'previous', 'prior', 'above', 'earlier', 'preceding', 'system'],
  ),
  phrase('new-instructions', `\\b(?:your${S}new${S}instructions${S}are|from${S}now${S}on${S}you${S}(?:are|will)${S}(?:no${S}longer|not)${S}bound)\\b`, ['your', 'from'], ['new', 'now']),
  phrase(
    'reveal-prompt',
    `\\b(?:reveal|print|show|repeat|output)${S}(?:me${S})?(?:your|the)${S}(?:system${S}prompt|hidden${S}instructions|initial${S}instructions)\\b`,
    ['reveal', 'print', 'show', 'repeat', 'output'],
    ['me', 'your', 'the'],
  ),
  phrase('jailbreak-persona', `\\b(?:you${S}are${S}now${S}(?:DAN|in${S}developer${S}mode)|act${S}as${S}(?:an?${S})?(?:unrestricted|unfiltered|jailbroken)${S}(?:AI|assistant|model))\\b`, ['you', 'act'], ['are', 'as']),
];

export function scan(text: string, rules: Rule[], budget?: Budget): Finding[] {
  if (budget && budget.left < 0) throw new OverBudget();
  const out: Finding[] = [];
  for (const r of rules) for (const f of r.find(text, budget)) out.push(f);
  return out;
}

/** Replace findings with `[REDACTED:<kind>]` (overlaps merged, the first kind kept). */
export function redact(text: string, findings: Finding[]): string {
  if (findings.length === 0) return text;
  const sorted = [...findings].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const f of sorted) {
    if (f.start < at) continue;
    out += text.slice(at, f.start) + `[REDACTED:${f.kind}]`;
    at = f.end;
  }
  return out + text.slice(at);
}
