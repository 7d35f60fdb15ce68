import { describe, expect, it } from 'vitest';
import { goJsonLabelSet, goJsonLabelSetSorted } from '../../src/alertmanager/api/json.js';

/** encoding/json's text for a map[string]string, written out independently of the renderer. */
function goReference(m: Record<string, string>): string {
  const esc = (s: string): string => {
    let out = '"';
    for (const ch of s.toWellFormed()) {
      const c = ch.codePointAt(0)!;
      if (ch === '"') out += '\\"';
      else if (ch === '\\') out += '\\\\';
      else if (ch === '\n') out += '\\n';
      else if (ch === '\r') out += '\\r';
      else if (ch === '\t') out += '\\t';
      else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) out += '\\u' + c.toString(16).padStart(4, '0');
      else out += ch;
    }
    return out + '"';
  };
  const keys = Object.keys(m).sort((a, b) => Buffer.compare(Buffer.from(a.toWellFormed()), Buffer.from(b.toWellFormed())));
  return '{' + keys.map((k) => esc(k) + ':' + esc(m[k]!)).join(',') + '}';
}

const CASES: Record<string, string>[] = [
  {},
  { alertname: 'Perf1', instance: 'host-1.example:9100', job: 'job-1', severity: 'warning', team: 'a' },
  { team: 'a', alertname: 'x' },
  { '10': 'ten', '9': 'nine', a: 'b' },
  { a: 'x<y', b: 'q&r', c: '>' },
  { a: 'line\nbreak', b: 'tab\there', c: 'bell\x07', d: 'back\bspace', e: 'form\ffeed' },
  { a: 'quote " and \\ backslash' },
  { a: 'sep\u2028and\u2029' },
  { a: 'emoji \u{1F600}', b: '\uFF21 fullwidth' },
  { a: 'lone \ud800 surrogate', b: 'lone \udc00 low' },
  { '\u00e9': 'accent key', e: 'plain', z: 'last' },
  { e: 'plain', '\u00e9': 'accent key after' },
  { summary: 'Instance host-1 is misbehaving', runbook: 'https://runbooks.example/perf/1' },
  { runbook: 'https://runbooks.example/perf/1', summary: 'Instance host-1 is misbehaving' },
  { __proto__x: '1', _a: '2', A: '3', a: '4' },
];

describe('Go JSON for label sets', () => {
  it("writes encoding/json's text whether or not the names come in order or need escaping", () => {
    for (const c of CASES) {
      expect(goJsonLabelSet(c), JSON.stringify(c)).toBe(goReference(c));
      expect(goJsonLabelSetSorted(c), JSON.stringify(c)).toBe(goReference(c));
    }
  });

  it('agrees with the reference on random label sets', () => {
    const alphabet = ['a', 'b', 'Z', '_', '1', '<', '&', '"', '\\', '\n', '\b', '\u00e9', '\u2028', '\u{1F600}', '\ud800', ' '];
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const word = () => Array.from({ length: 1 + rnd(5) }, () => alphabet[rnd(alphabet.length)]).join('');
    for (let i = 0; i < 2000; i++) {
      const m: Record<string, string> = {};
      for (let j = rnd(6); j > 0; j--) m[rnd(3) === 0 ? word() : 'k' + rnd(9)] = word();
      expect(goJsonLabelSet(m), JSON.stringify(m)).toBe(goReference(m));
    }
  });
});
