/**
 * Abuse: 2,000 slow clients (from 20 loopback addresses, 100 each) trickle header bytes into the
 * alert manager's listener; meanwhile the Core API's status on the control socket and the gateway's
 * model list on its own listener are timed, against the same calls without the abuse. The listener
 * sheds the slow clients at header-timeout (408 and a close); nothing else may slow down much.
 */
import http from 'node:http';
import net from 'node:net';
import { boundAddresses, fmt, percentile, report, section, startBenchDaemon } from './util.js';

const CLIENTS = 2000;
const SOURCES = 20;
const SAMPLES = 400;

function timeGet(opts: http.RequestOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({ ...opts, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function sample(socket: string, gatewayPort: number): Promise<{ core: number[]; gateway: number[] }> {
  const core: number[] = [];
  const gateway: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    core.push(await timeGet({ socketPath: socket, path: '/core/1.0', headers: { Host: 'core' } }));
    gateway.push(await timeGet({ host: '127.0.0.1', port: gatewayPort, path: '/v1/models' }));
  }
  return { core, gateway };
}

export async function runAbuseBench(): Promise<void> {
  section(`abuse: ${CLIENTS.toLocaleString('en')} slow clients on the alert manager listener`);
  const d = await startBenchDaemon({
    'ctl.yaml': 'servers:\n  alertmanager:\n    header-timeout: 8s\n',
    'daemon.yaml': 'name: bench\naddress: ""\nservers:\n  alertmanager: {address: "127.0.0.1:0"}\n  gateway: {address: "127.0.0.1:0"}\nfailure-domain: 0\n',
  });
  const held: net.Socket[] = [];
  try {
    const info = await boundAddresses(d.socket);
    const amPort = Number(info.servers.alertmanager!.bound_address.split(':').pop());
    const gwPort = Number(info.servers.gateway!.bound_address.split(':').pop());
    const quiet = await sample(d.socket, gwPort);
    let shed = 0;
    let connected = 0;
    let answered = 0;
    for (let i = 0; i < CLIENTS; i++) {
      const s = net.connect({ host: '127.0.0.1', port: amPort, localAddress: `127.0.${1 + Math.floor(i / (CLIENTS / SOURCES))}.${1 + (i % 200)}` });
      s.on('error', () => undefined);
      s.on('close', () => shed++);
      s.on('connect', () => connected++);
      s.on('data', () => answered++);
      s.write('GET /api/v2/status HTTP/1.1\r\nHost: x\r\n');
      held.push(s);
    }
    // Trickle a header line to every client every second while sampling.
    const trickle = setInterval(() => {
      for (const s of held) if (!s.destroyed) s.write('X-Slow: 1\r\n');
    }, 1000);
    await new Promise((r) => setTimeout(r, 1000));
    const abused = await sample(d.socket, gwPort);
    clearInterval(trickle);
    // Wait for the header timeout to shed them.
    const deadline = Date.now() + 15_000;
    while (shed < CLIENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    for (const [name, q, a] of [['Core API status (socket)', quiet.core, abused.core], ['gateway /v1/models (TCP)', quiet.gateway, abused.gateway]] as const) {
      report(`${name} p50, quiet / under abuse`, `${fmt(percentile(q, 50))} / ${fmt(percentile(a, 50))}`);
      report(`${name} p99, quiet / under abuse`, `${fmt(percentile(q, 99))} / ${fmt(percentile(a, 99))}`, `x${(percentile(a, 99) / percentile(q, 99)).toFixed(2)}`);
    }
    report('slow clients connected / answered 408 / closed', `${connected} / ${answered} / ${shed}`);
  } finally {
    for (const s of held) s.destroy();
    await d.stop();
  }
}
