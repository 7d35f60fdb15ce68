/**
 * The gateway component alone in a process (no other ctl component), for the bench's memory figure
 * and the resilience A/B: `node dist/test/bench/gateway-server.js STATE_DIR [--core]` prints
 * `listening <port>` once it accepts. `--core` runs the issue-5 routing core for comparison: the
 * basic policy (accounts in order, rate-limit cool-down) instead of breakers, cool-downs, lock-outs
 * and affinity, and the response cache off.
 */
import http from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createGatewayServices, gatewayComponent } from '../../src/gateway/index.js';
import type { GatewayServices } from '../../src/gateway/services.js';
import { BasicPolicy } from '../../src/gateway/routing/policy.js';
import { gatewayRouter, renderGatewayError } from '../../src/gateway/routes/index.js';
import { H } from '../../src/gateway/telemetry.js';
import { NO_ALERTS, type ComponentContext, type ComponentInstance } from '../../src/http/component.js';
import { createDispatcher } from '../../src/http/dispatch.js';
import { ClientIpResolver } from '../../src/http/client-ip.js';
import { systemClock } from '../../src/http/clock.js';
import { Egress } from '../../src/egress/index.js';
import { openStore, type Store } from '../../src/store/index.js';

const dir = process.argv[2];
const core = process.argv.includes('--core');
if (!dir) {
  process.stderr.write('usage: gateway-server.js STATE_DIR [--core]\n');
  process.exit(2);
}
const log = pino({ level: 'warn' });
let store: Store | undefined;
const ctx: ComponentContext = {
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
  alerts: NO_ALERTS,
  version: 'bench',
};

function coreInstance(): ComponentInstance {
  const svc: GatewayServices = createGatewayServices(ctx);
  svc.policy = new BasicPolicy(() => svc.state.catalog.settings) as unknown as GatewayServices['policy'];
  svc.runtime.cache.patch({ enabled: false });
  return {
    router: gatewayRouter(svc),
    renderError: renderGatewayError,
    before(c) {
      c.res.setHeader(H.version, svc.version);
    },
    stop() {
      svc.usage.stop();
      svc.cache.stop();
    },
  };
}

const instance = core ? coreInstance() : await gatewayComponent.create(ctx);
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
