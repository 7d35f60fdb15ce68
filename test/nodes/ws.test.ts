import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startHarness, type Harness } from './harness.js';

let h: Harness | undefined;
const open: WebSocket[] = [];
afterEach(async () => {
  for (const ws of open.splice(0)) ws.terminate();
  await h?.close();
  h = undefined;
});

/** A client that queues incoming frames so tests can await them in order. */
class Client {
  readonly frames: string[] = [];
  private waiters: ((f: string) => void)[] = [];
  closed: Promise<{ code: number }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const f = d.toString();
      const w = this.waiters.shift();
      if (w) w(f);
      else this.frames.push(f);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve({ code })));
  }

  next(timeoutMs = 2000): Promise<string> {
    const f = this.frames.shift();
    if (f !== undefined) return Promise.resolve(f);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no frame')), timeoutMs);
      this.waiters.push((x) => {
        clearTimeout(t);
        resolve(x);
      });
    });
  }

  async json(timeoutMs?: number): Promise<any> {
    return JSON.parse(await this.next(timeoutMs));
  }

  send(method: string, value?: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(value === undefined ? { Method: method } : { Method: method, Value: value }));
  }

  async call(method: string, value?: Record<string, unknown>): Promise<any> {
    this.send(method, value);
    return this.json();
  }
}

