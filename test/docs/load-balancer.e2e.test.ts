/**
 * The nginx configuration of docs/several-daemons.md, taken from the page as written (only the
 * host names and the listen port replaced by loopback ones), in front of two gateways sharing a
 * private PostgreSQL: requests through it reach both gateways, a key made on one works through the
 * balancer, streams pass through, and file uploads of one key stay on one gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { PG_BIN, PostgresServer } from '../helpers/postgres-server.js';
import { freePort } from '../helpers/free-port.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));


/** The nginx block of the "Gateways behind a load balancer" section. */
function documentedConfig(): string {
  const page = readFileSync(join(ROOT, 'docs', 'several-daemons.md'), 'utf8');
  const section = page.slice(page.indexOf('## Gateways behind a load balancer'));
  const m = /```nginx\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('no nginx block in the gateway section of docs/several-daemons.md');
  return m[1]!;
}

describe.skipIf(!NGINX || !PG_BIN)('the documented nginx configuration in front of two gateways', () => {
  if (!NGINX) console.log('nginx not installed: skipping the load-balancer documentation check (.ci/run installs nginx-light)');
  let pg: PostgresServer;
  let mock: MockUpstream;
  let gw: TestDaemon[] = [];
  let nginx: ChildProcess;
  let dir: string;
  let base: string;
  let key: string;

  beforeAll(async () => {
    pg = await PostgresServer.start();
    mock = await startLlmUpstream({ apiKey: 'sk-up' });
    const url = await pg.createDatabase('lb');
    gw = await Promise.all([0, 1].map(() => startDaemon({ ctlYaml: { storage: { postgres: url } }, env: { REQUIRE_API_KEY: 'true' } })));
    const a = gw[0]!;
    expect((await a.request('gateway', 'POST', '/api/providers', { id: 'oa', kind: 'openai', base_url: mock.baseUrl('openai'), api_key: 'sk-up', models: ['m1'] })).status).toBe(201);
    key = (await a.request('gateway', 'POST', '/api/keys', { name: 'through-the-balancer' })).json.key;
    const addr = await Promise.all(gw.map(async (d) => new URL(await d.baseUrl('gateway')).host));
    const port = await freePort();
    const block = documentedConfig().replaceAll('gw1.internal:20128', addr[0]!).replaceAll('gw2.internal:20128', addr[1]!).replace('listen 20128;', `listen 127.0.0.1:${port};`);
    dir = mkdtempSync(join(tmpdir(), 'ctl-nginx-'));
    const conf = join(dir, 'nginx.conf');
    writeFileSync(
      conf,
      `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n${block}\n}\n`,
    );
    const check = spawnSync(NGINX!, ['-t', '-p', dir, '-c', conf], { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
    nginx = spawn(NGINX!, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: 'ignore' });
    base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      try {
        await fetch(`${base}/v1/models`);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }, 60_000);

  afterAll(async () => {
    nginx?.kill('SIGQUIT');
    await Promise.all(gw.map((d) => d.cleanup()));
    await mock?.close();
    await pg?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Requests this daemon itself answered (its own counters; the request log is the cluster's). */
  const served = async (d: TestDaemon) => {
    const text = (await d.request('gateway', 'GET', '/metrics')).text;
    let n = 0;
    for (const m of text.matchAll(/^ctl_gateway_requests_total\{[^}]*status="200"[^}]*\} (\d+)/gm)) n += Number(m[1]);
    return n;
  };

  it('spreads chat requests over both gateways, each serving the shared catalog and key', async () => {
    const before = await Promise.all(gw.map(served));
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { choices: { message: { content: string } }[] } })),
      ),
    );
    expect(answers.every((x) => x.status === 200 && x.body.choices[0]!.message.content === 'Hello from openai')).toBe(true);
    const after = await Promise.all(gw.map(served));
    expect(after[0]! - before[0]!).toBeGreaterThan(0);
    expect(after[1]! - before[1]!).toBeGreaterThan(0);
    expect(after[0]! - before[0]! + after[1]! - before[1]!).toBe(20);
    // The request log is the cluster's: either gateway lists all twenty (the other's rows arrive
    // with its next batch, a fraction of a second later).
    let logged = 0;
    for (let i = 0; i < 40 && logged < 20; i++) {
      logged = (await gw[1]!.request('gateway', 'GET', '/api/usage/request-logs?limit=1')).json.total as number;
      if (logged < 20) await new Promise((r) => setTimeout(r, 50));
    }
    expect(logged).toBe(20);
  }, 30_000);

  it('the alert manager example of the same page is a configuration nginx accepts', () => {
    const page = readFileSync(join(ROOT, 'docs', 'several-daemons.md'), 'utf8');
    const section = page.slice(page.indexOf('## Prometheus and a load balancer'), page.indexOf('## Gateways behind a load balancer'));
    const block = /```nginx\n([\s\S]*?)```/.exec(section)![1]!.replace(/am[123]\.internal:9093/g, '127.0.0.1:9').replace('listen 9093;', 'listen 127.0.0.1:9;');
    const conf = join(dir, 'am.conf');
    writeFileSync(conf, `pid ${dir}/am.pid;\nerror_log ${dir}/am-error.log;\nevents {}\nhttp {\n  access_log off;\n${block}\n}\n`);
    const check = spawnSync(NGINX!, ['-t', '-p', dir, '-c', conf], { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
  });

  it('passes a stream through as it comes', async () => {
    const r = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'oa/m1', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await r.text();
    expect(text).toContain('data: [DONE]');
  });

  it('serves a file uploaded through the balancer from either gateway (files are shared): its content every time', async () => {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob(['{"custom_id":"1"}\n'], { type: 'application/jsonl' }), 'in.jsonl');
    const up = await fetch(`${base}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(up.status, await up.clone().text()).toBe(200);
    const id = ((await up.json()) as { id: string }).id;
    for (let i = 0; i < 6; i++) {
      const got = await fetch(`${base}/v1/files/${id}/content`, { headers: { authorization: `Bearer ${key}` } });
      expect(got.status).toBe(200);
      expect(await got.text()).toBe('{"custom_id":"1"}\n');
    }
  });
});
