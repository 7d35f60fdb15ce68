import { Code } from '../codes.js';
import { ok, renamed, reply, type Reply } from '../envelope.js';
import { formatTimezone } from '../format.js';
import type { Call, Services } from '../service.js';
import { getmynodes, requireAccount } from './nodes.js';

/** getnetstatus: the latest network aggregate (crawl, or the monitored nodes without one); 3 when none yet. */
export async function getnetstatus(s: Services, c: Call): Promise<Reply> {
  requireAccount(c);
  const row = await s.store.netstatus();
  return row ? ok(c.method, row.data) : reply(c.method, Code.NO_DATA);
}

/**
 * getmywallets: `{Wallets:[{Balance, Id, NetWallet}]}` (a balance of -100 means "waiting for the
 * first update"). `NknWallet`, the origin's name for the address, is sent too for its clients.
 */
export async function getmywallets(s: Services, c: Call): Promise<Reply> {
  const accountId = requireAccount(c);
  const rows = await s.store.wallets(accountId);
  if (rows.length === 0) return reply(c.method, Code.NO_DATA);
  return ok(c.method, { Wallets: rows.map((w) => ({ Balance: w.balance, Id: w.id, NetWallet: w.address, NknWallet: w.address })) });
}

/** getprices: one key per stored currency (`usd`); 3 before the first price update. */
export async function getprices(s: Services, c: Call): Promise<Reply> {
  requireAccount(c);
  const rows = await s.store.prices();
  if (rows.length === 0) return reply(c.method, Code.NO_DATA);
  return ok(c.method, Object.fromEntries(rows.map((r) => [r.currency, r.value])));
}

export function getdaemon(s: Services, c: Call): Reply {
  return ok(c.method, { Timezone: formatTimezone(s.clock.now()), Version: s.version });
}

/**
 * getfullstack: five full envelopes, each with Method `getfullstack`. No network status yet → the
 * whole reply is code 3; a failing member other than "no data" → code 4.
 */
export async function getfullstack(s: Services, c: Call): Promise<Reply> {
  requireAccount(c);
  const sub = async (fn: (s: Services, c: Call) => Reply | Promise<Reply>) => renamed(await fn(s, { ...c, value: {} }), c.method);
  const [Daemon, Netstatus, Nodes, Prices, Wallets] = await Promise.all([sub(getdaemon), sub(getnetstatus), sub(getmynodes), sub(getprices), sub(getmywallets)]);
  const value = { Daemon, Netstatus, Nodes, Prices, Wallets };
  const failed = (r: Reply) => r.Code !== Code.OK && r.Code !== Code.NO_DATA;
  if (Daemon.Code !== Code.OK || failed(Nodes) || failed(Wallets) || failed(Prices) || failed(Netstatus)) {
    return reply(c.method, Code.ERROR, value);
  }
  if (Netstatus.Code === Code.NO_DATA) return reply(c.method, Code.NO_DATA, value);
  return ok(c.method, value);
}

const WALLET_RE = /^NKN[A-Za-z0-9]{33}$/;
const MAX_WALLETS = 3;

/**
 * savemysettings {Wallets}: JSON only. The stored set becomes the given one (`[]` deletes all;
 * no Wallets key changes nothing). More than 3 → 16; a malformed address → 17.
 */
export async function savemysettings(s: Services, c: Call): Promise<Reply> {
  const accountId = requireAccount(c);
  if (c.form) return reply(c.method, Code.INCORRECT_QUERY, null, 'savemysettings accepts application/json only');
  const wallets = c.value.Wallets;
  if (wallets !== undefined) {
    if (!Array.isArray(wallets) || wallets.some((w) => typeof w !== 'string')) return reply(c.method, Code.BAD_WALLET);
    const list = [...new Set((wallets as string[]).map((w) => w.trim()))];
    if (list.length > MAX_WALLETS) return reply(c.method, Code.WALLETS_OVERFLOW);
    if (list.some((w) => !WALLET_RE.test(w))) return reply(c.method, Code.BAD_WALLET);
    await s.store.replaceWallets(accountId, list, s.clock.now());
  }
  return ok(c.method, { Data: 'All settings saved' });
}

/** getnodeipbypublickey {PublicKey}: addresses seen with that key (last crawl and monitored nodes). */
export async function getnodeipbypublickey(s: Services, c: Call): Promise<Reply> {
  const key = c.value.PublicKey;
  if (key === undefined || key === null || key === '') return reply(c.method, Code.NO_PUBLIC_KEY);
  if (typeof key !== 'string' || !/^[0-9a-fA-F]{64}$/.test(key.trim())) return reply(c.method, Code.BAD_PUBLIC_KEY);
  const pk = key.trim().toLowerCase();
  const ips = new Set<string>(await s.store.monitoredIpsByKey(pk));
  const crawl = await s.store.crawlInfo();
  if (crawl) for (const ip of await s.store.crawlIpsByKey(crawl.generation, pk)) ips.add(ip);
  if (ips.size === 0) return reply(c.method, Code.NO_DATA);
  return ok(c.method, { IpList: [...ips].sort() });
}
