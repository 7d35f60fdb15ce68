/**
 * The gateway component alone in a process (no other ctl component), for the bench's memory figure:
 * `node dist/test/bench/gateway-server.js STATE_DIR` prints `listening <port>` once it accepts.
 */
import http from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { gatewayComponent } from '../../src/gateway/index.js';
import { createDispatcher } from '../../src/http/dispatch.js';
import { ClientIpResolver } from '../../src/http/client-ip.js';
import { systemClock } from '../../src/http/clock.js';
import { Egress } from '../../src/egress/index.js';
import { openStore, type Store } from '../../src/store/index.js';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: gateway-server.js STATE_DIR\n');
  process.exit(2);
}
const log = pino({ level: 'warn' });
let store: Store | undefined;
const instance = await gatewayComponent.create({
  name: 'gateway',
  stateDir: dir,
  log,
  clock: systemClock,
  openStore: (m) => (store ??= openStore(join(dir, 'database', 'gateway.db'), m)),
  egress: new Egress({}),
  config: {},
  env: process.env,
  uploadsDir: join(dir, 'uploads', 'gateway'),
  handleOf: () => undefined,
  version: 'bench',
});
const ips = new ClientIpResolver();
const server = http.createServer(createDispatcher({ target: () => instance, listener: 'gateway', viaSocket: false, ips: () => ips, log }));
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void instance.stop?.();
  store?.close();
  process.exit(0);
});