async function connect(path = '/polling'): Promise<Client> {
  const ws = new WebSocket(`ws://127.0.0.1:${h!.port}${path}`);
  open.push(ws);
  const c = new Client(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return c;
}

describe('WebSocket session', () => {
  it('answers the heartbeat 1 with 2', async () => {
    h = await startHarness();
    const c = await connect();
    c.ws.send('1');
    expect(await c.next()).toBe('2');
  });

  it('starts unauthorised (253, the session stays open), binds with auth and unbinds with logout', async () => {
    h = await startHarness();
    const Hash = await h.genid();
    const c = await connect();
    expect(await c.call('getmynodes')).toEqual({ Method: 'getmynodes', Code: 253, Error: true, ErrMessage: 'You have no authorization', Value: null });
    expect(await c.call('auth', {})).toMatchObject({ Method: 'auth', Code: 5, Error: true });
    expect(await c.call('auth', { Hash: 'abc' })).toMatchObject({ Method: 'auth', Code: 254 });
    expect(await c.call('auth', { Hash: 'e'.repeat(64) })).toMatchObject({ Method: 'auth', Code: 255 });
    expect(await c.call('auth', { Hash })).toEqual({ Method: 'auth', Code: 0, Error: false, Value: { Hash } });
    expect(await c.call('getmynodes')).toMatchObject({ Method: 'getmynodes', Code: 3, Error: false });
    expect(await c.call('addnodes', { Multiple: false, Name: 'ws', Ip: '203.0.113.5' })).toMatchObject({ Code: 0 });
    expect((await c.call('getmynodes')).Value.List[0]).toMatchObject({ Name: 'ws', Ip: '203.0.113.5' });
    expect(await c.call('logout')).toEqual({ Method: 'logout', Code: 0, Error: false, Value: null });
    expect((await c.call('getmynodes')).Code).toBe(253);
    expect((await c.call('getdaemon')).Code).toBe(0);
  });

  it('serves getlanguage with the raw pack text and its codes', async () => {
    h = await startHarness();
    const c = await connect();
    const r = await c.call('getlanguage', { View: 'index_src', Locale: 'zn_CN' });
    expect(r).toMatchObject({ Method: 'getlanguage', Code: 0, Error: false, Value: { Locale: 'zn_CN', View: 'index_src' } });
    expect(JSON.parse(r.Value.Data)).toMatchObject({ current_lang: 'zn_CN', lang_values: { en_US: expect.any(String) } });
    expect((await c.call('getlanguage', { View: 1, Locale: 'en_US' })).Code).toBe(230);
    expect((await c.call('getlanguage', { View: 'v', Locale: 1 })).Code).toBe(231);
    expect((await c.call('getlanguage', { View: 'v', Locale: 'xx_XX' })).Code).toBe(233);
  });

  it('answers 234 for a pack that is missing or not JSON in languages-dir', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-lang-'));
    writeFileSync(join(dir, 'en_US.json'), '{"current_lang": "en_US",');
    writeFileSync(join(dir, 'zn_CN.json'), '{"current_lang": "custom"}');
    h = await startHarness({ config: { 'languages-dir': dir } });
    const c = await connect();
    expect((await c.call('getlanguage', { View: 'v', Locale: 'en_US' })).Code).toBe(234);
    expect((await c.call('getlanguage', { View: 'v', Locale: 'ru_RU' })).Code).toBe(234);
    expect((await c.call('getlanguage', { View: 'v', Locale: 'zn_CN' })).Value.Data).toBe('{"current_lang": "custom"}');
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes the session without a reply on a frame that is not JSON or names an unknown method', async () => {
    h = await startHarness();
    for (const frame of ['{nope', JSON.stringify({ Method: 'nosuch' }), JSON.stringify({ Method: 'getdaemon', Value: [1] }), '[]']) {
      const c = await connect();
      c.ws.send(frame);
      await c.closed;
      expect(c.frames).toEqual([]);
    }
  });

  it('limits sessions per client IP (1002, Method other) and frees the slot on close', async () => {
    h = await startHarness({ config: { websocket: { 'max-per-ip': 2 } } });
    const a = await connect();
    await connect();
    const c = await connect();
    expect(await c.json()).toEqual({ Method: 'other', Code: 1002, Error: true, ErrMessage: 'Connections limit has been reached', Value: null });
    await c.closed;
    a.ws.close();
    await a.closed;
    await new Promise((r) => setTimeout(r, 50));
    const d = await connect();
    d.ws.send('1');
    expect(await d.next()).toBe('2');
  });

  it("fans an account's changes out to all of its sessions, from WebSocket and from POST", async () => {
    h = await startHarness();
    const Hash = await h.genid();
    const otherHash = await h.genid();
    const a = await connect();
    const b = await connect();
    const stranger = await connect();
    await a.call('auth', { Hash });
    await b.call('auth', { Hash });
    await stranger.call('auth', { Hash: otherHash });
    const mine = await a.call('addnodes', { Multiple: false, Name: '', Ip: '198.51.100.7' });
    expect(mine).toMatchObject({ Method: 'addnodes', Code: 0 });
    expect(await b.json()).toEqual(mine);
    expect(a.frames).toEqual([]); // the sender gets its reply once
    const viaPost = await h.call('savemysettings', { Hash, Wallets: ['NKNZKKF9u1MUQWnK272YoFiMTn5tjZh7uRQE'] });
    expect(await a.json()).toEqual(viaPost);
    expect(await b.json()).toEqual(viaPost);
    const id = (await h.call('getmynodes', { Hash })).Value.List[0].NodeId;
    const rm = await h.call('rmnodes', { Hash, NodesId: [id] });
    expect(await a.json()).toEqual(rm);
    // A failed change is not pushed; nothing reached the other account.
    await h.call('rmnodes', { Hash, NodesId: [id] });
    await new Promise((r) => setTimeout(r, 100));
    expect(a.frames).toEqual([]);
    expect(stranger.frames).toEqual([]);
  });

  it('pushes fresh node lists to authorised sessions after a poll cycle', async () => {
    h = await startHarness({ config: { poll: { retries: 0 } } });
    const Hash = await h.genid();
    const a = await connect();
    await a.call('auth', { Hash });
    await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip: '203.0.113.77' });
    expect((await a.json()).Method).toBe('addnodes');
    await h.handle.poller.runCycle(); // unmapped address: refused by egress, shows offline
    const push = await a.json();
    expect(push).toMatchObject({ Method: 'getmynodes', Code: 0, Value: { List: [{ Ip: '203.0.113.77', Err: 1 }] } });
  });

  it('probes an idle session with 1 and closes it when 2 does not come back', async () => {
    h = await startHarness({ config: { websocket: { 'read-timeout': 0.15, 'pong-timeout': 0.15 } } });
    const quiet = await connect();
    const alive = await connect();
    alive.ws.on('message', (d) => {
      if (d.toString() === '1') alive.ws.send('2');
    });
    expect(await quiet.next()).toBe('1');
    await quiet.closed;
    await new Promise((r) => setTimeout(r, 400));
    expect(alive.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('refuses upgrades on other paths', async () => {
    h = await startHarness();
    await expect(connect('/other')).rejects.toThrow(/404/);
  });
});
