/**
 * The Core API cluster with four real daemons: roles (voter / stand-by / spare, as microcluster)
 * assigned as members join, go down and are removed; removals that converge when the removed member
 * or another member was down or frozen (SIGSTOP) through them; a DELETE that answers promptly even
 * when the member removed is frozen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/free-port.js';
import { until } from '../helpers/until.js';

// 500 ms heartbeats: a member is UNREACHABLE after 1.5 s without one. Waits below allow 30 s: the
// machine running the tests may be loaded.
const HEARTBEAT = '500ms';
const WAIT = 30_000;

const refused = (address: string) =>
  new Promise<boolean>((resolve) => {
    const s = connect(Number(address.split(':')[1]), '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });

interface MemberRow {
  name: string;
  role: string;
  status: string;
}

describe('Core API cluster: roles and removals', () => {
  const d: Record<string, TestDaemon> = {};
  const addr: Record<string, string> = {};
  const names = ['a', 'b', 'c', 'd'];

  beforeAll(async () => {
    for (const n of names) addr[n] = `127.0.0.1:${await freePort()}`;
    const started = await Promise.all(names.map(() => startDaemon({ ctlYaml: { core: { 'heartbeat-interval': HEARTBEAT } } })));
    names.forEach((n, i) => (d[n] = started[i]!));
  }, 90_000);
  afterAll(async () => {
    for (const n of names) d[n]?.signal('SIGCONT');
    await Promise.all(names.map((n) => d[n]?.cleanup()));
  });

  const list = async (n: string): Promise<MemberRow[] | undefined> => {
    const r = await d[n]!.request('core', 'GET', '/core/1.0/cluster');
    return r.status === 200 ? (r.json.metadata as MemberRow[]) : undefined;
  };
  /** `name:role` of every member, as member `n` lists them. */
  const view = async (n: string) => (await list(n))?.map((m) => `${m.name}:${m.role}`).join(' ');
  const allSee = async (who: string[], want: string) => {
    for (const n of who) {
      await until(`${n} to list ${want}`, async () => (await view(n)) === want, WAIT, 100).catch(async (e: Error) => {
        const views = await Promise.all(who.map(async (x) => `${x}: ${await view(x).catch(() => 'no answer')}`));
        throw new Error(`${e.message}; members list ${views.join(', ')}`);
      });
    }
  };
  const join = async (n: string) => {
    const token = (await d.a!.request('core', 'POST', '/core/control/tokens', { name: n })).json.metadata as string;
    const r = await d[n]!.request('core', 'POST', '/core/control', { join_token: token, name: n, address: addr[n] });
    expect(r.status, r.text).toBe(200);
  };
  /** Member `n` left the cluster: it lists no members and no longer serves its cluster address. */
  const left = async (n: string) => {
    await until(`${n} to leave the cluster`, async () => (await list(n)) === undefined, WAIT, 100);
    expect(await refused(addr[n]!)).toBe(true);
  };

  it('roles as microcluster: three voters, then stand-bys; every member lists the same roles', async () => {
    const r = await d.a!.request('core', 'POST', '/core/control', { bootstrap: true, name: 'a', address: addr.a });
    expect(r.status, r.text).toBe(200);
    expect(await view('a')).toBe('a:voter');
    for (const n of ['b', 'c', 'd']) await join(n);
    await allSee(names, 'a:voter b:voter c:voter d:stand-by');
    const out = await d.d!.cli(['cluster', 'members']);
    expect(out.stdout).toMatch(/^d\s+\S+\s+stand-by\s/m);
  }, 120_000);

  it('a voter that goes down is replaced by the stand-by; removed while down, it leaves when it is back', async () => {
    await d.c!.stop();
    await allSee(['a', 'b', 'd'], 'a:voter b:voter c:spare d:voter');
    expect((await d.a!.request('core', 'DELETE', '/core/1.0/cluster/c')).status).toBe(200);
    await allSee(['a', 'b', 'd'], 'a:voter b:voter d:voter');
    await d.c!.start();
    await left('c');
    await allSee(['a', 'b', 'd'], 'a:voter b:voter d:voter');
  }, 120_000);

  it('a member down during a removal drops the removed member when it is back', async () => {
    await d.b!.stop();
    expect((await d.a!.request('core', 'DELETE', '/core/1.0/cluster/d')).status).toBe(200);
    await left('d');
    await d.b!.start();
    // b missed the removal: the heartbeats carry it (b used to list d UNREACHABLE for good).
    await allSee(['a', 'b'], 'a:voter b:voter');
    for (const m of (await list('b'))!) expect(m.status).toBe('ONLINE');
  }, 120_000);

  it('a frozen member is removed at once; the stand-by is promoted; thawed, the removed member leaves', async () => {
    await join('c');
    await join('d');
    await allSee(names, 'a:voter b:voter c:voter d:stand-by');
    d.c!.signal('SIGSTOP');
    const t0 = Date.now();
    const r = await d.a!.request('core', 'DELETE', '/core/1.0/cluster/c');
    const ms = Date.now() - t0;
    expect(r.status, r.text).toBe(200);
    // Measured 41 to 599 ms over ten runs on a loaded machine (it was 5,008 ms: the DELETE waited
    // for the frozen member's TLS handshake); the bound is REMOVE_WAIT_MS (2 s) plus headroom.
    expect(ms).toBeLessThan(4000);
    await allSee(['a', 'b', 'd'], 'a:voter b:voter d:voter');
    d.c!.signal('SIGCONT');
    await left('c');
    await allSee(['a', 'b', 'd'], 'a:voter b:voter d:voter');
  }, 120_000);
});
