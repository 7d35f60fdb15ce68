/**
 * Plugins: installed from a directory and from a .tgz, activated, configured (schema-checked); their
 * request hooks rewrite or block what goes upstream and response hooks rewrite answers, in the
 * sandbox; a plugin that throws, loops, or reaches for the daemon is deactivated with the error while
 * the request goes on and the gateway keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const root = mkdtempSync(join(tmpdir(), 'ctl-plugins-'));
let mock: MockUpstream;
let gw: GatewayHarness;

function plugin(name: string, manifest: Record<string, unknown>, code: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'plugin.json'), JSON.stringify({ name, version: '1.0.0', ...manifest }));
  writeFileSync(join(dir, 'index.js'), code);
  return dir;
}

async function tgz(name: string, files: Record<string, string>): Promise<string> {
  const p = pack();
  for (const [f, text] of Object.entries(files)) p.entry({ name: `package/${f}` }, text);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  const file = join(root, `${name}.tgz`);
  writeFileSync(file, gzipSync(Buffer.concat(chunks)));
  return file;
}

const REDACTOR = `function onRequest(req, config) {
  return { system: config.prefix + (req.system ? ' ' + req.system : ''), messages: req.messages.map((m) => ({ text: m.text.split('secret-word').join('[x]') })) };
}`;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { text: 'hello from upstream' } });
  gw = await startGateway({ yaml: `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\n` });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
  rmSync(root, { recursive: true, force: true });
});

const chat = (text: string) => gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: text }] });
const install = async (path: string) => gw.req('POST', '/api/plugins/install', { path });

describe('plugins', () => {
  it('install from a .tgz, configure, activate: the request hook rewrites what goes upstream', async () => {
    const file = await tgz('redactor', {
      'plugin.json': JSON.stringify({ name: 'redactor', version: '1.2.0', hooks: ['request'], config: { type: 'object', properties: { prefix: { type: 'string' } }, required: ['prefix'] }, defaults: { prefix: 'Be brief.' } }),
      'index.js': REDACTOR,
    });
    const i = await install(file);
    expect(i.status, i.text).toBe(201);
    expect(i.json).toMatchObject({ name: 'redactor', version: '1.2.0', hooks: ['request'], active: false, config: { prefix: 'Be brief.' } });
    // Inactive: nothing changes.
    mock.reset();
    await chat('my secret-word is here');
    expect(JSON.stringify(mock.requests[0]!.body)).toContain('secret-word');

    expect((await gw.req('PUT', '/api/plugins/redactor/config', { prefix: 42 })).status).toBe(400);
    expect((await gw.req('PUT', '/api/plugins/redactor/config', { prefix: 'Answer in French.' })).json.config).toEqual({ prefix: 'Answer in French.' });
    expect((await gw.req('POST', '/api/plugins/redactor/activate')).json.active).toBe(true);
    mock.reset();
    expect((await chat('my secret-word is here')).status).toBe(200);
    const sent = mock.requests[0]!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'my [x] is here' },
    ]);
  });

  it('a response hook rewrites the answer; a block hook refuses with 400 naming the plugin', async () => {
    plugin('shouter', { hooks: ['response'] }, 'function onResponse(res) { return { text: res.text.toUpperCase() }; }');
    plugin('blocker', { hooks: ['request'] }, "function onRequest(req) { if (req.messages.some((m) => m.text.includes('forbidden'))) return { block: 'no forbidden topics' }; }");
    for (const n of ['shouter', 'blocker']) {
      expect((await install(join(root, n))).status).toBe(201);
      await gw.req('POST', `/api/plugins/${n}/activate`);
    }
    const r = await chat('hi');
    expect(r.json.choices[0].message.content).toBe('HELLO FROM UPSTREAM');
    const b = await chat('a forbidden thing');
    expect(b.status).toBe(400);
    expect(b.json.error.message).toBe('request blocked by plugin blocker: no forbidden topics');
    await gw.req('POST', '/api/plugins/shouter/deactivate');
    expect((await chat('hi')).json.choices[0].message.content).toBe('hello from upstream');
  });

  it('a plugin that throws, loops or reaches for the daemon is deactivated; the request goes on', async () => {
    plugin('thrower', { hooks: ['request'] }, "function onRequest() { throw new Error('kaboom'); }");
    plugin('escaper', { hooks: ['request'] }, "function onRequest() { require('fs').writeFileSync('/tmp/pwned', 'x'); process.exit(1); }");
    plugin('spinner', { hooks: ['request'] }, 'function onRequest() { for (;;) {} }');
    for (const n of ['thrower', 'escaper', 'spinner']) {
      expect((await install(join(root, n))).status).toBe(201);
      await gw.req('POST', `/api/plugins/${n}/activate`);
    }
    mock.reset();
    const r = await chat('still works');
    expect(r.status).toBe(200);
    const list = (await gw.req('GET', '/api/plugins')).json.plugins as { name: string; active: boolean; lastError: string | null }[];
    const of = (n: string) => list.find((p) => p.name === n)!;
    expect(of('thrower')).toMatchObject({ active: false, lastError: expect.stringMatching(/kaboom/) });
    expect(of('escaper')).toMatchObject({ active: false, lastError: expect.stringMatching(/require is not defined/) });
    expect(of('spinner')).toMatchObject({ active: false, lastError: expect.stringMatching(/time limit/) });
    expect(of('redactor').active).toBe(true);
    expect((await chat('again')).status).toBe(200);
  });

  /** A plugin directory whose plugin.json has exactly this text. */
  const rawPlugin = (name: string, manifest: string): string => {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'plugin.json'), manifest);
    writeFileSync(join(dir, 'index.js'), 'function onRequest() {}');
    return dir;
  };
  /** A plugin directory whose plugin.json is a directory. */
  const dirPlugin = (name: string): string => {
    const dir = join(root, name);
    mkdirSync(join(dir, 'plugin.json'), { recursive: true });
    return dir;
  };

  it('refuses bad packages; uninstall removes the plugin', async () => {
    const bad: [string, RegExp][] = [
      [plugin('noname', { name: 'Bad Name', hooks: ['request'] }, 'function onRequest() {}'), /name must be lower-case/],
      [plugin('nohook', { hooks: ['response'] }, 'function onRequest() {}'), /declares the response hook but defines no onResponse/],
      [plugin('broken', { hooks: ['request'] }, 'function onRequest( {'), /does not load/],
      [root + '/missing', /does not exist/],
      [rawPlugin('notjson', '{"name": "notjson", "version": '), /plugin.json is not JSON/],
      [rawPlugin('nulljson', 'null'), /plugin.json must be a JSON object/],
      [rawPlugin('hugejson', `{"name": "hugejson", "pad": "${'x'.repeat(70_000)}"}`), /plugin.json is larger than 64 KiB/],
      [dirPlugin('dirjson'), /plugin.json is not a regular file/],
    ];
    for (const [path, msg] of bad) {
      const r = await install(path);
      expect(r.status, path).toBe(400);
      expect(r.json.error.message).toMatch(msg);
    }
    expect((await gw.req('POST', '/api/plugins/install', { path: 'relative/dir' })).status).toBe(400);
    expect((await gw.req('DELETE', '/api/plugins/redactor')).json).toEqual({ name: 'redactor', deleted: true });
    expect((await gw.req('POST', '/api/plugins/redactor/activate')).status).toBe(404);
  });
});
