import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeNknNetwork } from '../fakes/nkn-node.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

/** End to end: the real daemon (bin/ctl serve), its control socket, the nodes TCP listener and the fake network. */
let d: TestDaemon;
let fake: FakeNknNetwork;
let tcp: string;
const IPS = ['203.0.113.50', '203.0.113.51', '198.51.100.52'];

beforeAll(async () => {
  fake = await new FakeNknNetwork().start();
  fake.setMode('198.51.100.52', 'offline');
  d = await startDaemon({
    ctlYaml: {
      egress: { 'address-map': fake.addressMap(IPS) },
      nodes: { poll: { interval: 1, 'retry-delay': 0, retries: 0, 'dirty-retries': 0 } },
    },
  });
  tcp = await d.baseUrl('nodes');
}, 60_000);

afterAll(async () => {
  await d?.cleanup();
  await fake?.stop();
});

async function api(body: unknown): Promise<any> {
  const r = await d.request('nodes', 'POST', '/api', body);
  expect(r.headers['content-type']).toMatch(/application\/json/);
  return r.json;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('node monitor in the daemon', () => {
  let Hash: string;

  it('serves the envelope on the control socket (Host: nodes) and on its TCP listener', async () => {
    const g = await api({ Method: 'genid' });
    expect(g).toMatchObject({ Method: 'genid', Code: 0, Error: false });
    Hash = g.Value.Hash;
    const viaTcp = await fetch(`${tcp}/api`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'Method=getdaemon' });
    expect(viaTcp.status).toBe(200);
    expect(await viaTcp.json()).toMatchObject({ Method: 'getdaemon', Code: 0, Value: { Version: expect.any(String) } });
    // The documented one-liner: curl -d sends JSON with the form content type.
    const curl = spawnSync('curl', ['-s', '-d', '{"Method":"getdaemon"}', `${tcp}/api`], { encoding: 'utf8', timeout: 10_000 });
    expect(JSON.parse(curl.stdout)).toMatchObject({ Method: 'getdaemon', Code: 0, Error: false });
    const get = await fetch(`${tcp}/api`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('polls added nodes through the address map and shows their state', async () => {
    expect((await api({ Method: 'addnodes', Value: { Hash, Multiple: true, Name: 'e2e', Ip: IPS.join('\n') } })).Code).toBe(0);
    const r = await until(
      () => api({ Method: 'getmynodes', Value: { Hash } }),
      (v) => v.Value.List.every((n: any) => n.Err !== 2),
    );
    const byIp = Object.fromEntries(r.Value.List.map((n: any) => [n.Ip, n]));
    expect(byIp['203.0.113.50']).toMatchObject({ SyncState: 'PERSIST_FINISHED', Name: 'e2e1' });
    expect(byIp['198.51.100.52']).toMatchObject({ SyncState: '_OFFLINE_', Err: 1 });
    expect(fake.requests.every((q) => IPS.includes(q.ip))).toBe(true);
    const ns = await until(
      () => api({ Method: 'getnetstatus', Value: { Hash } }),
      (v) => v.Code === 0,
    );
    expect(ns.Value.nodes_count).toBe(2);
  });

  it('runs the WebSocket session on GET /polling of the TCP listener', async () => {
    const ws = new WebSocket(`${tcp.replace(/^http/, 'ws')}/polling`);
    const frames: any[] = [];
    let wake: (() => void) | undefined;
    ws.on('message', (m) => {
      frames.push(m.toString());
      wake?.();
    });
    const next = async () => {
      while (frames.length === 0) await new Promise<void>((r) => (wake = r));
      return frames.shift();
    };
    await new Promise((r) => ws.once('open', r));
    ws.send('1');
    expect(await next()).toBe('2');
    ws.send(JSON.stringify({ Method: 'auth', Value: { Hash } }));
    expect(JSON.parse(await next())).toMatchObject({ Method: 'auth', Code: 0 });
    ws.send(JSON.stringify({ Method: 'getmynodes' }));
    let reply = JSON.parse(await next());
    while (reply.Method !== 'getmynodes') reply = JSON.parse(await next());
    expect(reply.Value.List).toHaveLength(3);
    ws.close();
  });

  it('keeps acknowledged data across kill -9', async () => {
    await api({ Method: 'savemysettings', Value: { Hash, Wallets: ['NKNZKKF9u1MUQWnK272YoFiMTn5tjZh7uRQE'] } });
    await d.kill9();
    await d.start();
    const r = await api({ Method: 'getmynodes', Value: { Hash } });
    expect(r.Value.List.map((n: any) => n.Ip).sort()).toEqual([...IPS].sort());
    expect((await api({ Method: 'getmywallets', Value: { Hash } })).Value.Wallets).toHaveLength(1);
  });
});

describe('rate limit on POST /api', () => {
  let limited: TestDaemon;
  beforeAll(async () => {
    limited = await startDaemon({ ctlYaml: { nodes: { 'rate-limit': { limit: 3, interval: 60 }, poll: { enabled: false } } } });
  }, 60_000);
  afterAll(async () => {
    await limited?.cleanup();
  });

  it('answers 429 once a client IP used its budget, on both routes together', async () => {
    const base = await limited.baseUrl('nodes');
    const statuses: number[] = [];
    for (const path of ['/api', '/api/getdaemon', '/api', '/api/getdaemon']) {
      const r = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'Method=getdaemon' });
      statuses.push(r.status);
      if (r.status === 429) expect(await r.json()).toEqual({ message: 'Too Many Requests' });
      else await r.arrayBuffer();
    }
    // Each route pattern has its own counter: /api allows 3, /api/:method allows 3.
    expect(statuses).toEqual([200, 200, 200, 200]);
    for (let i = 0; i < 2; i++) await fetch(`${base}/api`, { method: 'POST', body: 'Method=getdaemon' }).then((r) => r.arrayBuffer());
    const blocked = await fetch(`${base}/api`, { method: 'POST', body: 'Method=getdaemon' });
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
