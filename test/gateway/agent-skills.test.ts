/** Agent skills: CRUD by id or name, SKILL.md raw form, and drafts written through the gateway's routing. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  mock = await startLlmUpstream();
  gw = await startGateway({ yaml: `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\n` });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

describe('agent skills', () => {
  it('create, list, get by id and name, raw SKILL.md, update, delete; names are unique', async () => {
    const c = await gw.req('POST', '/api/agent-skills', { name: 'code-review', description: 'Reviews a diff for bugs', prompt: '# Review\nRead the diff.\nList bugs first.', model: 'oa/m1', temperature: 0.1 });
    expect(c.status, c.text).toBe(201);
    const id = (c.json as { id: string }).id;
    expect((await gw.req('POST', '/api/agent-skills', { name: 'code-review', description: 'x', prompt: 'y' })).status).toBe(409);
    expect((await gw.req('POST', '/api/agent-skills', { name: 'Bad Name', description: 'x', prompt: 'y' })).status).toBe(400);
    expect((await gw.req('POST', '/api/agent-skills', { name: 'x', description: 'x' })).status).toBe(400);

    expect((await gw.req('GET', '/api/agent-skills/code-review')).json).toMatchObject({ id, model: 'oa/m1', temperature: 0.1 });
    const list = (await gw.req('GET', '/api/agent-skills?q=diff')).json as { agentSkills: { name: string }[]; total: number };
    expect(list).toMatchObject({ total: 1, agentSkills: [{ name: 'code-review' }] });

    const raw = await gw.req('GET', `/api/agent-skills/${id}/raw`);
    expect(raw.headers['content-type']).toMatch(/^text\/markdown/);
    const [, front, body] = /^---\n([\s\S]*?)---\n\n([\s\S]*)$/.exec(raw.text)!;
    expect(parse(front!)).toEqual({ name: 'code-review', description: 'Reviews a diff for bugs', model: 'oa/m1', temperature: 0.1 });
    expect(body).toBe('# Review\nRead the diff.\nList bugs first.\n');

    const put = await gw.req('PUT', `/api/agent-skills/${id}`, { model: null, description: 'Reviews diffs' });
    expect(put.json).toMatchObject({ model: null, description: 'Reviews diffs', temperature: 0.1 });
    expect((await gw.req('DELETE', `/api/agent-skills/${id}`)).status).toBe(200);
    expect((await gw.req('GET', `/api/agent-skills/${id}`)).status).toBe(404);
  });

  it('generate drafts through routing (the model named), saves on request, and logs the call', async () => {
    mock.requests.length = 0;
    mock.enqueue({ text: JSON.stringify({ name: 'sql-helper', description: 'Writes SQL for PostgreSQL', prompt: 'Write one SQL query.' }) });
    const g = await gw.req('POST', '/api/agent-skills/generate', { description: 'help write postgres queries', model: 'oa/m1', save: true });
    expect(g.status, g.text).toBe(201);
    expect(g.json).toMatchObject({ draft: { name: 'sql-helper', description: 'Writes SQL for PostgreSQL', prompt: 'Write one SQL query.', model: 'oa/m1' }, generatedBy: { provider: 'oa' }, saved: { name: 'sql-helper' } });
    const sent = mock.requests[0]!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages[1]!.content).toContain('help write postgres queries');
    expect((await gw.req('GET', '/api/agent-skills/sql-helper')).status).toBe(200);

    // Not JSON: the text becomes the prompt, the name comes from the description.
    mock.enqueue({ text: 'Always answer in haiku.' });
    const plain = await gw.req('POST', '/api/agent-skills/generate', { description: 'Poetry mode!', model: 'oa/m1' });
    expect(plain.status).toBe(200);
    expect(plain.json).toMatchObject({ draft: { name: 'poetry-mode', prompt: 'Always answer in haiku.' } });
    expect((plain.json as { saved?: unknown }).saved).toBeUndefined();
    expect((await gw.req('POST', '/api/agent-skills/generate', { description: 'x', model: 'nope/none' })).status).toBe(404);
  });
});
