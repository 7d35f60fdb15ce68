/** `ctl gateway webhook …` against a daemon whose egress maps a public-looking receiver to a loopback server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let d: TestDaemon;
let receiver: http.Server;
let answer = 200;
const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  d = await startDaemon({
    ctlYaml: { gateway: { webhooks: { retry_base_ms: 60_000 } }, egress: { 'address-map': { '203.0.113.42:80': `127.0.0.1:${(receiver.address() as AddressInfo).port}` } } },
  });
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  await new Promise((r) => receiver?.close(r));
});

describe('ctl gateway webhook', () => {
  it('add prints the secret once; test signs with it; list, get, set, deliveries, rm', async () => {
    const added = await d.cli(['gateway', 'webhook', 'add', 'http://203.0.113.42/hook', '--event', 'key.created', '--event', 'batch.completed', '--description', 'ops']);
    expect(added.code, added.stderr).toBe(0);
    const secret = added.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    const id = /added webhook (wh_\S+);/.exec(added.stderr)![1]!;

    const list = await d.cli(['gateway', 'webhook', 'list']);
    expect(list.stdout).toMatch(new RegExp(`${id} +http://203\\.0\\.113\\.42/hook +key\\.created,batch\\.completed +true +ops`));
    expect(list.stdout).not.toContain(secret);

    const tested = await d.cli(['gateway', 'webhook', 'test', id]);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/^delivered: HTTP 200 in \d+ ms$/m);
    const last = received.at(-1)!;
    const payload = new Webhook(secret).verify(last.body, {
      'webhook-id': String(last.headers['webhook-id']),
      'webhook-timestamp': String(last.headers['webhook-timestamp']),
      'webhook-signature': String(last.headers['webhook-signature']),
    }) as { type: string };
    expect(payload.type).toBe('webhook.test');

    answer = 500;
    const failed = await d.cli(['gateway', 'webhook', 'test', id]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^not delivered: /m);
    answer = 200;

    const set = await d.cli(['gateway', 'webhook', 'set', id, '--disable', '--event', 'key.revoked']);
    expect(set.stdout).toBe(`updated webhook ${id}\n`);
    const got = await d.cli(['gateway', 'webhook', 'get', id]);
    expect(got.stdout).toMatch(/^enabled: +false$/m);
    expect(got.stdout).toMatch(/^events: +key\.revoked$/m);

    const deliveries = JSON.parse((await d.cli(['gateway', 'webhook', 'deliveries', id, '-o', 'json'])).stdout) as { deliveries: unknown[] };
    expect(Array.isArray(deliveries.deliveries)).toBe(true);

    expect((await d.cli(['gateway', 'webhook', 'rm', id])).stdout).toBe(`deleted webhook ${id}\n`);
    const gone = await d.cli(['gateway', 'webhook', 'get', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/not found/);
  });

  it('refuses an unknown event type and a bad secret with the API message; events lists the types', async () => {
    const bad = await d.cli(['gateway', 'webhook', 'add', 'http://203.0.113.42/hook', '--event', 'nope.never']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown event type "nope\.never"/);
    const badSecret = await d.cli(['gateway', 'webhook', 'add', 'http://203.0.113.42/hook', '--secret', 'plain']);
    expect(badSecret.code).toBe(1);
    expect(badSecret.stderr).toMatch(/whsec_/);
    const events = await d.cli(['gateway', 'webhook', 'events']);
    expect(events.stdout).toMatch(/^batch\.completed +/m);
    expect(events.stdout).toMatch(/^budget\.exceeded +/m);
  });
});
