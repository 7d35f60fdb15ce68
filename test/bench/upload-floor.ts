/**
 * The floor the media bench compares upload memory against: the least a Node proxy can do with an
 * upload it must be able to resend, node:http spooling the request body to a temp file and undici
 * streaming that file to the upstream. No multipart parsing, auth, routing or logging.
 * `node dist/test/bench/upload-floor.js UPSTREAM_URL` prints `listening <port>` (127.0.0.1); every
 * request body goes to UPSTREAM_URL with the request's content-type, and the upstream's answer comes back.
 */
import http from 'node:http';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';

const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: upload-floor.js UPSTREAM_URL\n');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'ctl-upload-floor-'));
let n = 0;

const server = http.createServer((req, res) => {
  const path = join(dir, String(n++));
  const out = createWriteStream(path);
  req.pipe(out);
  out.on('finish', () => {
    void (async () => {
      try {
        const up = await request(target, { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? 'application/octet-stream' }, body: createReadStream(path) });
        const text = await up.body.text();
        res.writeHead(up.statusCode, { 'content-type': 'application/json' }).end(text);
      } catch (e) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end(String(e));
      } finally {
        rmSync(path, { force: true });
      }
    })();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
