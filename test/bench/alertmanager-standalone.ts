/**
 * `node alertmanager-standalone.js DIR`: only the alertmanager component in a Node process (no
 * other APIs, no bench client code loaded), to show the component's own footprint beside the
 * whole daemon's. Prints the bound port on stdout.
 */
import { NO_ALERTS } from '../../src/http/component.js';
import http from 'node:http';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';

// The daemon's V8 flags, as bin/ctl applies them to `ctl serve` (CTL_DAEMON_V8_FLAGS), before
// the heap grows: the component's modules are loaded afterwards.
const flags = process.env.CTL_DAEMON_V8_FLAGS ?? '';
if (flags.trim() !== '') setFlagsFromString(flags);
// And its tier-up budget, young-generation cap and idle trim, as `ctl serve` sets them (src/daemon/run.ts).
const { applyDaemonV8Settings } = await import('../../src/daemon/v8-settings.js');
const onRequest = applyDaemonV8Settings(process.env);
const { default: pino } = await import('pino');
const { ClientIpResolver, createDispatcher, systemClock } = await import('../../src/http/index.js');
const { Store } = await import('../../src/store/index.js');
const { Egress } = await import('../../src/egress/index.js');
const { alertmanagerComponent } = await import('../../src/alertmanager/index.js');

const dir = process.argv[2]!;
const log = pino({ level: 'silent' });
const instance = await alertmanagerComponent.create({
  name: 'alertmanager',
  stateDir: dir,
  log,
  clock: systemClock,
  openStore: (m: import('../../src/store/index.js').Migration[]) => new Store(join(dir, 'database', 'alertmanager.db'), m),
  egress: new Egress({ loopbackOnly: true }),
  config: {},
  env: {},
  uploadsDir: join(dir, 'uploads'),
  handleOf: () => undefined,
  alerts: NO_ALERTS,
  version: 'bench',
});
await instance.start?.();
// The full collection `ctl serve` runs once it has started (src/daemon/startup-gc.ts).
const { collectAfterStartup } = await import('../../src/daemon/startup-gc.js');
collectAfterStartup();
const ips = new ClientIpResolver();
const dispatch = createDispatcher({ target: () => instance, listener: 'bench', viaSocket: false, ips: () => ips, log });
const server = http.createServer((req, res) => {
  onRequest();
  dispatch(req, res);
});
// CTL_BENCH_KEEP_ALIVE_MS: node's idle keep-alive timeout (5 s) is shorter than a pause of the server
// under valgrind on a loaded machine, which then closed the client's connection mid-burst (ECONNRESET).
if (process.env.CTL_BENCH_KEEP_ALIVE_MS) server.keepAliveTimeout = Number(process.env.CTL_BENCH_KEEP_ALIVE_MS);
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as { port: number }).port}\n`));
process.on('SIGTERM', () => {
  instance.stop?.();
  process.exit(0);
});
