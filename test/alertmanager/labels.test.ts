import { describe, expect, it } from 'vitest';
import { compareLabelSets, fingerprint, isValidLabelName } from '../../src/alertmanager/labels.js';

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
