/**
 * Gateway on shared storage (issue 23): the same requests through a gateway on the embedded default
 * (SQLite, budget windows in memory) and through one on ctl.yaml storage.postgres + storage.redis
 * (configuration from PostgreSQL, budget windows reserved and reconciled in Redis), side by side in
 * one run against a mock upstream and a direct call:
 *   A. sequential added latency p50 (one connection);
 *   B. c=100 against a 50 ms mock: throughput and errors;
 *   D. budget overshoot: three daemons on the same storage, 50 concurrent clients each, against a
 *      budget worth 40 requests.
 * The bench key has a budget on both daemons, so the shared path does its Redis round trips on
 * every request. Private PostgreSQL and Redis servers on loopback; bounded in count and time.
 */
import { Pool } from 'undici';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { PG_BIN, PostgresServer } from '../helpers/postgres-server.js';
import { REDIS_SERVER, RedisServer } from '../helpers/redis-server.js';
import { BODY, DIRECT_BODY, DIRECT_STREAM_BODY, KEY, STREAM_BODY, loadRounds, sequential, socketJson, startGatewayDaemon, type Path } from './gateway.js';
import { fmt, percentile, report, section } from './util.js';
import { join } from 'node:path';
import http from 'node:http';

type Daemon = Awaited<ReturnType<typeof startGatewayDaemon>>;

