import { describe, expect, it } from 'vitest';
import { compareLabelSets, fingerprint, isValidLabelName, labelSetsEqual } from '../../src/alertmanager/labels.js';

describe('fingerprint (FNV-1a 64, byte-identical to Alertmanager)', () => {
  it.each([
    [{ alertname: 'A1', instance: 'i1', job: 'j' }, '38931c9c3c4dad16'],
    [{ alertname: 'V1' }, '4fbce442ddbd975b'],
    [{ alertname: 'U\uFFFD' }, '91c6f5b665eff764'],
    [{}, 'cbf29ce484222325'],
  ])('%j → %s', (labels, fp) => {
    expect(fingerprint(labels)).toBe(fp);
  });
  it('does not depend on key order', () => {
    expect(fingerprint({ job: 'j', instance: 'i1', alertname: 'A1' })).toBe('38931c9c3c4dad16');
  });
  it('zero-pads to 16 digits', () => {
    for (let i = 0; i < 200; i++) expect(fingerprint({ a: String(i) })).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('label names', () => {
  it('accepts Prometheus names and rejects colons and digits first', () => {
    expect(isValidLabelName('alertname')).toBe(true);
    expect(isValidLabelName('_x1')).toBe(true);
    expect(isValidLabelName('a:b')).toBe(false);
    expect(isValidLabelName('1bad')).toBe(false);
    expect(isValidLabelName('')).toBe(false);
  });
});

describe('label set order (model.LabelSet.Before)', () => {
  it('fewer labels first, then names, then values', () => {
    expect(compareLabelSets({}, { a: '1' })).toBeLessThan(0);
    expect(compareLabelSets({ a: '1' }, { b: '1' })).toBeGreaterThan(0); // b missing in {a} sorts first
    expect(compareLabelSets({ a: '1' }, { a: '2' })).toBeLessThan(0);
    expect(compareLabelSets({ a: '1' }, { a: '1' })).toBe(0);
  });
});

describe('fingerprint against a BigInt FNV-1a reference', () => {
  const reference = (ls: Record<string, string>): string => {
    let h = 0xcbf29ce484222325n;
    const names = Object.keys(ls).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const n of names) {
      for (const b of [...Buffer.from(n), 0xff, ...Buffer.from(ls[n]!), 0xff]) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
    }
    return h.toString(16).padStart(16, '0');
  };
  it('agrees on random label sets (ASCII, non-ASCII, many names)', () => {
    const chars = ['a', 'Z', '_', '0', ' ', '"', 'é', '日', '\u{1F600}', '\xff'];
    let seed = 42;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) % n);
    const str = (max: number) => Array.from({ length: rnd(max) }, () => chars[rnd(chars.length)]).join('');
    for (let i = 0; i < 500; i++) {
      const ls: Record<string, string> = {};
      const n = rnd(i % 50 === 0 ? 30 : 6);
      for (let j = 0; j < n; j++) ls[`k${str(4)}`] = str(12);
      expect(fingerprint(ls)).toBe(reference(ls));
    }
  });
  it('agrees when the names come in order (the walk without a sort), and when only some do', () => {
    // U+FF21 sorts after U+1F600 in UTF-16 code units but before it in UTF-8 bytes (Go's order).
    const chars = ['a', 'Z', '_', '0', ' ', '"', 'é', '日', '\u{1F600}', '\uff21', '\xff', '\ud800'];
    let seed = 7;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) % n);
    const str = (max: number) => Array.from({ length: rnd(max) }, () => chars[rnd(chars.length)]).join('');
    for (let i = 0; i < 500; i++) {
      const names = new Set<string>();
      const n = rnd(8);
      for (let j = 0; j < n; j++) names.add(i % 3 === 0 ? `k${str(3)}` : `k${'abcdefgh'[rnd(8)]}${rnd(100)}`);
      const ordered = [...names].sort();
      // In code-unit order (the walk's own test), and once with the last two swapped.
      const swapped = ordered.length > 1 ? [...ordered.slice(0, -2), ordered.at(-1)!, ordered.at(-2)!] : ordered;
      for (const order of [ordered, swapped]) {
        const ls: Record<string, string> = {};
        for (const k of order) ls[k] = str(12);
        expect(fingerprint(ls)).toBe(reference(ls));
      }
    }
  });
  it('agrees when names look like array indices (which an object lists first, in numeric order)', () => {
    for (const ls of [{ '2': 'a', '10': 'b', x: 'c' }, { '10': 'a', '9': 'b' }, { '1': 'x' }, { a: '1', '0': 'z' }]) {
      expect(fingerprint(ls)).toBe(reference(ls));
    }
  });
});

describe('labelSetsEqual', () => {
  it('same names and values, any order', () => {
    expect(labelSetsEqual({ a: '1', b: '2' }, { b: '2', a: '1' })).toBe(true);
    expect(labelSetsEqual({ a: '1' }, { a: '1', b: '2' })).toBe(false);
    expect(labelSetsEqual({ a: '1', b: '2' }, { a: '1' })).toBe(false);
    expect(labelSetsEqual({ a: '1' }, { a: '2' })).toBe(false);
    expect(labelSetsEqual({}, {})).toBe(true);
  });
});
