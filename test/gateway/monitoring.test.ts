/** /api/sessions, /api/rate-limit, /api/usage/{connectionId}, and the admin scope on /api/admin/concurrency. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const MGMT = 'sk-monitor-mgmt-aaaaaaaaaaaa';
const ADMIN = 'sk-monitor-admin-bbbbbbbbbbb';
let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { usage: { input: 10, output: 5 } } });
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_keys: [k1, k2], models: [m1]}
pricing:
  oa/m1: {input: 1000, output: 1000}
keys:
  - {name: mgmt, key: "${MGMT}", models: ["*"], scopes: [management]}
  - {name: admin, key: "${ADMIN}", models: ["*"], scopes: [management, admin]}
resilience:
  accounts: {session_affinity: true}
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

describe('monitoring', () => {
  it('sessions show their pins; usage by connection; the global rate-limit picture', async () => {
    for (let i = 0; i < 3; i++) expect((await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] }, { 'X-Gateway-Session-Id': 'sess-42' })).status).toBe(200);
    const s = (await gw.req('GET', '/api/sessions')).json as { sessions: { sessionId: string; pins: { scope: string; target: string }[] }[]; total: number };
    expect(s.total).toBe(1);
    expect(s.sessions[0]).toMatchObject({ sessionId: 'sess-42', pins: [{ scope: 'provider:oa' }] });
    const pinned = s.sessions[0]!.pins[0]!.target;

    const accounts = ((await gw.req('GET', '/api/providers/oa')).json as { accounts: { id: string; name: string }[] }).accounts;
    const acc = accounts.find((a) => a.id === pinned || a.name === pinned)!;
    const u = (await gw.req('GET', `/api/usage/${encodeURIComponent(acc.id)}`)).json as { provider: string; requests: number; tokensIn: number; cost: number };
    expect(u).toMatchObject({ provider: 'oa', requests: 3, tokensIn: 30 });
    expect(u.cost).toBeCloseTo(0.045, 6);
    expect((await gw.req('GET', '/api/usage/nope')).status).toBe(404);
    expect((await gw.req('GET', '/api/usage/history')).status).toBe(200); // the static route still wins

    const rl = (await gw.req('GET', '/api/rate-limit')).json as { concurrency: { status: unknown }; accountsCoolingDown: number; openBreakers: string[] };
    expect(rl).toMatchObject({ accountsCoolingDown: 0, openBreakers: [] });
  });

  it('admin routes need the admin scope on a key; the control socket passes', async () => {
    const mg = await gw.req('GET', '/api/admin/concurrency', undefined, { Authorization: `Bearer ${MGMT}` }, { tcp: true });
    expect(mg.status).toBe(403);
    expect(mg.text).toMatch(/lacks the admin scope/);
    expect((await gw.req('GET', '/api/admin/concurrency', undefined, { Authorization: `Bearer ${ADMIN}` }, { tcp: true })).status).toBe(200);
    expect((await gw.req('GET', '/api/admin/concurrency')).status).toBe(200);
    // Other management routes do not need it.
    expect((await gw.req('GET', '/api/sessions', undefined, { Authorization: `Bearer ${MGMT}` }, { tcp: true })).status).toBe(200);
  });
});
