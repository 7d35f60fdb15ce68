/**
 * The webhooks suite again with `storage.postgres` (subscriptions with the shared configuration,
 * deliveries and attempts in the shared queue), and two gateways on one database: an event raised
 * on either is delivered once, and a receiver that fails is retried by whichever gateway is free.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { SharedPostgres } from '../../src/store/postgres.js';
import { PG_BIN, PG_SKIP_REASON } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';
import { startGateway } from './harness.js';
import { gatewaySuitesOnPostgres } from './on-postgres.js';

if (PG_BIN) {
  const pg = gatewaySuitesOnPostgres('gw_hooks');
  await import('./webhooks.test.js');

  describe('webhooks on two gateways sharing the database', () => {
    it('delivers each event once, whichever gateway raised it, and shares the delivery log', async () => {
      const got: string[] = [];
      let fail = 1;
      const receiver = http.createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          got.push((JSON.parse(body) as { type: string; data: { name: string } }).data.name);
          res.writeHead(fail-- > 0 ? 500 : 200).end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
      const url = await pg.server().createDatabase('gw_hooks_pair');
      const dbs = await Promise.all([0, 1].map(() => SharedPostgres.connect(url, pino({ level: 'silent' }))));
      const config = { webhooks: { retry_base_ms: 200, max_attempts: 4 } };
      const [a, b] = await Promise.all(dbs.map((db, i) => startGateway({ config, shared: { daemonId: `hooks-${i}`, postgres: db } })));
      try {
        for (const g of [a!, b!]) {
          g.egress.addMapping('203.0.113.41:80', `127.0.0.1:${(receiver.address() as AddressInfo).port}`);
          await g.instance.start?.();
        }
        const hook = await a!.req('POST', '/api/webhooks', { url: 'http://203.0.113.41/hook', events: ['key.created'] });
        expect(hook.status, hook.text).toBe(201);
        await until('the webhook on the other gateway', async () => (await b!.req('GET', '/api/webhooks')).json.webhooks.length === 1);
        expect((await a!.req('POST', '/api/keys', { name: 'from-a' })).status).toBe(201);
        expect((await b!.req('POST', '/api/keys', { name: 'from-b' })).status).toBe(201);
        // The first send fails (500) and is retried; each event reaches the receiver as one success.
        await until('both events delivered', async () => {
          const d = (await b!.req('GET', `/api/webhooks/${hook.json.id}/deliveries`)).json.deliveries as { status: string }[];
          return d.length === 2 && d.every((x) => x.status === 'delivered');
        }, 10_000);
        // Three sends in all: the failed first one, its retry, and the other event; never a duplicate.
        expect(new Set(got)).toEqual(new Set(['from-a', 'from-b']));
        const log = (await a!.req('GET', `/api/webhooks/${hook.json.id}/deliveries`)).json.deliveries as { attempts: number }[];
        expect(log.map((d) => d.attempts).sort()).toEqual([1, 2]);
        expect(got).toHaveLength(3);
      } finally {
        await Promise.all([a!.close(), b!.close()]);
        for (const db of dbs) await db.close();
        await new Promise((r) => receiver.close(r));
      }
    }, 30_000);
  });
} else {
  describe.skip(PG_SKIP_REASON, () => it('needs PostgreSQL', () => undefined));
}
