/**
 * Two real daemons on one private PostgreSQL (ctl.yaml `storage.postgres`), as alert managers in
 * HA: Prometheus posts every alert to both, silences set through either are in force on both, and
 * each notification is sent once by the pair, also when the daemon sending it is killed mid-send.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';

interface Hook {
  externalURL: string;
  status: string;
  groupKey: string;
  alerts: { status: string; labels: Record<string, string> }[];
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));


describe.skipIf(!PG_BIN)('alert manager HA: two daemons sharing PostgreSQL', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let pgServer: PostgresServer;
  let sink: Server;
  const got: Hook[] = [];
  /** While set, requests for this alertname are held open (a receiver that hangs). */
  let hang: string | undefined;
  const held: ServerResponse[] = [];
  let a: TestDaemon;
  let b: TestDaemon;

  const start = (url: string, hook: string) =>
    startDaemon({
      ctlYaml: { storage: { postgres: url } },
      files: {
        'alertmanager.yml': `route: {receiver: hook, group_by: [alertname], group_wait: 500ms, group_interval: 2s, repeat_interval: 1h}\nreceivers:\n  - name: hook\n    webhook_configs: [{url: "${hook}"}]\n`,
      },
    });

  beforeAll(async () => {
    pgServer = await PostgresServer.start();
    const url = await pgServer.createDatabase('ha');
    sink = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const hook = JSON.parse(body) as Hook;
        got.push(hook);
        if (hang && hook.alerts.some((x) => x.labels.alertname === hang)) held.push(res);
        else res.end();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const hook = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
    [a, b] = await Promise.all([start(url, hook), start(url, hook)]);
  }, 60_000);

  afterAll(async () => {
    for (const r of held) r.destroy();
    await a?.cleanup();
    await b?.cleanup();
    sink?.closeAllConnections();
    await new Promise((r) => sink?.close(r));
    await pgServer?.destroy();
  });

  const postBoth = async (alerts: unknown[]) => {
    for (const d of [a, b].filter((d) => d.child.exitCode === null && d.child.signalCode === null)) {
      expect((await d.request('alertmanager', 'POST', '/api/v2/alerts', alerts)).status).toBe(200);
    }
  };

  it('a silence created on one daemon is listed and in force on the other (told through NOTIFY)', async () => {
    const now = Date.now();
    const r = await a.request('alertmanager', 'POST', '/api/v2/silences', {
      matchers: [{ name: 'alertname', value: 'Muted', isRegex: false, isEqual: true }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      createdBy: 'test',
      comment: 'shared',
    });
    expect(r.status).toBe(200);
    const id = r.json.silenceID as string;
    await until(
      'b to list the silence',
      async () => ((await b.request('alertmanager', 'GET', '/api/v2/silences')).json as { id: string }[]).some((s) => s.id === id),
      // Well under a second on a quiet machine; a loaded full run once needed more. Nothing but the
      // notification tells b (no polling), so without it this never passes.
      3000,
    );
    await postBoth([{ labels: { alertname: 'Muted', instance: 'x' } }]);
    const alerts = (await b.request('alertmanager', 'GET', '/api/v2/alerts?silenced=true')).json as { status: { state: string; silencedBy: string[] } }[];
    expect(alerts[0]?.status).toMatchObject({ state: 'suppressed', silencedBy: [id] });
  });

  it('every alert group is notified once by the pair, not once per daemon', async () => {
    const names = ['DiskFull', 'CpuHot', 'MemLow', 'NetDown'];
    await postBoth(names.map((alertname) => ({ labels: { alertname, instance: 'x' } })));
    await until('a notification per group', () => names.every((n) => got.some((h) => h.alerts[0]?.labels.alertname === n)), 10_000);
    // Two more group intervals: neither daemon sends a second firing notification.
    await settle(4500);
    for (const n of names) expect(got.filter((h) => h.alerts[0]?.labels.alertname === n), n).toHaveLength(1);
    expect(got.some((h) => h.alerts[0]?.labels.alertname === 'Muted')).toBe(false);
  }, 30_000);

  it('a daemon killed while sending is covered by the other', async () => {
    hang = 'Stuck';
    const before = got.length;
    await postBoth([{ labels: { alertname: 'Stuck', instance: 'x' } }]);
    await until('the first attempt', () => got.length > before, 10_000);
    const first = got[got.length - 1]!;
    // Which daemon sent it: its externalURL ends in its own listener's port.
    const port = async (d: TestDaemon) => new URL(await d.baseUrl('alertmanager')).port;
    const victim = new URL(first.externalURL).port === (await port(a)) ? a : b;
    const survivor = victim === a ? b : a;
    const survivorPort = await port(survivor);
    expect(new URL(first.externalURL).port).toBe(await port(victim));
    hang = undefined;
    await victim.kill9();
    await until('the survivor to send it', () => got.slice(before + 1).some((h) => new URL(h.externalURL).port === survivorPort && h.alerts[0]?.labels.alertname === 'Stuck'), 15_000);
    const again = got.slice(before + 1).filter((h) => h.alerts[0]?.labels.alertname === 'Stuck');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ status: 'firing', groupKey: first.groupKey });
  }, 40_000);

  it('ctl status shows the shared database and whether it answers', async () => {
    const live = [a, b].find((d) => d.child.exitCode === null && d.child.signalCode === null)!;
    const out = await live.cli(['status']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/storage\.postgres:\s+postgres:\/\/postgres@127\.0\.0\.1:\d+\/ha \(reachable\)/);
  });

  it('a daemon whose shared database cannot be reached does not start, and says why', async () => {
    const d = await startDaemon({ ctlYaml: { storage: { postgres: 'postgres://postgres@127.0.0.1:1/none' } } }).catch((e: Error) => e);
    expect(d).toBeInstanceOf(Error);
    expect((d as Error).message).toMatch(/storage\.postgres: cannot reach PostgreSQL \(postgres:\/\/postgres@127\.0\.0\.1:1\/none\)/);
  });

  it('with the database gone, silence writes answer 503 at once, the rest keeps serving, and it recovers', async () => {
    const live = [a, b].find((d) => d.child.exitCode === null && d.child.signalCode === null)!;
    await pgServer.stop();
    const body = (comment: string) => ({
      matchers: [{ name: 'alertname', value: 'X', isRegex: false, isEqual: true }],
      startsAt: new Date().toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      createdBy: 'test',
      comment,
    });
    const t0 = Date.now();
    const r = await live.request('alertmanager', 'POST', '/api/v2/silences', body('while down'));
    expect(r.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await live.request('alertmanager', 'GET', '/api/v2/alerts')).status).toBe(200);
    expect((await live.request('alertmanager', 'GET', '/api/v2/silences')).status).toBe(200);
    await pgServer.start();
    await until('silence writes to work again', async () => (await live.request('alertmanager', 'POST', '/api/v2/silences', body('back'))).status === 200, 10_000);
  }, 30_000);
});
