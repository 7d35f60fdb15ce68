/**
 * Notifications at scale, side by side with the real Alertmanager 0.25: 10,000 alerts in 1,000 groups
 * (group_by alertname) posted at once, every group sent to one webhook sink. Measured: the time from
 * the first POST until the sink has every group's first notification, and each server's RSS after.
 * Two cases, each on fresh servers: new alerts (both wait group_wait, 1 s, before the first flush),
 * and a backlog of alerts that started an hour ago (what a restarted alert manager receives from
 * Prometheus: both flush such a group at once), where the whole time is the servers' own work.
 * In the backlog case the Node floor (alertmanager-floor.ts --notify) takes part too, unless
 * CTL_BENCH_FLOOR=0: one webhook POST per new group sent the moment its first alert arrives, with
 * nothing else; what any Node server pays on this machine for the same deliveries.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { alertmanagerBinary, startRealAlertmanager } from '../alertmanager/real-alertmanager.js';
import { boundAddresses, fmt, report, section, startBenchDaemon, startNodeFloor } from './util.js';

const GROUPS = 1000;
const PER_GROUP = 10;
const BATCH = 1000;

const config = (sink: string) => `route:
  receiver: hook
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1m
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs: [{url: "${sink}"}]
`;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

interface Timing {
  total: number;
  posted: number;
  first: number;
}

async function run(name: string, base: string, seen: Map<string, Set<string>>, path: string, firstAt: Map<string, number>, ageMs: number): Promise<Timing> {
  const t0 = performance.now();
  const startsAt = new Date(Date.now() - ageMs).toISOString();
  for (let start = 0; start < GROUPS * PER_GROUP; start += BATCH) {
    const alerts = Array.from({ length: BATCH }, (_, i) => {
      const n = start + i;
      return { labels: { alertname: `G${n % GROUPS}`, instance: `i${n}` }, annotations: { summary: 'bench' }, startsAt };
    });
    const r = await fetch(`${base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts) });
    if (r.status !== 200) throw new Error(`${name}: POST answered ${r.status}`);
  }
  const posted = performance.now() - t0;
  const deadline = Date.now() + 120_000;
  while ((seen.get(path)?.size ?? 0) < GROUPS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if ((seen.get(path)?.size ?? 0) < GROUPS) throw new Error(`${name}: only ${seen.get(path)?.size ?? 0} of ${GROUPS} groups notified in 120 s`);
  return { total: performance.now() - t0, posted, first: (firstAt.get(path) ?? NaN) - t0 };
}

export async function runAlertmanagerNotifyBench(): Promise<void> {
  await notifyCase('new alerts, group_wait 1 s', 0);
  await notifyCase('a backlog: alerts started an hour ago (flushed at once)', 3_600_000);
}

async function notifyCase(what: string, ageMs: number): Promise<void> {
  section(`alert manager notifications: ${(GROUPS * PER_GROUP).toLocaleString('en')} alerts in ${GROUPS.toLocaleString('en')} groups, one webhook; ${what}`);
  const waitMs = ageMs > 0 ? 0 : 1000;
  const seen = new Map<string, Set<string>>();
  const firstAt = new Map<string, number>();
  const sink = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      const key = (JSON.parse(b) as { groupKey: string }).groupKey;
      if (!firstAt.has(req.url!)) firstAt.set(req.url!, performance.now());
      let s = seen.get(req.url!);
      if (!s) seen.set(req.url!, (s = new Set()));
      s.add(key);
      res.end();
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  try {
    const d = await startBenchDaemon({ 'alertmanager.yml': config(`${sinkUrl}/ctl`), 'daemon.yaml': 'name: b\naddress: ""\nservers:\n  alertmanager: {address: "127.0.0.1:0"}\nfailure-domain: 0\n' });
    let ctl: Timing = { total: 0, posted: 0, first: 0 };
    let ctlRss = 0;
    try {
      const core = await boundAddresses(d.socket);
      ctl = await run('ctl', `http://${core.servers.alertmanager!.bound_address}`, seen, '/ctl', firstAt, ageMs);
      ctlRss = rssMb(d.child.pid!);
    } finally {
      await d.stop();
    }
    report('ctl: POSTs until every group notified', fmt(ctl.total, 0));
    report('ctl: the 10 POSTs answered after', fmt(ctl.posted, 0));
    report('ctl: first notification after', fmt(ctl.first, 0));
    report('ctl: RSS after', `${ctlRss.toFixed(0)} MB`);
    if (!alertmanagerBinary()) {
      report('Alertmanager 0.25', 'not installed');
      return;
    }
    const real = await startRealAlertmanager(config(`${sinkUrl}/real`));
    let realTotal = 0;
    try {
      const r = await run('alertmanager', real.url, seen, '/real', firstAt, ageMs);
      realTotal = r.total;
      const realRss = rssMb(real.proc.pid!);
      report('Alertmanager 0.25: POSTs until every group notified', fmt(r.total, 0));
      report('Alertmanager 0.25: the 10 POSTs answered after', fmt(r.posted, 0));
      report('Alertmanager 0.25: first notification after', fmt(r.first, 0));
      report('Alertmanager 0.25: RSS after', `${realRss.toFixed(0)} MB`);
      report('speed-up (0.25 time / ctl time)', `x${(r.total / ctl.total).toFixed(2)}`, 'goal >= 3');
      // group_wait is the same wait for both: what each spends beyond it is the work.
      if (waitMs > 0) report('speed-up beyond group_wait', `x${((r.total - waitMs) / (ctl.total - waitMs)).toFixed(2)}`);
      report('memory (ctl RSS / 0.25 RSS)', `x${(ctlRss / realRss).toFixed(2)}`, 'goal <= 1');
    } finally {
      await real.stop();
    }
    if (waitMs === 0 && process.env.CTL_BENCH_FLOOR !== '0') {
      const floor = await startNodeFloor(['--notify', `${sinkUrl}/floor`]);
      try {
        const f = await run('Node floor', floor.base, seen, '/floor', firstAt, ageMs);
        report('Node floor: POSTs until every group notified', fmt(f.total, 0));
        report('Node floor: RSS after', `${rssMb(floor.pid).toFixed(0)} MB`);
        if (realTotal > 0) report('speed-up of the Node floor (0.25 time / floor time)', `x${(realTotal / f.total).toFixed(2)}`, 'the most any Node server reaches here');
      } finally {
        await floor.stop();
      }
    }
  } finally {
    await new Promise((r) => sink.close(r));
  }
}
