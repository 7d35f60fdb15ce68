/** `ctl gateway file …` and `ctl gateway batch …` against a daemon whose gateway points at the loopback mock. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let mock: MockUpstream;
let d: TestDaemon;
let site: http.Server;
const dir = mkdtempSync(join(tmpdir(), 'ctl-cli-batch-'));

beforeAll(async () => {
  mock = await startLlmUpstream();
  site = http.createServer((req, res) => {
    if (req.url!.startsWith('/sx/search')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ title: 'Ferry times', url: 'https://ferry.example/times', content: 'Every hour from the new quay' }] }));
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Quay</title></head><body><article><h1>Ferries</h1><p>The ferry to the island leaves every hour from the new quay, from six in the morning until ten at night, all year.</p></article></body></html>');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
  d = await startDaemon({
    ctlYaml: { egress: { 'address-map': { '203.0.113.30:80': `127.0.0.1:${(site.address() as AddressInfo).port}` } } },
    files: { 'gateway.yaml': `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\nsearch:\n  providers:\n    - {id: sx, kind: searxng, base_url: "http://127.0.0.1:${(site.address() as AddressInfo).port}/sx"}\n` },
  });
}, 60_000);
afterAll(async () => {
  await new Promise((r) => site?.close(r));
  await d?.cleanup();
  await mock?.close();
  rmSync(dir, { recursive: true, force: true });
});

const line = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'oa/m1', messages: [{ role: 'user', content: id }] }, ...extra });

describe('ctl gateway file and batch', () => {
  it('batch create uploads a local JSONL file; wait saves the output; file list/get/content/rm; batch rm', async () => {
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, [line('a'), line('b')].join('\n') + '\n');
    const created = await d.cli(['gateway', 'batch', 'create', input, '--metadata', 'team=evals']);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^batch_[0-9a-f]{24}$/);
    const out = join(dir, 'out.jsonl');
    const waited = await d.cli(['gateway', 'batch', 'wait', id, '--out', out, '--interval', '0.1']);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toMatch(/^status: +completed$/m);
    expect(waited.stdout).toMatch(/^requests: +2 completed, 0 failed, of 2$/m);
    expect(readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l).custom_id)).toEqual(['a', 'b']);

    const list = await d.cli(['gateway', 'file', 'list', '--purpose', 'batch']);
    expect(list.stdout).toMatch(/in\.jsonl +batch/);
    const files = JSON.parse((await d.cli(['gateway', 'file', 'list', '-o', 'json'])).stdout).data as { id: string; filename: string }[];
    const inputId = files.find((f) => f.filename === 'in.jsonl')!.id;
    expect((await d.cli(['gateway', 'file', 'content', inputId])).stdout).toBe(readFileSync(input, 'utf8'));
    expect((await d.cli(['gateway', 'file', 'get', inputId])).stdout).toMatch(/^purpose: +batch$/m);
    expect((await d.cli(['gateway', 'batch', 'list'])).stdout).toMatch(new RegExp(`${id} +completed +/v1/chat/completions +2/2`));
    expect((await d.cli(['gateway', 'batch', 'rm', id])).stdout).toBe(`deleted ${id}\n`);
    expect((await d.cli(['gateway', 'file', 'rm', inputId])).stdout).toBe(`deleted ${inputId}\n`);
    const gone = await d.cli(['gateway', 'file', 'get', inputId]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/No such File object/);
  });

  it('upload + create by id; wait exits 1 on a batch that failed validation and prints the lines', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, [line('x'), line('x')].join('\n'));
    const up = await d.cli(['gateway', 'file', 'upload', bad]);
    expect(up.code, up.stderr).toBe(0);
    const id = (await d.cli(['gateway', 'batch', 'create', up.stdout.trim()])).stdout.trim();
    const waited = await d.cli(['gateway', 'batch', 'wait', id, '--interval', '0.1']);
    expect(waited.code).toBe(1);
    expect(waited.stdout).toMatch(/^errors: +line 2: custom_id "x" is used by an earlier line$/m);
    const missing = await d.cli(['gateway', 'file', 'upload', join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
  });

  it('fetch prints a page as markdown; the title and provider go to stderr', async () => {
    const r = await d.cli(['gateway', 'fetch', 'http://203.0.113.30/ferries']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/The ferry to the island leaves every hour/);
    expect(r.stderr).toBe('Quay — http://203.0.113.30/ferries (via builtin)\n');
    const refused = await d.cli(['gateway', 'fetch', 'http://10.0.0.1/']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/URL is not allowed or not reachable/);
  });

  it('search prints the results as a table; -o json gives the whole answer', async () => {
    const r = await d.cli(['gateway', 'search', 'ferry times', '-n', '3']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Ferry times +https:\/\/ferry\.example\/times +Every hour from the new quay$/m);
    expect(r.stderr).toBe('1 results from sx\n');
    const j = JSON.parse((await d.cli(['gateway', 'search', 'ferry times', '-n', '3', '-o', 'json'])).stdout);
    expect(j).toMatchObject({ provider: 'sx', cached: true });
  });
});
