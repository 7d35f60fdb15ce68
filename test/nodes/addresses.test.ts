import { describe, expect, it } from 'vitest';
import { classifyAddress, splitAddressList } from '../../src/nodes/addresses.js';

describe('addresses', () => {
  it('splits by comma first, then line breaks, then spaces; per-line names with commas', () => {
    expect(splitAddressList('1.1.1.1, 2.2.2.2')).toEqual([{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }]);
    expect(splitAddressList('1.1.1.1\n2.2.2.2 ')).toEqual([{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }]);
    expect(splitAddressList('1.1.1.1 2.2.2.2')).toEqual([{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }]);
    expect(splitAddressList('1.1.1.1, a\n2.2.2.2,b_c-d')).toEqual([
      { ip: '1.1.1.1', name: 'a' },
      { ip: '2.2.2.2', name: 'b_c-d' },
    ]);
    // Not every line named: commas and line breaks both separate.
    expect(splitAddressList('1.1.1.1,2.2.2.2\n3.3.3.3')).toEqual([{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }, { ip: '3.3.3.3' }]);
    expect(splitAddressList('1.1.1.1')).toBeNull();
    expect(splitAddressList('1.1.1.1;2.2.2.2')).toBeNull();
  });

  it('classifies addresses', () => {
    expect(classifyAddress('8.8.8.8')).toBe('public');
    expect(classifyAddress('203.0.113.1')).toBe('public');
    expect(classifyAddress('198.19.255.1')).toBe('public');
    expect(classifyAddress('100.127.0.1')).toBe('private');
    expect(classifyAddress('100.128.0.1')).toBe('public');
    expect(classifyAddress('fe80::1')).toBe('ipv6');
    expect(classifyAddress('1.2.3.4 ')).toBe('invalid');
  });
});
