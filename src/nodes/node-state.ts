/**
 * Lenient decoding of NKN node replies: unknown fields are ignored and numbers may arrive as
 * strings (the origin's strict validation broke on newer node releases, issue #28).
 */
export interface NodeState {
  addr: string;
  currTimeStamp: number;
  height: number;
  id: string;
  publicKey: string;
  proposalSubmitted: number;
  relayMessageCount: number;
  syncState: string;
  uptime: number;
  version: string;
}

export interface Neighbor {
  addr: string;
  ip: string | null;
  publicKey: string;
  roundTripTime: number;
  syncState: string;
  height: number;
}

function num(v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return 0;
}

function str(v: unknown, max = 256): string {
  return typeof v === 'string' ? v.slice(0, max) : '';
}

/** A getnodestate result, or null when it is not an object with a syncState. */
export function decodeNodeState(result: unknown): NodeState | null {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return null;
  const r = result as Record<string, unknown>;
  if (typeof r.syncState !== 'string' || r.syncState === '') return null;
  return {
    addr: str(r.addr),
    currTimeStamp: Math.trunc(num(r.currTimeStamp)),
    height: Math.trunc(num(r.height)),
    id: str(r.id, 128),
    publicKey: str(r.publicKey, 128).toLowerCase(),
    proposalSubmitted: Math.trunc(num(r.proposalSubmitted)),
    relayMessageCount: Math.max(0, Math.trunc(num(r.relayMessageCount))),
    syncState: str(r.syncState, 64),
    uptime: Math.max(0, Math.trunc(num(r.uptime))),
    version: str(r.version, 64),
  };
}

/** IPv4 address of a `tcp://1.2.3.4:30001` node address. */
export function ipFromAddr(addr: string): string | null {
  const m = /^[a-z]+:\/\/(\d{1,3}(?:\.\d{1,3}){3}):\d+\/?$/i.exec(addr.trim());
  return m ? m[1]! : null;
}

/** A getneighbor result, or null when it is not an array. */
export function decodeNeighbors(result: unknown): Neighbor[] | null {
  if (!Array.isArray(result)) return null;
  const out: Neighbor[] = [];
  for (const item of result) {
    if (typeof item !== 'object' || item === null) continue;
    const r = item as Record<string, unknown>;
    const addr = str(r.addr);
    out.push({
      addr,
      ip: ipFromAddr(addr),
      publicKey: str(r.publicKey, 128).toLowerCase(),
      roundTripTime: Math.max(0, Math.trunc(num(r.roundTripTime))),
      syncState: str(r.syncState, 64),
      height: Math.trunc(num(r.height)),
    });
  }
  return out;
}

/** floor(relays / uptime × 3600), 0 when the node just started. */
export function relaysPerHour(relays: number, uptime: number): number {
  return uptime > 0 ? Math.floor((relays / uptime) * 3600) : 0;
}
