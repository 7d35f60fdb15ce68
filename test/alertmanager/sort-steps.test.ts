import { describe, expect, it } from 'vitest';
import { finishSort, sortInSteps } from '../../src/alertmanager/sort-steps.js';
import { compareAlertOrder, compareLabelSets } from '../../src/alertmanager/labels.js';

/** A small deterministic generator (the same cases every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('sortInSteps', () => {
  it('gives the order Array.prototype.sort gives, ties in their first order, at every size', () => {
    const r = rng(7);
    for (const n of [0, 1, 2, 15, 16, 17, 31, 33, 100, 257, 1000, 4099]) {
      // Few distinct keys: many ties, so the order among equal elements is checked too.
      const items = Array.from({ length: n }, (_, i) => ({ key: Math.floor(r() * 20), i }));
      const cmp = (a: { key: number }, b: { key: number }) => a.key - b.key;
      const want = [...items].sort(cmp);
      expect(finishSort(sortInSteps([...items], cmp, 'pause', 7))).toEqual(want);
    }
  });

  it('orders label sets as the groups and their alerts are ordered', () => {
    const r = rng(11);
    const sets = Array.from({ length: 3000 }, () => {
      const ls: Record<string, string> = {};
      for (const name of ['job', 'instance', 'alertname', 'a', 'zz']) if (r() < 0.6) ls[name] = `v${Math.floor(r() * 30)}`;
      return ls;
    });
    expect(finishSort(sortInSteps([...sets], compareLabelSets, 0))).toEqual([...sets].sort(compareLabelSets));
    expect(finishSort(sortInSteps([...sets], compareAlertOrder, 0))).toEqual([...sets].sort(compareAlertOrder));
  });

  it('pauses after about every `every` comparisons, however the input is ordered', () => {
    for (const input of [Array.from({ length: 10_000 }, (_, i) => i), Array.from({ length: 10_000 }, (_, i) => -i), Array.from({ length: 10_000 }, (_, i) => (i * 7919) % 10_007)]) {
      let comparisons = 0;
      let since = 0;
      let longest = 0;
      let pauses = 0;
      const steps = sortInSteps(
        [...input],
        (a, b) => {
          comparisons++;
          since++;
          return a - b;
        },
        'p',
        100,
      );
      let r = steps.next();
      while (!r.done) {
        expect(r.value).toBe('p');
        longest = Math.max(longest, since);
        since = 0;
        pauses++;
        r = steps.next();
      }
      longest = Math.max(longest, since);
      expect(r.value).toEqual([...input].sort((a, b) => a - b));
      // A pause at the latest after a run of insertions (RUN elements: up to 120 comparisons more).
      expect(longest).toBeLessThanOrEqual(100 + 120);
      expect(pauses).toBeGreaterThanOrEqual(Math.floor(comparisons / 220));
    }
  });
});
