/**
 * The files and batches suites again with `storage.postgres`: file rows and bytes, batches, their
 * lines (claimed a few at a time) and results in the shared database; one database per state dir.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { SharedPostgres } from '../../src/store/postgres.js';
import { PG_BIN, PG_SKIP_REASON } from '../helpers/postgres-server.js';
import OpenAI, { toFile } from 'openai';
import { startLlmUpstream } from '../fakes/llm-upstream.js';
import { until } from '../helpers/until.js';
import { startGateway } from './harness.js';
import { gatewaySuitesOnPostgres } from './on-postgres.js';

const KEY = 'sk-gw-batch-pair-aaaaaaaa';

if (PG_BIN) {
  const pg = gatewaySuitesOnPostgres('gw_files');
  await import('./files-batches.test.js');
  await import('./batches-expiry.test.js');

  describe('two gateways on one database', () => {
    it('serves a file uploaded through the other, and runs each line of a batch once between them', async () => {
      const mock = await startLlmUpstream({ defaults: { latencyMs: 30 } });
      const yaml = `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k1, models: [m1]}\nkeys:\n  - {name: app, key: "${KEY}", models: ["*"]}\n`;
      const url = await pg.server().createDatabase('gw_files_pair');
      const dbs = await Promise.all([SharedPostgres.connect(url, pino({ level: 'silent' })), SharedPostgres.connect(url, pino({ level: 'silent' }))]);
      const [a, b] = await Promise.all(dbs.map((db, i) => startGateway({ yaml, config: { batch_concurrency: 2 }, shared: { daemonId: `pair-${i}`, postgres: db } })));
      try {
        // Started as in the daemon: each gateway listens for new batches and looks for running ones.
        await Promise.all([a!.instance.start?.(), b!.instance.start?.()]);
        const ca = new OpenAI({ apiKey: KEY, baseURL: `${a!.tcpUrl}/v1` });
        const cb = new OpenAI({ apiKey: KEY, baseURL: `${b!.tcpUrl}/v1` });
        const lines = Array.from({ length: 40 }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'oa/m1', messages: [{ role: 'user', content: `line ${i}` }] } }));
        const text = lines.join('\n') + '\n';
        const f = await ca.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
        expect(await (await cb.files.content(f.id)).text()).toBe(text);

        mock.requests.length = 0;
        const batch = await ca.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
        let done = await cb.batches.retrieve(batch.id);
        for (const end = Date.now() + 20_000; done.status !== 'completed' && Date.now() < end; ) {
          await new Promise((r) => setTimeout(r, 100));
          done = await cb.batches.retrieve(batch.id);
        }
        expect(done.status).toBe('completed');
        expect(done.request_counts).toMatchObject({ total: 40, completed: 40, failed: 0 });
        // Each line reached the upstream once, and both gateways ran some.
        const asked = mock.requests.map((r) => JSON.stringify(r.body)).filter((t) => t.includes('line '));
        expect(asked).toHaveLength(40);
        const claimers = await dbs[0]!.query<{ claimed_by: string }>('SELECT DISTINCT claimed_by FROM gw_batch_lines WHERE batch_id = $1', [batch.id]);
        expect(claimers.map((r) => r.claimed_by).sort()).toEqual(['pair-0', 'pair-1']);
        const out = (await (await ca.files.content(done.output_file_id!)).text()).trim().split('\n');
        expect(out).toHaveLength(40);
      } finally {
        await Promise.all([a!.close(), b!.close()]);
        for (const db of dbs) await db.close();
        await mock.close();
      }
    }, 40_000);

    it('a gateway that stops mid-batch leaves its remaining lines to the other', async () => {
      const mock = await startLlmUpstream({ defaults: { latencyMs: 60 } });
      const yaml = `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k1, models: [m1]}\nkeys:\n  - {name: app, key: "${KEY}", models: ["*"]}\n`;
      const url = await pg.server().createDatabase('gw_files_handover');
      const dbs = await Promise.all([SharedPostgres.connect(url, pino({ level: 'silent' })), SharedPostgres.connect(url, pino({ level: 'silent' }))]);
      const [a, b] = await Promise.all(dbs.map((db, i) => startGateway({ yaml, config: { batch_concurrency: 2 }, shared: { daemonId: `handover-${i}`, postgres: db } })));
      let aClosed = false;
      try {
        await Promise.all([a!.instance.start?.(), b!.instance.start?.()]);
        const ca = new OpenAI({ apiKey: KEY, baseURL: `${a!.tcpUrl}/v1` });
        const cb = new OpenAI({ apiKey: KEY, baseURL: `${b!.tcpUrl}/v1` });
        const text = Array.from({ length: 30 }, (_, i) => JSON.stringify({ custom_id: `h${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'oa/m1', messages: [{ role: 'user', content: `handover ${i}` }] } })).join('\n');
        const f = await ca.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
        mock.requests.length = 0;
        const batch = await ca.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
        await until('a few lines done', async () => mock.requests.length >= 4, 5000);
        await a!.close();
        aClosed = true;
        let done = await cb.batches.retrieve(batch.id);
        for (const end = Date.now() + 20_000; done.status !== 'completed' && Date.now() < end; ) {
          await new Promise((r) => setTimeout(r, 100));
          done = await cb.batches.retrieve(batch.id);
        }
        expect(done.request_counts).toMatchObject({ total: 30, completed: 30, failed: 0 });
        expect(mock.requests.map((r) => JSON.stringify(r.body)).filter((t) => t.includes('handover '))).toHaveLength(30);
      } finally {
        await Promise.all([aClosed ? undefined : a!.close(), b!.close()]);
        for (const db of dbs) await db.close();
        await mock.close();
      }
    }, 40_000);
  });
} else {
  describe.skip(PG_SKIP_REASON, () => it('needs PostgreSQL', () => undefined));
}
