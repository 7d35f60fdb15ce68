/**
 * The floor the alert manager bench compares the first POST against (unless CTL_BENCH_FLOOR=0):
 * the least a durable alert store in Node does with a POST of alerts. node:http reads the body,
 * `JSON.parse` decodes it, each alert gets its Alertmanager fingerprint (ctl's FNV-1a, the
 * cheapest correct one here) and replaces the previous state in a Map, the body is appended to a
 * journal file with one writev(2), and the answer is an empty 200. No validation, no defaults, no
 * merging, no Go-compatible errors, no routing, middleware or logging: what any Node server pays
 * for the same durable work on this machine at the moment of the run.
 * The silence and notification benches use it too:
 *   - `POST /api/v2/silences`: the body is parsed, given a random id, appended to the journal with
 *     one writev(2), and answered `{"silenceID": …}` (no validation, no matcher compiling, no index);
 *   - with `--notify URL`, the first alert of each new `alertname` is sent at once to URL as one
 *     webhook POST (group key, status and the group's alerts, as a version 4 payload carries them),
 *     over a keep-alive undici pool: no grouping timers, no templates, no notification log, no
 *     retries: the least a Node server does to tell a webhook about a backlog of new groups.
 * `node dist/test/bench/alertmanager-floor.js DIR [--notify URL]` prints the bound port (127.0.0.1)
 * on stdout.
 */
import { randomUUID } from 'node:crypto';
import { openSync, writevSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { fingerprint } from '../../src/alertmanager/labels.js';

interface FloorAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt?: string;
  endsAt: unknown;
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: alertmanager-floor.js DIR\n');
  process.exit(2);
}
const journal = openSync(join(dir, 'floor-journal'), 'a', 0o600);
const alerts = new Map<string, FloorAlert>();
const notifyAt = process.argv.indexOf('--notify') > 0 ? new URL(process.argv[process.argv.indexOf('--notify') + 1]!) : undefined;
const hook = notifyAt ? new Pool(notifyAt.origin, { connections: 32 }) : undefined;
const notified = new Set<string>();

function append(body: Buffer): void {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(body.length, 0);
  writevSync(journal, [head, body]);
}

function store(body: Buffer): void {
  const batch = JSON.parse(body.toString('utf8')) as FloorAlert[];
  const groups = new Map<string, FloorAlert[]>();
  for (const a of batch) {
    alerts.set(fingerprint(a.labels), a);
    const name = a.labels.alertname ?? '';
    if (hook && !notified.has(name)) {
      let g = groups.get(name);
      if (!g) groups.set(name, (g = []));
      g.push(a);
    }
  }
  append(body);
  for (const [name, group] of groups) notify(name, group);
}

function notify(name: string, group: FloorAlert[]): void {
  notified.add(name);
  const body = JSON.stringify({
    receiver: 'hook',
    status: 'firing',
    alerts: group.map((a) => ({ status: 'firing', labels: a.labels, annotations: a.annotations, startsAt: a.startsAt, endsAt: '0001-01-01T00:00:00Z' })),
    groupLabels: { alertname: name },
    version: '4',
    groupKey: `{}:{alertname="${name}"}`,
  });
  hook!.request({ method: 'POST', path: notifyAt!.pathname, headers: { 'content-type': 'application/json' }, body }).then(
    (r) => r.body.dump(),
    (e) => process.stderr.write(`floor: webhook failed: ${(e as Error).message}\n`),
  );
}

function silence(body: Buffer): string {
  JSON.parse(body.toString('utf8'));
  const id = randomUUID();
  append(body);
  return JSON.stringify({ silenceID: id });
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (req.url === '/api/v2/silences') {
        const answer = silence(body);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer) });
        res.end(answer);
        return;
      }
      store(body);
      res.writeHead(200, { 'Content-Length': 0 });
      res.end();
    } catch (e) {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(String(e));
    }
  });
});
// CTL_BENCH_KEEP_ALIVE_MS: node's idle keep-alive timeout (5 s) is shorter than a pause of the server
// under valgrind on a loaded machine, which then closed the client's connection mid-burst (ECONNRESET).
if (process.env.CTL_BENCH_KEEP_ALIVE_MS) server.keepAliveTimeout = Number(process.env.CTL_BENCH_KEEP_ALIVE_MS);
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
