import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import type { Egress } from '../egress/index.js';
import type { NodesConfig } from './config.js';
import { rpcCall } from './rpc.js';
import { mapLimit } from '../http/map-limit.js';
import type { NodesData } from './data.js';
import { isPlainObject } from './values.js';

interface Deps {
  store: NodesData;
  egress: Egress;
  clock: Clock;
  config: NodesConfig;
  log: Logger;
}

/**
 * Coin prices from a CoinGecko-compatible `simple/price` URL (`{"nkn":{"usd":0.39}}`; a flat
 * `{"usd":0.39}` is accepted too). Disabled unless `prices.url` is configured.
 */
export async function updatePrices(d: Deps): Promise<Record<string, number> | null> {
  const { url, timeout } = d.config.prices;
  if (!url) return null;
  try {
    const res = await d.egress.fetch(url, { signal: AbortSignal.timeout(timeout * 1000), headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const text = await res.text();
    if (text.length > 1 << 20) throw new Error('price reply too large');
    const body = JSON.parse(text) as unknown;
    const src = isPlainObject(body) && isPlainObject(body.nkn) ? body.nkn : body;
    const prices: Record<string, number> = {};
    if (isPlainObject(src)) {
      for (const [k, v] of Object.entries(src)) {
        if (/^[a-z]{2,10}$/.test(k) && typeof v === 'number' && Number.isFinite(v)) prices[k] = v;
      }
    }
    if (Object.keys(prices).length === 0) throw new Error('no prices in the reply');
    await d.store.setPrices(prices, d.clock.now());
    return prices;
  } catch (e) {
    d.log.warn({ err: (e as Error).message, url }, 'price update failed');
    return null;
  }
}

/**
 * Wallet balances through an NKN JSON-RPC node (`getbalancebyaddr {address}` →
 * `result.amount`, a decimal string). Disabled unless `balances.rpc` is configured.
 */
export async function updateBalances(d: Deps): Promise<number> {
  const { rpc, timeout, concurrency } = d.config.balances;
  if (!rpc) return 0;
  const addresses = await d.store.walletAddresses();
  const results: { address: string; balance: number }[] = [];
  await mapLimit(addresses, concurrency, async (address) => {
    const r = await rpcCall(d.egress, rpc, 'getbalancebyaddr', { address }, { timeoutMs: timeout * 1000 });
    if (r.kind !== 'ok' || !isPlainObject(r.result)) {
      d.log.debug({ address, outcome: r.kind }, 'balance lookup failed');
      return;
    }
    const amount = Number(r.result.amount);
    if (Number.isFinite(amount)) results.push({ address, balance: amount });
  });
  await d.store.setBalances(results, d.clock.now());
  return results.length;
}
