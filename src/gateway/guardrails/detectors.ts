/**
 * What each built-in guardrail looks for. Patterns are written with bounded repetitions and run
 * only when a cheap pre-check passes (an @ for emails, a digit for numbers), so scanning stays
 * linear in the text. Numbers are confirmed by their checksums (Luhn for cards, mod 97 for IBANs)
 * so ordinary numbers, ids and code are not taken for personal data.
 */

export interface Finding {
  /** What was found (email, card, aws-key, …). */
  kind: string;
  start: number;
  end: number;
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
const CARD_PREFIX = /^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|5|4[4-9])|35)/;

type Rule = { kind: string; re: RegExp; when?: (text: string) => boolean; check?: (match: string) => boolean };

const hasAt = (t: string) => t.includes('@');
const hasDigit = (t: string) => /\d/.test(t);

export const PII_RULES: Rule[] = [
  { kind: 'email', re: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,6}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g, when: hasAt },
  {
    kind: 'card',
    re: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g,
    when: hasDigit,
    check: (m) => {
      const d = m.replace(/[ -]/g, '');
      return d.length >= 13 && d.length <= 19 && CARD_PREFIX.test(d) && luhn(d);
    },
  },
  { kind: 'iban', re: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g, when: hasDigit, check: ibanValid },
  { kind: 'us-ssn', re: /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g, when: hasDigit },
  { kind: 'uk-nino', re: /\b(?![DFIQUV])[A-CEGHJ-PR-TW-Z](?![DFIQUVO])[A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g, when: hasDigit },
  // International numbers written with a + and a country code, and North American (xxx) xxx-xxxx / xxx-xxx-xxxx.
  { kind: 'phone', re: /(?<![\w+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,3}(?!\d)/g, when: (t) => t.includes('+') },
  { kind: 'phone', re: /(?<!\d)(?:\(\d{3}\) ?|\d{3}[-.])\d{3}[-.]\d{4}(?!\d)/g, when: hasDigit },
];

export const SECRET_RULES: Rule[] = [
  { kind: 'private-key', re: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,10000}?-----END (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----/g, when: (t) => t.includes('-----BEGIN') },
  { kind: 'aws-access-key', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { kind: 'github-token', re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { kind: 'anthropic-key', re: /\bsk-ant-[A-Za-z0-9_-]{20,200}/g },
  { kind: 'openai-key', re: /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}/g },
  { kind: 'slack-token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,200}/g },
  { kind: 'google-api-key', re: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: 'stripe-key', re: /\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,200}\b/g },
  { kind: 'jwt', re: /\beyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,2000}/g },
];

/** Attempts to override the system's instructions. */
export const INJECTION_RULES: Rule[] = [
  { kind: 'ignore-instructions', re: /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|system)\s+(?:instructions|prompts?|rules|directions|messages)\b/gi },
  { kind: 'new-instructions', re: /\b(?:your\s+new\s+instructions\s+are|from\s+now\s+on\s+you\s+(?:are|will)\s+(?:no\s+longer|not)\s+bound)\b/gi },
  { kind: 'reveal-prompt', re: /\b(?:reveal|print|show|repeat|output)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions|initial\s+instructions)\b/gi },
  { kind: 'jailbreak-persona', re: /\b(?:you\s+are\s+now\s+(?:DAN|in\s+developer\s+mode)|act\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken)\s+(?:AI|assistant|model))\b/gi },
];

/**
 * One cheap test per family before its rules run: most text holds no key prefix and no override
 * verb, and then none of the family's patterns needs to look at it.
 */
const FAMILY_HINTS = new Map<Rule[], RegExp>();

export function scan(text: string, rules: Rule[]): Finding[] {
  const hint = FAMILY_HINTS.get(rules);
  if (hint && !hint.test(text)) return [];
  const out: Finding[] = [];
  for (const r of rules) {
    if (r.when && !r.when(text)) continue;
    r.re.lastIndex = 0;
    for (const m of text.matchAll(r.re)) {
      if (r.check && !r.check(m[0])) continue;
      out.push({ kind: r.kind, start: m.index, end: m.index + m[0].length });
    }
  }
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

FAMILY_HINTS.set(SECRET_RULES, /-----BEGIN|AKIA|ASIA|gh[pousr]_|github_pat_|sk-|xox[abposr]-|AIza|[sr]k_(?:live|test)_|eyJ/);
FAMILY_HINTS.set(INJECTION_RULES, /ignore|disregard|forget|override|instructions are|from now on|reveal|print|show|repeat|output|you are now|act as/i);
