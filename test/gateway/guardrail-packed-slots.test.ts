/** Slots go to the guardrail thread and back packed: the same slots come out, empty texts and every role included. */
import { describe, expect, it } from 'vitest';
import type { Slot } from '../../src/gateway/guardrails/engine.js';
import { packSlots, unpackSlots } from '../../src/gateway/guardrails/packed-slots.js';

describe('packed slots', () => {
  it('unpack(pack(slots)) is the slots', () => {
    const roles = ['system', 'user', 'assistant', 'tool', 'field'] as const;
    const slots: Slot[] = Array.from({ length: 5000 }, (_, i) => ({ role: roles[i % 5]!, text: i % 7 === 0 ? '' : `text ${i} é 😀` }));
    const packed = packSlots(slots);
    expect(packed.ends).toHaveLength(5000);
    expect(unpackSlots(packed)).toEqual(slots);
    expect(unpackSlots(packSlots([]))).toEqual([]);
  });

  it('survives a structured clone (what the thread gets) as one string and two typed arrays', () => {
    const slots: Slot[] = [{ role: 'user', text: 'a' }, { role: 'tool', text: 'bc' }];
    const copy = structuredClone(packSlots(slots));
    expect(typeof copy.text).toBe('string');
    expect(unpackSlots(copy)).toEqual(slots);
  });
});
