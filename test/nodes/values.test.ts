import { describe, expect, it } from 'vitest';
import { readBool, readId, readList } from '../../src/nodes/values.js';

describe('values', () => {
  it('reads form and JSON values', () => {
    expect(readBool('True')).toBe(true);
    expect(readBool('no')).toBeUndefined();
    expect(readId('12')).toBe(12);
    expect(readId('0')).toBeUndefined();
    expect(readId('1e3')).toBeUndefined();
    expect(readList('1, 2')).toEqual(['1', '2']);
  });
});
