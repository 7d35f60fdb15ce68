/**
 * Evals: a suite with every grader kind run against two deterministic mock models and a mock judge
 * through the gateway's routing; scores stored per case and compared across models; a model that
 * fails counts as errors; runs in the background or waited for; bad suites are refused when saved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let good: MockUpstream;
let poor: MockUpstream;
let judge: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  good = await startLlmUpstream({ defaults: { text: 'The capital is Paris.\n```json\n{"city": "Paris"}\n```', usage: { input: 10, output: 10 } } });
  poor = await startLlmUpstream({ defaults: { text: 'I do not know.', usage: { input: 10, output: 5 } } });
  judge = await startLlmUpstream({ defaults: { text: '7/10: names the city but adds noise' } });
  gw = await startGateway({
    yaml: `providers:
  - {id: a, kind: openai, base_url: "${good.baseUrl('openai')}", api_key: k, models: [m]}
  - {id: b, kind: openai, base_url: "${poor.baseUrl('openai')}", api_key: k, models: [m]}
  - {id: j, kind: openai, base_url: "${judge.baseUrl('openai')}", api_key: k, models: [judge]}
  - {id: dead, kind: openai, base_url: "http://127.0.0.1:9/v1", api_key: k, models: [m]}
pricing:
  a/m: {input: 1000, output: 1000}
`,
  });
});
afterAll(async () => {
  await gw.close();
  for (const m of [good, poor, judge]) await m.close();
});

const suite = {
  name: 'capitals',
  description: 'geography basics',
  cases: [
    { id: 'contains', input: 'Capital of France?', expected: 'paris', grader: { type: 'contains', caseInsensitive: true } },
    { id: 'regex', input: 'Capital of France?', grader: { type: 'regex', pattern: 'capital is \\w+' } },
    { id: 'json', input: [{ role: 'system', content: 'Answer in JSON.' }, { role: 'user', content: 'Capital of France?' }], grader: { type: 'json-schema', schema: { type: 'object', required: ['city'], properties: { city: { const: 'Paris' } } } } },
    { id: 'judge', input: 'Capital of France?', expected: 'Paris', grader: { type: 'llm-judge', criteria: 'names Paris' }, weight: 2 },
    { id: 'exact', input: 'Say nope.', expected: 'nope', grader: { type: 'exact' } },
  ],
};

describe('evals', () => {
  let suiteId = '';

  it('saves a suite, runs it against two models with a judge, and scores every case', async () => {
    const s = await gw.req('POST', '/api/evals/suites', suite);
    expect(s.status, s.text).toBe(201);
    suiteId = s.json.id;
    expect(s.json.cases).toHaveLength(5);

    const run = await gw.req('POST', '/api/evals', { suiteId, models: ['a/m', 'b/m'], judgeModel: 'j/judge', wait: true });
    expect(run.status, run.text).toBe(200);
    expect(run.json.status).toBe('completed');
    const byModel = Object.fromEntries((run.json.summary as { model: string }[]).map((x) => [x.model, x]));
    // a: 1 + 1 + 1 + 0.7×2 + 0 over a weight of 6; b: only the judge's 0.7×2.
    expect(byModel['a/m']).toMatchObject({ score: 0.7333, passed: 4, failed: 1, errors: 0 });
    expect(byModel['b/m']).toMatchObject({ score: 0.2333, passed: 1, failed: 4, errors: 0 });
    expect(byModel['a/m'].costUsd).toBeGreaterThan(0);
    const results = run.json.results as { caseId: string; model: string; passed: boolean; reason: string }[];
    expect(results).toHaveLength(10);
    expect(results.find((r) => r.model === 'b/m' && r.caseId === 'json')).toMatchObject({ passed: false, reason: 'the answer is not JSON' });
    expect(results.find((r) => r.model === 'a/m' && r.caseId === 'judge')!.reason).toMatch(/^judge: 7\/10/);
    // The judge saw the question, the reference and the answer.
    const judged = JSON.stringify(judge.requests.map((r) => r.body));
    expect(judged).toContain('Answer to grade');
    expect(judged).toContain('names Paris');
    // The system message reached the model.
    expect(JSON.stringify(good.requests.map((r) => r.body))).toContain('Answer in JSON.');
  });

  it('runs in the background; a model that fails counts errors; the suite compares models across runs', async () => {
    const start = await gw.req('POST', '/api/evals', { suiteId, models: ['dead/m'], judgeModel: 'j/judge' });
    expect(start.status).toBe(202);
    expect(start.json.status).toBe('running');
    let run = start.json;
    for (let i = 0; i < 200 && run.status === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      run = (await gw.req('GET', `/api/evals?runId=${start.json.id}`)).json;
    }
    expect(run.status).toBe('completed');
    expect(run.summary[0]).toMatchObject({ model: 'dead/m', score: 0, errors: 5 });
    expect(run.results[0].error).toMatch(/dead\/m answered 5\d\d/);

    const s = await gw.req('GET', `/api/evals/suites/${suiteId}`);
    expect(s.json.runs).toHaveLength(2);
    expect(s.json.leaderboard.map((x: { model: string }) => x.model)).toEqual(['a/m', 'b/m', 'dead/m']);
    expect((await gw.req('GET', '/api/evals/suites/capitals')).json.id).toBe(suiteId);
    const all = await gw.req('GET', '/api/evals');
    expect(all.json.suites).toEqual([expect.objectContaining({ id: suiteId, name: 'capitals', cases: 5 })]);
    expect(all.json.runs).toHaveLength(2);
  });

  it('refuses bad suites and runs with a 400 (409 for a name taken)', async () => {
    const bad: [unknown, RegExp][] = [
      [{ name: 'x1', cases: [{ input: 'q', grader: { type: 'regex', pattern: '(?<=a)b' } }] }, /does not compile/],
      [{ name: 'x2', cases: [{ input: 'q', grader: { type: 'json-schema' } }] }, /needs schema/],
      [{ name: 'x3', cases: [{ input: 'q', grader: { type: 'exact' } }] }, /needs expected/],
      [{ name: 'x4', cases: [{ id: 'a', input: 'q', expected: 'x' }, { id: 'a', input: 'q', expected: 'y' }] }, /duplicate id a/],
      [{ name: 'x5', cases: [] }, /cases/],
    ];
    for (const [body, msg] of bad) {
      const r = await gw.req('POST', '/api/evals/suites', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.message).toMatch(msg);
    }
    expect((await gw.req('POST', '/api/evals/suites', suite)).status).toBe(409);
    expect((await gw.req('POST', '/api/evals', { suiteId, models: ['a/m'] })).json.error.message).toMatch(/give judgeModel/);
    expect((await gw.req('POST', '/api/evals', { suiteId, models: ['nope/m'], judgeModel: 'j/judge' })).status).toBe(400);
    expect((await gw.req('POST', '/api/evals', { suiteId: 'evs_none', models: ['a/m'] })).status).toBe(404);
    expect((await gw.req('GET', '/api/evals?runId=evr_none')).status).toBe(404);
  });
});