/** A management request on a daemon's control socket. */
function manage(d: Daemon, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { socketPath: join(d.dir, 'control.socket'), method, path, headers: { Host: 'gateway', ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } },
      (res) => {
        let t = '';
        res.on('data', (c) => (t += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: t ? JSON.parse(t) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function keyId(d: Daemon, name: string): Promise<string> {
  const r = await manage(d, 'GET', '/api/keys');
  const k = (r.json.keys as { id: string; name: string }[]).find((x) => x.name === name);
  if (!k) throw new Error(`no key ${name}`);
  return k.id;
}

export async function runGatewaySharedBench(): Promise<void> {
  section('Model gateway on shared storage: PostgreSQL + Redis against the embedded default (issue 23)');
  if (!PG_BIN || !REDIS_SERVER) {
    report('shared storage', 'n/a', 'PostgreSQL (initdb) or redis-server is not installed');
    return;
  }
  const mock = await startLlmUpstream({ defaults: { text: 'Hello there, friend, how are you today?', usage: { input: 14, output: 9 } } });
  const [pg, redis] = await Promise.all([PostgresServer.start(), RedisServer.start()]);
  const daemons: Daemon[] = [];
  try {
    const url = await pg.createDatabase('bench');
    const sharedYaml = `storage:\n  postgres: "${url}"\n  redis: "redis://${redis.host}:${redis.port}"\n`;
    const embedded = await startGatewayDaemon(mock, false);
    daemons.push(embedded);
    const shared = await startGatewayDaemon(mock, false, sharedYaml);
    daemons.push(shared);
    const direct: Path = { name: 'direct', origin: mock.origin, path: '/openai/v1/chat/completions', body: DIRECT_BODY, streamBody: DIRECT_STREAM_BODY, headers: { authorization: 'Bearer sk-up' }, noStream: 'not measured here' };
    const paths: Path[] = [
      direct,
      { name: 'embedded', origin: embedded.origin, path: '/v1/chat/completions', body: BODY, streamBody: STREAM_BODY, headers: { authorization: `Bearer ${KEY}` }, noStream: 'not measured here' },
      { name: 'shared', origin: shared.origin, path: '/v1/chat/completions', body: BODY, streamBody: STREAM_BODY, headers: { authorization: `Bearer ${KEY}` }, noStream: 'not measured here' },
    ];
    const measure = async (label: string) => {
      const seq = await sequential(paths, 4, 250, 200);
      const d50 = percentile(seq.get('direct')!.plain, 50);
      const e50 = percentile(seq.get('embedded')!.plain, 50) - d50;
      const s50 = percentile(seq.get('shared')!.plain, 50) - d50;
      report(`A. ${label}: added latency p50, embedded / shared`, `${fmt(e50, 3)} / ${fmt(s50, 3)}`);
      report(`A. ${label}: ratio shared/embedded added p50`, (s50 / e50).toFixed(2), 'goal ≤ 1.3');
      const b = await loadRounds(mock, paths, 50);
      const be = b.get('embedded')!;
      const bs = b.get('shared')!;
      report(`B. ${label}: c=100, 50 ms mock, embedded RPS / p50`, `${be.rps.toFixed(0)} / ${fmt(be.p50, 1)}`, `errors ${be.errors}`);
      report(`B. ${label}: c=100, 50 ms mock, shared RPS / p50`, `${bs.rps.toFixed(0)} / ${fmt(bs.p50, 1)}`, `errors ${bs.errors}`);
      report(`B. ${label}: throughput shared/embedded`, `${((bs.rps / be.rps) * 100).toFixed(1)} %`, 'goal ≥ 95 %');
    };
    // A key without a budget or token limit: the shared daemon serves from its in-memory catalog.
    await measure('key without budget');
    // A budget no request reaches: every request reserves and reconciles (in Redis on the shared daemon).
    for (const d of [embedded, shared]) {
      const r = await manage(d, 'POST', '/api/usage/budget', { apiKeyId: await keyId(d, 'bench'), dailyLimitUsd: 1e6 });
      if (r.status >= 300) throw new Error(`budget: HTTP ${r.status} ${JSON.stringify(r.json)}`);
    }
    await measure('key with a budget');

    // D. Overshoot: two more daemons on the same storage; a fresh key with a budget worth 40 requests.
    for (let i = 0; i < 2; i++) daemons.push(await startGatewayDaemon(mock, false, sharedYaml));
    const cluster = [shared, daemons[2]!, daemons[3]!];
    const made = await manage(shared, 'POST', '/api/keys', { name: 'overshoot' });
    const raw = made.json.key as string;
    const price = await manage(shared, 'GET', '/api/pricing?model=mock/m1');
    const p = price.json.pricing[0] as { input: number; output: number };
    const perRequest = (14 * p.input + 9 * p.output) / 1e6;
    const limit = 40 * perRequest;
    await manage(shared, 'POST', '/api/usage/budget', { apiKeyId: made.json.id, dailyLimitUsd: limit });
    await new Promise((r) => setTimeout(r, 300));
    let served = 0;
    let refused = 0;
    let other = 0;
    const client = async (d: Daemon) => {
      const pool = new Pool(d.origin, { connections: 1 });
      try {
        for (let i = 0; i < 10; i++) {
          const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${raw}` }, body: BODY });
          await res.body.dump();
          if (res.statusCode === 200) served++;
          else if (res.statusCode === 429) {
            refused++;
            return;
          } else other++;
        }
      } finally {
        await pool.close();
      }
    };
    mock.defaults = { ...mock.defaults, latencyMs: 20 };
    await Promise.all(cluster.flatMap((d) => Array.from({ length: 50 }, () => client(d))));
    mock.reset();
    const spent = served * perRequest;
    report('D. budget of 40 requests, 3 daemons × 50 clients: served', `${served}`, `${refused} refused with 429, ${other} other answers`);
    report('D. overshoot', `${(((spent - limit) / limit) * 100).toFixed(1)} % (${((spent - limit) / perRequest).toFixed(1)} requests)`, 'reserve before, reconcile after');
    const info = await socketJson(join(shared.dir, 'control.socket'), 'gateway', `/api/usage/budget?apiKeyId=${made.json.id}`);
    report('D. spend the cluster reports', `$${Number(info.spentUsd ?? info.periods?.daily?.spentUsd).toFixed(6)} of $${limit.toFixed(6)}`);
  } finally {
    for (const d of daemons) await d.stop();
    await mock.close();
    await redis.stop();
    await pg.destroy();
  }
}
