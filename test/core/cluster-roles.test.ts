/** Member roles as dqlite's role management assigns them (three voters, three stand-bys, the rest spares). */
import { describe, expect, it } from 'vitest';
import { adjustRoles, type RoleInput } from '../../src/core/cluster/roles.js';

const m = (name: string, role: string, online = true, failure_domain = 0): RoleInput => ({ name, role, online, failure_domain });
const roles = (ms: RoleInput[], self = 'a') => Object.fromEntries(adjustRoles(ms, self));

describe('cluster roles', () => {
  it('fills three voters, then three stand-bys, the rest spares; members heard from leave PENDING', () => {
    const ms = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => m(n, n === 'a' ? 'voter' : 'PENDING'));
    expect(roles(ms)).toEqual({ a: 'voter', b: 'voter', c: 'voter', d: 'stand-by', e: 'stand-by', f: 'stand-by', g: 'spare', h: 'spare' });
  });

  it('a member never heard from stays PENDING', () => {
    expect(roles([m('a', 'voter'), m('b', 'PENDING', false)])).toEqual({ a: 'voter', b: 'PENDING' });
  });

  it('an offline voter is demoted to spare and a stand-by promoted in its place', () => {
    const before = [m('a', 'voter'), m('b', 'voter', false), m('c', 'voter'), m('d', 'stand-by'), m('e', 'spare')];
    expect(roles(before)).toEqual({ a: 'voter', b: 'spare', c: 'voter', d: 'voter', e: 'stand-by' });
  });

  it('a stand-by is promoted before a spare; a failure domain not yet among the voters first', () => {
    expect(roles([m('a', 'voter'), m('b', 'voter'), m('c', 'spare'), m('d', 'stand-by')])).toMatchObject({ c: 'stand-by', d: 'voter' });
    expect(roles([m('a', 'voter', true, 1), m('b', 'voter', true, 1), m('c', 'stand-by', true, 1), m('d', 'spare', true, 2)])).toMatchObject({ c: 'stand-by', d: 'voter' });
  });

  it('too many voters (after a split): the extra ones are demoted, never the member deciding', () => {
    const r = roles([m('a', 'voter'), m('b', 'voter'), m('c', 'voter'), m('d', 'voter'), m('e', 'voter')], 'e');
    expect(Object.values(r).filter((x) => x === 'voter')).toHaveLength(3);
    expect(r.e).toBe('voter');
    expect(Object.values(r).filter((x) => x === 'stand-by')).toHaveLength(2);
  });

  it('is stable: the roles it gives are kept when nothing changes', () => {
    const ms = ['a', 'b', 'c', 'd', 'e'].map((n) => m(n, 'PENDING'));
    const first = adjustRoles(ms, 'a');
    const again = adjustRoles(ms.map((x) => ({ ...x, role: first.get(x.name)! })), 'a');
    expect(Object.fromEntries(again)).toEqual(Object.fromEntries(first));
  });
});
