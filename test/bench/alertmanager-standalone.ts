/**
 * `node alertmanager-standalone.js DIR`: only the alertmanager component in a Node process (no
 * other APIs, no bench client code loaded), to show the component's own footprint beside the
 * whole daemon's. Prints the bound port on stdout.
 */
import http from 'node:http';
import { join } from 'node:path';
import pino from 'pino';
import { ClientIpResolver, createDispatcher, systemClock } from '../../src/http/index.js';
import { Store } from '../../src/store/index.js';
import { Egress } from '../../src/egress/index.js';
import { alertmanagerComponent } from '../../src/alertmanager/index.js';

const dir = process.argv[2]!;
const log = pino({ level: 'silent' });
const instance = await alertmanagerComponent.create({
  name: 'alertmanager',
  stateDir: dir,
  log,
  clock: systemClock,
  openStore: (m) => new Store(join(dir, 'database', 'alertmanager.db'), m),
  egress: new Egress({ loopbackOnly: true }),
  config: {},
  env: {},
  uploadsDir: join(dir, 'uploads'),
  handleOf: () => undefined,
  version: 'bench',
});
await instance.start?.();
const server = http.createServer(createDispatcher({ target: () => instance, listener: 'bench', viaSocket: false, ips: () => new ClientIpResolver(), log }));
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as { port: number }).port}\n`));
process.on('SIGTERM', () => {
  instance.stop?.();
  process.exit(0);
});
