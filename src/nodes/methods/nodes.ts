import { Code } from '../codes.js';
import { ok, RawJson, reply, ReplyError, type Reply } from '../envelope.js';
import { classifyAddress, isIPv4, NAME_RE, splitAddressList, type AddressEntry } from '../addresses.js';
import type { Call, Services } from '../service.js';
import { readBool, readId, readList } from '../values.js';

function account(c: Call): number {
  if (c.accountId === undefined) throw new ReplyError(Code.NO_AUTH);
  return c.accountId;
}

/** Check one address: 9 not an address, 10 not IPv4, 11 not public. */
function checkAddress(ip: string): void {
  const cls = classifyAddress(ip);
  if (cls === 'invalid') throw new ReplyError(Code.BAD_IP);
  if (cls === 'ipv6') throw new ReplyError(Code.NOT_IPV4);
  if (cls === 'private') throw new ReplyError(Code.NOT_PUBLIC);
}

/**
 * addnodes {Multiple, Name, Ip}: one address, or a list split by commas, line breaks or spaces
 * (lines may read `IP , name`). All new → 0; some already present → 2 (the new ones are added);
 * all present → 14. The account holds at most `nodes-per-account` nodes (12).
 */
export async function addnodes(s: Services, c: Call): Promise<Reply> {
  const accountId = account(c);
  const { Multiple, Name, Ip } = c.value;
  if (Multiple === undefined || Name === undefined || Ip === undefined) return reply(c.method, Code.INCORRECT_QUERY);
  const multiple = readBool(Multiple);
  if (multiple === undefined) return reply(c.method, Code.BAD_MULTIPLE);
  if (typeof Name !== 'string') return reply(c.method, Code.INCORRECT_QUERY);
  if (typeof Ip !== 'string') return reply(c.method, Code.BAD_IP_VAR);
  const name = Name.trim();
  if (name !== '' && !NAME_RE.test(name)) return reply(c.method, Code.BAD_NAME);

  let entries: AddressEntry[];
  if (multiple) {
    const list = splitAddressList(Ip);
    if (list === null || list.length < 2) return reply(c.method, Code.BAD_DELIMITER);
    entries = list;
  } else {
    entries = [{ ip: Ip.trim() }];
  }
  const count = await s.store.countNodes(accountId);
  if (count + entries.length > s.config.nodesPerAccount) return reply(c.method, Code.NODES_LIMIT);
  for (const e of entries) checkAddress(e.ip);

  // One entry per address (the first wins), named `<Name or Node_><n>` unless the line named it.
  const seen = new Set<string>();
  const rows: { ip: string; name: string }[] = [];
  const prefix = multiple ? name || 'Node_' : 'Node_';
  for (const e of entries) {
    if (seen.has(e.ip)) continue;
    seen.add(e.ip);
    const given = e.name ?? (multiple ? '' : name);
    rows.push({ ip: e.ip, name: given || `${prefix}${count + rows.length + 1}` });
  }
  // The limit is checked again where the rows are written (another daemon may add at the same time).
  const added = await s.store.addNodes(accountId, rows, s.clock.now(), s.config.nodesPerAccount);
  if (added === null) return reply(c.method, Code.NODES_LIMIT);
  const { inserted, duplicates } = added;
  if (inserted === 0) return reply(c.method, Code.ALL_EXIST);
  if (duplicates > 0) return reply(c.method, Code.PARTIAL);
  return ok(c.method, { Info: multiple ? 'Nodes added' : 'Your node added' });
}

const MAX_IDS = 100_000;

/**
 * rmnodes {NodesId}: all or nothing (18). The success reply's Method reads `rmnodesbyip`, as the
 * seed and the origin's API.md show; error replies name `rmnodes` (the origin's error path).
 */
export async function rmnodes(s: Services, c: Call): Promise<Reply> {
  const accountId = account(c);
  const list = readList(c.value.NodesId);
  if (!list || list.length === 0 || list.length > MAX_IDS) return reply(c.method, Code.BAD_NODES_ID);
  const ids: number[] = [];
  for (const v of list) {
    const id = readId(v);
    if (id === undefined) return reply(c.method, Code.BAD_NODES_ID);
    ids.push(id);
  }
  const removed = await s.store.removeNodesById(accountId, [...new Set(ids)]);
  if (removed === null) return reply(c.method, Code.IDS_NOT_FOUND);
  return ok('rmnodesbyip', { Data: 'Nodes removed successfully', NodesId: removed });
}

/** rmnodesbyip {NodesIp}: all or nothing (28); replies with the removed node ids. */
export async function rmnodesbyip(s: Services, c: Call): Promise<Reply> {
  const accountId = account(c);
  const list = readList(c.value.NodesIp);
  if (!list || list.length === 0 || list.length > MAX_IDS) return reply(c.method, Code.BAD_NODES_IP);
  const ips: string[] = [];
  for (const v of list) {
    if (typeof v !== 'string' || !isIPv4(v.trim())) return reply(c.method, Code.BAD_NODES_IP);
    ips.push(v.trim());
  }
  const removed = await s.store.removeNodesByIp(accountId, [...new Set(ips)]);
  if (removed === null) return reply(c.method, Code.IPS_NOT_FOUND);
  return ok(c.method, { Data: 'Nodes removed successfully', NodesId: removed });
}

/** getmynodes: `{List}`; code 3 when the account has no nodes. */
export async function getmynodes(s: Services, c: Call): Promise<Reply> {
  const accountId = account(c);
  const json = await s.nodeLists.get(s.store, accountId, s.clock.now());
  return json === null ? reply(c.method, Code.NO_DATA) : ok(c.method, new RawJson(json));
}

export { account as requireAccount };
