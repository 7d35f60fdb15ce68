import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/free-port.js';


/**
 * A request whose body arrives slowly: headers now, the body when `finish()` is called.
 * Resolves with the raw HTTP response text.
 */
function slowPost(address: string, path: string, body: string) {
  const [host, port] = address.split(':');
  const sock = net.connect(Number(port), host);
  let text = '';
  const done = new Promise<string>((resolve, reject) => {
    sock.on('data', (c) => (text += c));
    sock.on('end', () => resolve(text));
    sock.on('close', () => resolve(text));
    sock.on('error', reject);
  });
  const opened = new Promise<void>((r) => sock.once('connect', () => r()));
  void opened.then(() =>
    sock.write(`POST ${path} HTTP/1.1\r\nHost: ${address}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`),
  );
  return {
    opened,
    finish: () => sock.write(body.slice(5)),
    done,
  };
}

function connects(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const s = net.connect(Number(port), host);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('listener moves and drains with a request in flight', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startDaemon({ daemonYaml: { servers: { nodes: { address: '127.0.0.1:0' } } } });
  });
  afterAll(async () => {
    await d.cleanup();
  });

  it('moving a server: the slow request on the old listener completes, the new one accepts at once', async () => {
    const old = (await d.request('core', 'GET', '/core/1.0')).json.metadata.servers.nodes.bound_address;
    const slow = slowPost(old, '/api', JSON.stringify({ Method: 'getprices' }));
    await slow.opened;
    await new Promise((r) => setTimeout(r, 50));
    const port = await freePort();
    const r = await d.request('core', 'PATCH', '/core/1.0/daemon/config', { servers: { nodes: { address: `127.0.0.1:${port}` } } });
    expect(r.status).toBe(200);
    expect(await connects(`127.0.0.1:${port}`)).toBe(true);
    expect(await connects(old)).toBe(false);
    slow.finish();
    const answer = await slow.done;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\{"Method":.*"Code":\d+.*\}$/);
  });

  it('SIGTERM: ready turns 503 while an in-flight request drains, then exit 0 after it finished', async () => {
    const addr = (await d.request('core', 'GET', '/core/1.0')).json.metadata.servers.nodes.bound_address;
    const slow = slowPost(addr, '/api', JSON.stringify({ Method: 'getprices' }));
    await slow.opened;
    await new Promise((r) => setTimeout(r, 50));
    d.signal('SIGTERM');
    let sawShutdown = false;
    for (let i = 0; i < 100 && !sawShutdown; i++) {
      const ready = await d.request('core', 'GET', '/core/1.0/ready').catch(() => null);
      if (ready?.status === 503) {
        expect(ready.json.error).toBe('Daemon is shutting down');
        sawShutdown = true;
      } else await new Promise((r) => setTimeout(r, 10));
    }
    expect(sawShutdown).toBe(true);
    expect(d.child.exitCode).toBe(null);
    slow.finish();
    expect(await slow.done).toMatch(/^HTTP\/1\.1 200 /);
    expect(await d.waitExit()).toBe(0);
  });
});
