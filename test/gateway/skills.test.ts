/**
 * Skills: install (raw manifest, {manifest}, a local path, a URL, the registry, the marketplace),
 * list and filter, executions with schema checks, the sandbox against hostile handlers (environment,
 * require, the file system, the network, an endless loop, a memory bomb) while other requests are
 * served, and `auto` skills called by the model in the middle of a chat completion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { watchLoop } from '../helpers/loop-hold.js';
import { startGateway, type GatewayHarness } from './harness.js';

const KEY = 'sk-skills-key-aaaaaaaaaaaa';
let mock: MockUpstream;
let gw: GatewayHarness;
let site: http.Server;
let sitePort = 0;
let siteHits = 0;
const dir = mkdtempSync(join(tmpdir(), 'ctl-skills-'));

const manifest = (name: string, handlerCode: string, extra: Record<string, unknown> = {}) => ({
  name,
  version: '1.0.0',
  description: `skill ${name}`,
  schema: { input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false }, output: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] } },
  handlerCode,
  ...extra,
});
const ADD = 'return { sum: input.a + input.b };';

beforeAll(async () => {
  site = http.createServer((req, res) => {
    siteHits++;
    const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
    if (req.url === '/registry/index.json') return json({ skills: [{ name: 'mul', version: '2.0.0', description: 'multiplies two numbers', url: 'mul.json' }, { name: 'other', version: '1', description: 'x', url: 'nope.json' }] });
    if (req.url === '/registry/mul.json') return json({ ...manifest('mul', 'return { sum: input.a * input.b };'), version: '2.0.0' });
    if (req.url === '/market/index.json') return req.headers.authorization === 'Bearer mk-1' ? json({ skills: [{ name: 'sub', version: '1', description: 'subtracts', url: '/market/sub.json' }] }) : void res.writeHead(401).end();
    if (req.url === '/market/sub.json') return json(manifest('sub', 'return { sum: input.a - input.b };'));
    if (req.url === '/raw/div.json') return json(manifest('div', 'return { sum: input.a / input.b };'));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
  sitePort = (site.address() as AddressInfo).port;
  mock = await startLlmUpstream();
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}
keys:
  - {name: a, key: "${KEY}", models: ["*"]}
skills:
  timeout_ms: 1500
  memory_mb: 16
  runners: 2
  registry: {url: "http://203.0.113.60/registry/index.json"}
  marketplace: {url: "http://203.0.113.60/market/index.json", api_key: mk-1}
`,
  });
  gw.egress.addMapping('203.0.113.60:80', `127.0.0.1:${sitePort}`);
}, 30_000);
afterAll(async () => {
  await gw.close();
  await mock.close();
  await new Promise((r) => site.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const exec = (skillName: string, input: unknown) => gw.req('POST', '/api/skills/executions', { skillName, input });

describe('skills API', () => {
  it('installs a raw manifest, {manifest}, a local path and a URL; lists, filters and pages; replaces by name', async () => {
    const a = await gw.req('POST', '/api/skills/install', manifest('add', ADD));
    expect(a.status, a.text).toBe(201);
    const id = (a.json as { skill: { id: string } }).skill.id;
    expect(a.json).toMatchObject({ success: true, replaced: false, skill: { name: 'add', mode: 'on', source: 'local' } });
    expect((await gw.req('POST', '/api/skills/install', { manifest: manifest('neg', 'return { sum: -input.a };', { schema: {} }), mode: 'off' })).status).toBe(201);
    // Local installs read folders under the skills root (default DIR/skills, made at start).
    const folder = join(gw.dir, 'skills', 'echo');
    mkdirSync(folder);
    writeFileSync(join(folder, 'skill.json'), JSON.stringify(manifest('echo', 'return { sum: input.a };', { schema: { input: { type: 'object' } } })));
    expect((await gw.req('POST', '/api/skills/install', { path: folder })).status).toBe(201);
    expect((await gw.req('POST', '/api/skills/install', { path: 'echo' })).status).toBe(200);
    expect((await gw.req('POST', '/api/skills/install', { url: 'http://203.0.113.60/raw/div.json' })).status).toBe(201);

    const again = await gw.req('POST', '/api/skills/install', { ...manifest('add', ADD), version: '1.1.0' });
    expect(again.status).toBe(200);
    expect((again.json as { skill: { id: string; version: string } }).skill).toMatchObject({ id, version: '1.1.0' });

    const all = (await gw.req('GET', '/api/skills')).json as { skills: { name: string; handlerBytes: number }[]; total: number };
    expect(all.skills.map((s) => s.name)).toEqual(['add', 'div', 'echo', 'neg']);
    expect(all.skills[0]!.handlerBytes).toBe(ADD.length);
    expect(((await gw.req('GET', '/api/skills?mode=off')).json as { skills: { name: string }[] }).skills.map((s) => s.name)).toEqual(['neg']);
    expect(((await gw.req('GET', '/api/skills?q=ECH')).json as { skills: { name: string }[] }).skills.map((s) => s.name)).toEqual(['echo']);
    expect(((await gw.req('GET', '/api/skills?page=2&limit=3')).json as { skills: { name: string }[] }).skills.map((s) => s.name)).toEqual(['neg']);
    expect(((await gw.req('GET', `/api/skills/${id}`)).json as { handlerCode: string }).handlerCode).toBe(ADD);
  });

  it('refuses bad manifests, bad paths and SSRF targets with a 400', async () => {
    const bad = async (body: unknown, re: RegExp) => {
      const r = await gw.req('POST', '/api/skills/install', body);
      expect(r.status, r.text).toBe(400);
      expect(r.text).toMatch(re);
    };
    await bad(manifest('has space', ADD), /name/);
    await bad({ ...manifest('x', ADD), handlerCode: '' }, /handlerCode/);
    await bad(manifest('x', ADD, { schema: { input: { type: 'nonsense' } } }), /schema\.input is not a valid JSON Schema/);
    await bad({ path: 'relative/skill' }, /does not exist/);
    await bad({ path: join(dir, 'missing') }, /outside the skills root/);
    await bad({ url: 'http://127.0.0.1:1/x.json' }, /refused|not allowed|private|loopback/i);
  });

  it('reads no file outside the skills root: /etc/shadow and /dev/zero answer 400 at once, quoting nothing', async () => {
    writeFileSync(join(dir, 'skill.json'), 'root:$6$not-json-secret:19000:0:99999:7:::');
    for (const path of ['/etc/shadow', '/dev/zero', '/dev/urandom', dir, '/proc/self/environ', join(gw.dir, 'skills', '..', 'gateway.yaml')]) {
      const t0 = Date.now();
      const r = await gw.req('POST', '/api/skills/install', { path });
      expect(Date.now() - t0, path).toBeLessThan(2000);
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.message).toMatch(/outside the skills root/);
      expect(r.text).not.toMatch(/not-json-secret|\$6\$|root:/);
    }
  });

  it('runs executions: input and output checked against the schemas, every run recorded', async () => {
    const ok = await exec('add', { a: 2, b: 40 });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json).toMatchObject({ skillName: 'add', status: 'success', success: true, output: { sum: 42 } });
    const badIn = await exec('add', { a: 'two', b: 1 });
    expect(badIn.status).toBe(400);
    expect(badIn.text).toMatch(/input\/a must be number/);
    await gw.req('POST', '/api/skills/install', manifest('liar', 'return { total: 1 };', { schema: { output: { type: 'object', required: ['sum'] } } }));
    expect((await exec('liar', {})).json).toMatchObject({ status: 'invalid_output', error: expect.stringMatching(/sum/) });
    expect((await exec('neg', { a: 1 })).status).toBe(409);
    expect((await exec('nope', {})).status).toBe(404);
    const list = (await gw.req('GET', '/api/skills/executions?skillName=add')).json as { executions: { status: string }[] };
    expect(list.executions.map((e) => e.status)).toEqual(['invalid_input', 'success']);
  });

  it('installs from the registry and the marketplace (with its key); searches both', async () => {
    const reg = (await gw.req('GET', '/api/skills/registry?q=multipl')).json as { skills: { name: string; url: string }[] };
    expect(reg.skills).toEqual([{ name: 'mul', version: '2.0.0', description: 'multiplies two numbers', url: 'http://203.0.113.60/registry/mul.json' }]);
    const inst = await gw.req('POST', '/api/skills/registry/install', { name: 'mul' });
    expect(inst.status, inst.text).toBe(201);
    expect(inst.json).toMatchObject({ skill: { name: 'mul', version: '2.0.0', source: 'registry' } });
    expect((await exec('mul', { a: 6, b: 7 })).json).toMatchObject({ output: { sum: 42 } });
    expect((await gw.req('POST', '/api/skills/registry/install', { name: 'ghost' })).status).toBe(404);

    const market = (await gw.req('GET', '/api/skills/marketplace?q=sub', undefined, { Authorization: `Bearer ${KEY}` }, { tcp: true })).json as { skills: { name: string }[] };
    expect(market.skills.map((s) => s.name)).toEqual(['sub']);
    // The seed: marketplace search accepts management auth (the login cookie) as well as a Bearer key.
    expect((await gw.req('POST', '/api/auth/password', { password: 'skills-console-pw' })).status).toBeLessThan(300);
    const login = await gw.req('POST', '/api/auth/login', { password: 'skills-console-pw' }, {}, { tcp: true });
    expect(login.status, login.text).toBe(200);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const viaCookie = await gw.req('GET', '/api/skills/marketplace?q=sub', undefined, { cookie }, { tcp: true });
    expect(viaCookie.status, viaCookie.text).toBe(200);
    expect((viaCookie.json as { skills: { name: string }[] }).skills.map((s) => s.name)).toEqual(['sub']);
    const nobody = await gw.req('GET', '/api/skills/marketplace?q=sub', undefined, {}, { tcp: true });
    expect(nobody.status).toBe(401);
    expect((await gw.req('GET', '/api/skills/marketplace?q=sub', undefined, { cookie: 'auth_token=forged' }, { tcp: true })).status).toBe(401);
    expect((await gw.req('POST', '/api/skills/marketplace/install', { name: 'sub', mode: 'auto' })).json).toMatchObject({ skill: { source: 'marketplace', mode: 'auto' } });
    await gw.req('PUT', `/api/skills/${((await gw.req('GET', '/api/skills?q=sub')).json as { skills: { id: string }[] }).skills[0]!.id}`, { mode: 'on' });
  });
});

describe('the sandbox', () => {
  it('hostile handlers fail safely and the gateway keeps answering meanwhile', async () => {
    const hostile: [string, string, RegExp | string][] = [
      ['env', 'return { sum: Object.keys(process.env).length };', /process is not defined/],
      ['req', "const fs = require('fs'); return { sum: fs.readFileSync('/etc/passwd', 'utf8').length };", /require is not defined/],
      ['imp', "const fs = await import('node:fs'); return { sum: 1 };", /import|not supported|Not supported|failed/i],
      ['net', "const r = await fetch('http://203.0.113.60/raw/div.json'); return { sum: 1 };", /fetch is not defined/],
      ['esc', "return { sum: this.constructor.constructor('return typeof process')() === 'undefined' ? 1 : 2 };", 'ok1'],
      ['loop', 'while (true) {}', 'timeout'],
      ['bomb', 'const a = []; for (;;) a.push(new Array(1 << 20).fill(a.length));', 'memory'], // 8 MiB a step ('x'.repeat(1 << 20) is a rope of a few small nodes, not 1 MiB)
      ['hang', 'await new Promise(() => {});', 'timeout'],
    ];
    for (const [name, code] of hostile) await gw.req('POST', '/api/skills/install', manifest(name, code, { schema: {} }));
    const hitsBefore = siteHits;
    const runs = hostile.map(([name]) => exec(name, { a: 1, b: 2 }));
    // While those run (the loop and the bomb hold both runners for a while), the gateway answers and
    // its event loop is never held (CPU time on the loop's thread, not wall time: the machine is shared).
    const watch = watchLoop();
    const chat = await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'still there?' }] }, { Authorization: `Bearer ${KEY}` });
    expect(chat.status).toBe(200);
    const out = await Promise.all(runs);
    expect(watch.stop().maxHoldMs).toBeLessThan(50);
    for (let i = 0; i < hostile.length; i++) {
      const [name, , expectWhat] = hostile[i]!;
      const e = out[i]!.json as { status: string; error: string | null; output: unknown };
      if (expectWhat === 'ok1') expect(e, name).toMatchObject({ status: 'success', output: { sum: 1 } });
      else if (expectWhat === 'timeout' || expectWhat === 'memory') expect(e.status, name).toBe(expectWhat);
      else {
        expect(e.status, name).toBe('error');
        expect(e.error, name).toMatch(expectWhat);
      }
    }
    expect(siteHits).toBe(hitsBefore);
    // The pool recovered: a normal skill still runs.
    expect((await exec('add', { a: 1, b: 1 })).json).toMatchObject({ status: 'success', output: { sum: 2 } });
  }, 30_000);
});

describe('auto skills in a chat completion', () => {
  it('offers auto skills as tools, runs the one the model calls, and returns the model’s next answer with summed usage', async () => {
    const add = ((await gw.req('GET', '/api/skills?q=add')).json as { skills: { id: string; name: string }[] }).skills.find((s) => s.name === 'add')!;
    await gw.req('PUT', `/api/skills/${add.id}`, { mode: 'auto' });
    mock.requests.length = 0;
    mock.enqueue({ toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 20, b: 22 } }], usage: { input: 10, output: 5 } });
    mock.enqueue({ text: 'The sum is 42.', usage: { input: 30, output: 6 } });
    const r = await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'add 20 and 22' }] }, { Authorization: `Bearer ${KEY}` });
    expect(r.status, r.text).toBe(200);
    const body = r.json as { choices: { message: { content: string; tool_calls?: unknown } }[]; usage: { prompt_tokens: number; completion_tokens: number } };
    expect(body.choices[0]!.message.content).toBe('The sum is 42.');
    expect(body.choices[0]!.message.tool_calls).toBeUndefined();
    expect(body.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 11 });
    const first = mock.requests[0]!.body as { tools: { function: { name: string } }[] };
    expect(first.tools.map((t) => t.function.name)).toEqual(['add']);
    const second = mock.requests[1]!.body as { messages: { role: string; content: string; tool_call_id?: string }[] };
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: '{"sum":42}' });
    const execs = (await gw.req('GET', '/api/skills/executions?skillName=add&limit=1')).json as { executions: { status: string; output: unknown }[] };
    expect(execs.executions[0]).toMatchObject({ status: 'success', output: { sum: 42 } });

    // Skipped with x-gateway-no-memory; never offered on a stream.
    mock.requests.length = 0;
    await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] }, { Authorization: `Bearer ${KEY}`, 'x-gateway-no-memory': 'true' });
    expect((mock.requests[0]!.body as { tools?: unknown }).tools).toBeUndefined();
    mock.requests.length = 0;
    await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { Authorization: `Bearer ${KEY}` });
    expect((mock.requests[0]!.body as { tools?: unknown }).tools).toBeUndefined();
    await gw.req('PUT', `/api/skills/${add.id}`, { mode: 'on' });
  });
});
