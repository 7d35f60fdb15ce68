import { describe, expect, it } from 'vitest';
import { indexPastDepth, jsonDeeperThan } from '../../src/http/json-depth.js';

/** The character walk on its own (what indexPastDepth answers for every text). */
function walk(text: string, max: number): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length; i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '"') break;
      }
    } else if (c === '{' || c === '[') {
      if (++depth > max) return i;
    } else if (c === '}' || c === ']') depth--;
  }
  return -1;
}

describe('indexPastDepth', () => {
  it('finds the opener of the first level past the limit', () => {
    expect(indexPastDepth('[[[1]]]', 3)).toBe(-1);
    expect(indexPastDepth('[[[1]]]', 2)).toBe(2);
    expect(indexPastDepth(' {"a":[{"b":1}]}', 2)).toBe(7);
    expect(jsonDeeperThan('[[[]]]', 2)).toBe(true);
    expect(jsonDeeperThan('[[[]]]', 3)).toBe(false);
  });

  it('skips brackets inside strings, also when there are more brackets than the limit', () => {
    // Six openers in all, three of them in strings: deeper than 2 only by the structure.
    expect(indexPastDepth('[{"a":"[{["}]', 2)).toBe(-1);
    expect(indexPastDepth('[{"a":"\\"[{"}]', 1)).toBe(1);
    expect(indexPastDepth('["[[[[", ["x"]]', 2)).toBe(-1);
    expect(indexPastDepth('["[[[[", [["x"]]]', 2)).toBe(10);
  });

  it('answers as the character walk does, on either side of the opener count', () => {
    const texts = [
      '[' + Array.from({ length: 100 }, (_, i) => `{"labels":{"a":"${i}"}}`).join(',') + ']',
      '['.repeat(50) + ']'.repeat(50),
      '{"x":' + '['.repeat(20) + '"{[{["' + ']'.repeat(20) + '}',
      '[[],[],[],[[[]]]]',
      '',
      '"[[[["',
    ];
    for (const t of texts) for (const max of [0, 1, 2, 3, 4, 5, 19, 20, 21, 49, 50, 51, 100, 10_000]) expect(indexPastDepth(t, max), `${max} ${t.slice(0, 30)}`).toBe(walk(t, max));
  });
});
