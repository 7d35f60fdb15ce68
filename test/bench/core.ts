import net from 'node:net';
import http from 'node:http';
import { CTL, fmt, median, report, section, startBenchDaemon, timeCommand } from './util.js';
import { freePort } from '../helpers/free-port.js';


function patch(socket: string, body: unknown): Promise<number> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: socket, method: 'PATCH', path: '/core/1.0/daemon/config', headers: { Host: 'core', 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function tryConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Issue 2: start to ready, `ctl status` beside curl, PATCH response to new listener accepting. */
export async function runCoreBench(): Promise<void> {
  section('Core API / daemon (issue 2)');
  const servers = 'servers:\n  alertmanager: {address: "127.0.0.1:0"}\n  gateway: {address: "127.0.0.1:0"}\n  pipeline: {address: "127.0.0.1:0"}\n  nodes: {address: "127.0.0.1:0"}\n';
  const ready: number[] = [];
  for (let i = 0; i < 5; i++) {
    const d = await startBenchDaemon({ 'daemon.yaml': servers });
    ready.push(d.readyMs);
    await d.stop();
  }
  report('start to ready (spawn → /core/1.0/ready 200), median of 5', fmt(median(ready), 0), 'goal < 300 ms');

  const d = await startBenchDaemon({ 'daemon.yaml': servers });
  try {
    const ctlTimes: number[] = [];
    const curlTimes: number[] = [];
    let haveCurl = true;
    for (let i = 0; i < 10; i++) {
      ctlTimes.push(await timeCommand(process.execPath, [CTL, '--socket', d.socket, 'status']));
      if (haveCurl) {
        try {
          curlTimes.push(await timeCommand('curl', ['-s', '-o', '/dev/null', '--unix-socket', d.socket, 'http://core/core/1.0']));
        } catch {
          haveCurl = false;
        }
      }
    }
    report('ctl status wall time, median of 10', fmt(median(ctlTimes), 1));
    if (haveCurl) {
      report('curl --unix-socket http://core/core/1.0, median of 10', fmt(median(curlTimes), 1));
      report('ratio ctl status / curl', `${(median(ctlTimes) / median(curlTimes)).toFixed(2)}x`, 'goal ≤ 2x');
    } else report('curl', 'not installed');

    let acceptedBefore = 0;
    const after: number[] = [];
    const rounds = 10;
    for (let i = 0; i < rounds; i++) {
      const port = await freePort();
      const status = await patch(d.socket, { servers: { nodes: { address: `127.0.0.1:${port}` } } });
      const t = performance.now();
      if (status !== 200) throw new Error(`PATCH answered ${status}`);
      if (await tryConnect(port)) acceptedBefore++;
      else while (!(await tryConnect(port))) await new Promise((r) => setTimeout(r, 1));
      after.push(performance.now() - t);
    }
    report('PATCH response → new listener accepts (first try succeeded)', `${acceptedBefore}/${rounds}`, 'goal: all');
    report('PATCH response → first successful connect, median', fmt(median(after), 3));
  } finally {
    await d.stop();
  }
}
