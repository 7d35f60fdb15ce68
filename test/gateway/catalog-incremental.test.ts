import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type GatewayHarness } from './harness.js';
import { rng } from '../helpers/rng.js';


const YAML = `
providers:
  - {id: filep, kind: openai, base_url: "http://127.0.0.1:9/v1", api_key: "sk-file-000000000", models: [f1, shared]}
aliases:
  fileal: filep/f1
`;

/** Every management view a write can change, with time-dependent fields left out. */
async function views(h: GatewayHarness): Promise<unknown> {
  const get = async (path: string) => (await h.req('GET', path)).json;
  const providers = (await get('/api/providers')) as { providers: Record<string, unknown>[]; shadowed: string[] };
  return {
    providers: providers.providers.map(({ accountStates: _a, breaker: _b, updatedAt: _u, createdAt: _c, ...p }) => p),
    shadowed: providers.shadowed,
    // `created` of a gateway.yaml provider's models is when the file was loaded: not the catalog's content.
    models: ((await get('/v1/models')) as { data: Record<string, unknown>[] }).data.map(({ created: _c, ...m }) => m),
    aliases: await get('/api/models/alias'),
    combos: await get('/api/combos'),
    mappings: await get('/api/model-combo-mappings'),
    keys: ((await get('/api/keys')) as { keys: Record<string, unknown>[] }).keys.map(({ lastUsedAt: _l, ...k }) => k),
    pricing: await get('/api/pricing'),
  };
}

describe('incremental catalog updates', () => {
  for (const seed of [1, 7, 42]) {
    it(`a random sequence of management writes leaves the same catalog as a full build (seed ${seed})`, async () => {
      const r = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
      const dir = mkdtempSync(join(tmpdir(), 'ctl-catalog-'));
      let h = await startGateway({ yaml: YAML, dir });
      const ids = ['p0', 'p1', 'p2', 'p3', 'filep'];
      const ops: string[] = [];
      try {
        for (let step = 0; step < 60; step++) {
          const id = pick(ids);
          const n = Math.floor(r() * 1000);
          const op = pick(['provider', 'update', 'delete', 'model', 'unmodel', 'alias', 'unalias', 'combo', 'uncombo', 'mapping', 'key', 'revoke', 'price', 'unprice', 'accounts']);
          ops.push(`${op}:${id}:${n}`);
          switch (op) {
            case 'provider':
              await h.req('POST', '/api/providers', { id, kind: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: `sk-${id}-00000000000`, priority: n % 5, models: [`m${n % 3}`, 'shared'] });
              break;
            case 'update':
              await h.req('PATCH', `/api/providers/${id}`, { priority: n % 7, enabled: n % 4 !== 0 });
              break;
            case 'delete':
              await h.req('DELETE', `/api/providers/${id}`);
              break;
            case 'model':
              await h.req('POST', '/api/provider-models', { provider: id, model: `c${n % 4}` });
              break;
            case 'unmodel':
              await h.req('DELETE', '/api/provider-models', { provider: id, model: `c${n % 4}` });
              break;
            case 'alias':
              await h.req('POST', '/api/models/alias', { alias: `al${n % 3}`, model: `${id}/m${n % 3}` });
              break;
            case 'unalias':
              await h.req('DELETE', '/api/models/alias', { alias: `al${n % 3}` });
              break;
            case 'combo':
              await h.req('POST', '/api/combos', { name: `co${n % 3}`, targets: [`${id}/shared`] });
              break;
            case 'uncombo':
              await h.req('DELETE', `/api/combos/co${n % 3}`);
              break;
            case 'mapping':
              await h.req('POST', '/api/model-combo-mappings', { pattern: `x${n % 3}*`, comboId: `co${n % 3}`, priority: n % 9 });
              break;
            case 'key':
              await h.req('POST', '/api/keys', { name: `k${n % 4}`, models: ['*'] });
              break;
            case 'revoke': {
              const keys = (await h.req('GET', '/api/keys')).json.keys as { id: string }[];
              if (keys.length) await h.req('POST', `/api/keys/${pick(keys).id}/revoke`);
              break;
            }
            case 'price':
              await h.req('POST', '/api/pricing', { [`${id}/shared`]: { input: n / 100, output: n / 50 } });
              break;
            case 'unprice':
              await h.req('DELETE', `/api/pricing?model=${id}/shared`);
              break;
            case 'accounts':
              await h.req('POST', '/api/providers/bulk', { provider: id, apiKeys: [`sk-bulk-${n}-0000000000`] });
              break;
          }
          if (step % 15 === 14) {
            const incremental = await views(h);
            await h.close();
            h = await startGateway({ dir }); // a full build from the same database and file
            expect(await views(h), `seed ${seed} after ${ops.join(' ')}`).toEqual(incremental);
          }
        }
      } finally {
        await h.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
