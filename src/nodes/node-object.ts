import { formatDateTime } from './format.js';
import type { NodeRow } from './store.js';

/** Stored status values besides the node's own syncState. */
export const OFFLINE = 'OFFLINE';
export const OUT = 'OUT';
/** Display states for JSON-RPC error replies (numbers are zeroed, no Err key). */
export const ERROR_STATES: Readonly<Record<number, string>> = { [-45022]: 'GENERATING ID', [-45024]: 'PRUNING DB' };
export const UNKNOWN_ERROR_STATE = 'UNKNOWN RESPONSE CODE';
const ZEROED = new Set([...Object.values(ERROR_STATES), UNKNOWN_ERROR_STATE]);

export function isErrorState(status: string): boolean {
  return ZEROED.has(status);
}

/**
 * One entry of getmynodes' `List`. Keys are in alphabetical order, as the origin's Go map encodes them.
 * `Err`: 1 offline, 2 waiting for the first update, 3 out of network; absent when the node is mining.
 */
export function nodeObject(row: NodeRow, now: number): Record<string, unknown> {
  if (row.status === null || row.status === undefined) {
    return { Err: 2, Ip: row.ip, LatestUpdate: formatDateTime(now), Name: row.name, NodeId: row.id, SyncState: 'Waiting for first update' };
  }
  const latest = formatDateTime(row.updated_at ?? now);
  if (row.status === OFFLINE) {
    return {
      Currtimestamp: 0,
      Err: 1,
      Height: 0,
      Ip: row.ip,
      LatestUpdate: latest,
      Name: row.name,
      NodeId: row.id,
      ProposalSubmitted: -1,
      RelayMessageCount: 0,
      RelaysPerHour: 0,
      RelaysPerHour10: 0,
      RelaysPerHour60: 0,
      SyncState: '_OFFLINE_',
      Uptime: 0,
      Version: '',
    };
  }
  const zero = isErrorState(row.status);
  const n = (v: number | null) => (zero ? 0 : (v ?? 0));
  const o: Record<string, unknown> = {
    Currtimestamp: n(row.currts),
    Height: n(row.height),
    Ip: row.ip,
    LatestUpdate: latest,
    Name: row.name,
    NodeId: row.id,
    ProposalSubmitted: n(row.proposals),
    RelayMessageCount: n(row.relays),
    RelaysPerHour: n(row.rph),
    RelaysPerHour10: n(row.rph10),
    RelaysPerHour60: n(row.rph60),
    SyncState: row.status === OUT ? '_OUT_' : row.status,
    Uptime: n(row.uptime),
    Version: zero ? '' : (row.version ?? ''),
  };
  if (row.status === OUT) return { Currtimestamp: o.Currtimestamp, Err: 3, ...withoutFirst(o) };
  return o;
}

function withoutFirst(o: Record<string, unknown>): Record<string, unknown> {
  const { Currtimestamp: _c, ...rest } = o;
  return rest;
}
