/**
 * The gateway component alone in a process (no other ctl component), for the bench's memory figure
 * and the resilience A/B: `node dist/test/bench/gateway-server.js STATE_DIR [--core]` prints
 * `listening <port>` once it accepts. `--core` runs the issue-5 routing core for comparison: the
 * basic policy (accounts in order, rate-limit cool-down) instead of breakers, cool-downs, lock-outs
 * and affinity, and the response cache off. V8 is set up as `ctl serve` sets it (the daemon's V8
 * flags, tier-up budget, young-generation cap, idle trim and the collection after start-up), as in
 * alertmanager-standalone.ts, so the figures are the component's as the daemon runs it.
 */
import http from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import type { GatewayServices } from '../../src/gateway/services.js';
import type { ComponentContext, ComponentInstance } from '../../src/http/component.js';
import type { Store } from '../../src/store/index.js';

// Before the component's modules load, as bin/ctl and src/daemon/run.ts do for `ctl serve`.
const flags = process.env.CTL_DAEMON_V8_FLAGS ?? '';
if (flags.trim() !== '') setFlagsFromString(flags);
const { applyDaemonV8Settings } = await import('../../src/daemon/v8-settings.js');
const onRequest = applyDaemonV8Settings(process.env);
const { default: pino } = await import('pino');
const { createGatewayServices, gatewayComponent } = await import('../../src/gateway/index.js');
const { BasicPolicy } = await import('../../src/gateway/routing/policy.js');
const { gatewayRouter, renderGatewayError } = await import('../../src/gateway/routes/index.js');
const { H } = await import('../../src/gateway/telemetry.js');
const { NO_ALERTS } = await import('../../src/http/component.js');
const { createDispatcher } = await import('../../src/http/dispatch.js');
const { ClientIpResolver } = await import('../../src/http/client-ip.js');
const { systemClock } = await import('../../src/http/clock.js');
const { Egress } = await import('../../src/egress/index.js');
const { openStore } = await import('../../src/store/index.js');
const { collectAfterStartup } = await import('../../src/daemon/startup-gc.js');

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
const dispatch = createDispatcher({ target: () => instance, listener: 'gateway', viaSocket: false, ips: () => ips, log });
collectAfterStartup();
const server = http.createServer((req, res) => {
  onRequest();
  dispatch(req, res);
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void instance.stop?.();
  store?.close();
  process.exit(0);
});
