/**
 * The floor the gateway bench compares against (unless CTL_BENCH_FLOOR=0): the minimal Node pass-through
 * of the notes (§5.2), node:http plus an undici Pool, that parses the JSON body, rewrites the model,
 * forwards it, and parses and re-serialises the answer. No auth, logging or telemetry: what any Node
 * proxy pays on this machine at the moment of the run.
 * `node dist/test/bench/gateway-floor.js UPSTREAM_BASE_URL` prints `listening <port>` (127.0.0.1).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const base = process.argv[2];
if (!base) {
  process.stderr.write('usage: gateway-floor.js UPSTREAM_BASE_URL\n');
  process.exit(2);
}
const upstream = new URL(base);
const pool = new Pool(upstream.origin, { connections: 512 });
const path = `${upstream.pathname.replace(/\/+$/, '')}/chat/completions`;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        const model = String(body.model ?? '');
        body.model = model.slice(model.indexOf('/') + 1);
        const up = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', authorization: 'Bearer sk-up' }, body: JSON.stringify(body) });
        const text = JSON.stringify(await up.body.json());
        res.writeHead(up.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      } catch (e) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(e));
      }
    })();
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.close();
  process.exit(0);
});
