/**
 * examples/gateway.yaml starts as shipped: copied into a fresh state dir with no environment variable
 * set for it, the gateway comes up with its providers, and no provider points at one of ctl's own
 * default listeners (a provider on the node monitor's 8081 talked to ctl itself).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.js';

const text = readFileSync(join(ROOT, 'examples', 'gateway.yaml'), 'utf8');
const CTL_PORTS = ['9093', '20128', '8000', '8081'];
let d: TestDaemon;

beforeAll(async () => {
  d = await startDaemon({ files: { 'gateway.yaml': text } });
});
afterAll(async () => {
  await d?.stop();
});

describe('examples/gateway.yaml', () => {
  it('starts as shipped: the gateway runs with the example providers, combos and keys', async () => {
    const core = (await d.request('core', 'GET', '/core/1.0')).json as { metadata: { servers: Record<string, { component: string; component_error?: string }> } };
    expect(core.metadata.servers.gateway, JSON.stringify(core.metadata.servers.gateway)).toMatchObject({ component: 'running' });
    const providers = (await d.request('gateway', 'GET', '/api/providers')).json as { providers: { id: string; source: string }[] };
    expect(providers.providers.map((p) => p.id).sort()).toEqual(['claude', 'local', 'ollama']);
    const keys = (await d.request('gateway', 'GET', '/api/keys')).json as { keys: { name: string }[] };
    expect(keys.keys.map((k) => k.name).sort()).toEqual(['admin', 'app', 'ci']);
  });

  it('needs no environment variable and points no provider at a ctl listener', () => {
    const doc = YAML.parse(text) as { providers: { id: string; base_url?: string; api_key_env?: string; enabled?: boolean }[]; keys: { key_env?: string }[] };
    expect(doc.keys.filter((k) => k.key_env !== undefined)).toEqual([]);
    for (const p of doc.providers) {
      if (p.base_url) expect(CTL_PORTS, `${p.id} → ${p.base_url}`).not.toContain(new URL(p.base_url).port);
      // A provider whose key comes from the environment is shipped disabled.
      if (p.api_key_env) expect(p.enabled, p.id).toBe(false);
    }
  });
});
