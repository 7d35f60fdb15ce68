/**
 * Silence creation as scripts do it: 1,000 `POST /api/v2/silences` one after another (an amtool
 * loop), each run on a fresh ctl and a fresh Alertmanager 0.25, three of each, the median. The Node floor
 * (alertmanager-floor.ts, unless CTL_BENCH_FLOOR=0) answers the same POSTs with the least work a
 * durable Node server does: parse, a random id, one journal append. The client's own cost (this
 * process, one keep-alive connection) is in every figure, so the floor also shows the most any
 * server can gain here.
 */
import http from 'node:http';
import { alertmanagerBinary, startRealAlertmanager } from '../alertmanager/real-alertmanager.js';
import { boundAddresses, fmt, median, report, section, startBenchDaemon, startNodeFloor } from './util.js';

const SILENCES = 1000;
const RUNS = 3;
const CONFIG = 'route:\n  receiver: r\nreceivers:\n  - name: r\n';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(base: string, body: string): Promise<number> {
  const u = new URL('/api/v2/silences', base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function sequence(base: string): Promise<number> {
  const now = Date.now();
  const t0 = performance.now();
  for (let i = 0; i < SILENCES; i++) {
    const body = JSON.stringify({
      matchers: [{ name: 'instance', value: `host-${i}`, isRegex: false, isEqual: true }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      createdBy: 'bench',
      comment: `maintenance ${i}`,
    });
    const status = await post(base, body);
    if (status !== 200) throw new Error(`silence POST answered ${status}`);
  }
  return performance.now() - t0;
}

/** The sequence on RUNS fresh servers of one kind: each run's time, and the line that reports them. */
async function onFreshServers(name: string, start: () => Promise<{ base: string; stop: () => Promise<void> }>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const server = await start();
    try {
      times.push(await sequence(server.base));
    } finally {
      await server.stop();
    }
  }
  report(name, `${fmt(median(times), 0)} (runs ${times.map((x) => x.toFixed(0)).join(', ')} ms)`);
  return times;
}

export async function runAlertmanagerSilencesBench(): Promise<void> {
  section(`alert manager: ${SILENCES.toLocaleString('en')} silences POSTed one after another, fresh servers`);
  const ours = await onFreshServers('ctl', async () => {
    const d = await startBenchDaemon({ 'alertmanager.yml': CONFIG, 'daemon.yaml': 'name: b\naddress: ""\nservers:\n  alertmanager: {address: "127.0.0.1:0"}\nfailure-domain: 0\n' });
    const core = await boundAddresses(d.socket).catch(async (e: unknown) => {
      await d.stop();
      throw e;
    });
    return { base: `http://${core.servers.alertmanager!.bound_address}`, stop: d.stop };
  });
  if (!alertmanagerBinary()) {
    report('Alertmanager 0.25', 'not installed');
    return;
  }
  const theirs = await onFreshServers('Alertmanager 0.25', async () => {
    const real = await startRealAlertmanager(CONFIG);
    return { base: real.url, stop: () => real.stop() };
  });
  report('speed-up (0.25 time / ctl time)', `x${(median(theirs) / median(ours)).toFixed(2)}`, 'goal >= 3');
  if (process.env.CTL_BENCH_FLOOR !== '0') {
    const floors = await onFreshServers('Node floor', () => startNodeFloor());
    report('speed-up of the Node floor (0.25 time / floor time)', `x${(median(theirs) / median(floors)).toFixed(2)}`, 'the most any Node server reaches here');
  }
  agent.destroy();
}
