/**
 * The floor the alert manager bench compares the first POST against (unless CTL_BENCH_FLOOR=0):
 * the least a durable alert store in Node does with a POST of alerts. node:http reads the body,
 * `JSON.parse` decodes it, each alert gets its Alertmanager fingerprint (ctl's FNV-1a, the
 * cheapest correct one here) and replaces the previous state in a Map, the body is appended to a
 * journal file with one writev(2), and the answer is an empty 200. No validation, no defaults, no
 * merging, no Go-compatible errors, no routing, middleware or logging: what any Node server pays
 * for the same durable work on this machine at the moment of the run.
 * `node dist/test/bench/alertmanager-floor.js DIR` prints the bound port (127.0.0.1) on stdout.
 */
import { openSync, writevSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fingerprint } from '../../src/alertmanager/labels.js';

interface FloorAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: unknown;
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: alertmanager-floor.js DIR\n');
  process.exit(2);
}
const journal = openSync(join(dir, 'floor-journal'), 'a', 0o600);
const alerts = new Map<string, FloorAlert>();

function store(body: Buffer): void {
  const batch = JSON.parse(body.toString('utf8')) as FloorAlert[];
  for (const a of batch) alerts.set(fingerprint(a.labels), a);
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(body.length, 0);
  writevSync(journal, [head, body]);
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      store(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      res.writeHead(200, { 'Content-Length': 0 });
      res.end();
    } catch (e) {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(String(e));
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
