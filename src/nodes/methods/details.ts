import { Code } from '../codes.js';
import { ok, reply, type Reply } from '../envelope.js';
import { formatGoDuration } from '../format.js';
import { decodeNeighbors, decodeNodeState, relaysPerHour } from '../node-state.js';
import { nodeUrl, rpcCall } from '../rpc.js';
import type { Call, Services } from '../service.js';
import { readId } from '../values.js';
import { requireAccount } from './nodes.js';

/**
 * getnodedetails {NodeId}: asks the node live for its state (getnodestate) and neighbours
 * (getneighbor). 20/21 for the state query, 22/23/24 for the neighbour query. A node that answers
 * the state query with a JSON-RPC error (no ID yet, DB unavailable) gets code 4 with the node's
 * error in `Value.NodeError` (the origin's code 29 is outside the seed's table).
 */
export async function getnodedetails(s: Services, c: Call): Promise<Reply> {
  const accountId = requireAccount(c);
  const nodeId = readId(c.value.NodeId);
  if (nodeId === undefined) return reply(c.method, Code.BAD_NODE_ID);
  const node = await s.store.node(accountId, nodeId);
  if (!node) return reply(c.method, Code.IDS_NOT_FOUND);

  const started = performance.now();
  const url = nodeUrl(node.ip, s.config.poll.port);
  const timeoutMs = s.config.details.timeout * 1000;
  const state = await rpcCall(s.egress, url, 'getnodestate', {}, { timeoutMs });
  const stateTime = performance.now() - started;
  if (state.kind === 'transport') return reply(c.method, Code.NODE_OFFLINE);
  if (state.kind === 'decode') return reply(c.method, Code.STATE_DECODE);
  if (state.kind === 'rpc-error') {
    const e = state.data;
    return reply(c.method, Code.ERROR, {
      NodeError: {
        Code: state.code,
        Description: state.message,
        PublicKey: typeof e.publicKey === 'string' ? e.publicKey : '',
        WalletAddress: typeof e.walletAddress === 'string' ? e.walletAddress : '',
      },
      NodeId: nodeId,
    }, 'Query returned an error (getnodestate)');
  }
  const decoded = decodeNodeState(state.result);
  if (!decoded) return reply(c.method, Code.STATE_DECODE);

  const neighborStarted = performance.now();
  const nb = await rpcCall(s.egress, url, 'getneighbor', {}, { timeoutMs, maxBytes: 4 << 20 });
  const neighborTime = performance.now() - neighborStarted;
  if (nb.kind === 'transport') return reply(c.method, Code.NEIGHBOR_TIMEOUT);
  if (nb.kind === 'decode') return reply(c.method, Code.NEIGHBOR_DECODE);
  if (nb.kind === 'rpc-error') return reply(c.method, Code.NEIGHBOR_ERROR);
  const neighbors = decodeNeighbors(nb.result);
  if (!neighbors) return reply(c.method, Code.NEIGHBOR_DECODE);

  let min = 0;
  let max = 0;
  let sum = 0;
  let persist = 0;
  neighbors.forEach((n, i) => {
    if (i === 0 || n.roundTripTime < min) min = n.roundTripTime;
    if (n.roundTripTime > max) max = n.roundTripTime;
    sum += n.roundTripTime;
    if (n.syncState === 'PERSIST_FINISHED') persist++;
  });
  return ok(c.method, {
    DebugInfo: {
      GetneighborTime: formatGoDuration(neighborTime),
      GetnodestateTime: formatGoDuration(stateTime),
      HandlingTime: formatGoDuration(performance.now() - started),
    },
    NodeId: nodeId,
    NodeStats: {
      MinPing: min,
      AvgPing: neighbors.length ? Math.round(sum / neighbors.length) : 0,
      MaxPing: max,
      NeighborCount: neighbors.length,
      NeighborPersist: persist,
      RelaysPerHour: relaysPerHour(decoded.relayMessageCount, decoded.uptime),
      NodeState: state.body,
    },
  });
}
