/**
 * Slots as the guardrail thread gets them and gives them back: one string of every text in order,
 * where each ends, and each role's number. Sixty thousand slot objects cost the event loop about as
 * much to clone into a message (and to rebuild from the answer) as the scan costs the thread; one
 * string and two typed arrays are copied whole.
 */
import type { Slot, SlotRole } from './engine.js';

const ROLES: readonly SlotRole[] = ['system', 'user', 'assistant', 'tool', 'field'];
const ROLE_CODE: Record<SlotRole, number> = { system: 0, user: 1, assistant: 2, tool: 3, field: 4 };

export interface PackedSlots {
  text: string;
  /** Where slot i's text ends in `text` (it starts where slot i-1's ends). */
  ends: Float64Array;
  roles: Uint8Array;
}

export function packSlots(slots: readonly Slot[]): PackedSlots {
  const ends = new Float64Array(slots.length);
  const roles = new Uint8Array(slots.length);
  const texts = new Array<string>(slots.length);
  let at = 0;
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    texts[i] = s.text;
    ends[i] = at += s.text.length;
    roles[i] = ROLE_CODE[s.role];
  }
  return { text: texts.join(''), ends, roles };
}

export function unpackSlots(p: PackedSlots): Slot[] {
  const slots = new Array<Slot>(p.ends.length);
  let at = 0;
  for (let i = 0; i < p.ends.length; i++) {
    const end = p.ends[i]!;
    slots[i] = { role: ROLES[p.roles[i]!]!, text: p.text.slice(at, end) };
    at = end;
  }
  return slots;
}
