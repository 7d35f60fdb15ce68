/**
 * `npm run bench`: every component's measurements in one run, side by side with its peers,
 * printed as ratios. Not part of `npm test`. Pass component names to run only those.
 */
import { runCoreBench } from './core.js';

type Bench = { name: string; run: () => Promise<void> };

/** Benches of components that may be absent from a build are loaded by name. */
async function optional(name: string, module: string, fn: string): Promise<Bench> {
  return {
    name,
    run: async () => {
      let mod: Record<string, unknown>;
      try {
        mod = (await import(module)) as Record<string, unknown>;
      } catch (e) {
        process.stdout.write(`\n${name}: bench not available (${(e as Error).message})\n`);
        return;
      }
      await (mod[fn] as () => Promise<void>)();
    },
  };
}

const benches: Bench[] = [
  { name: 'core', run: runCoreBench },
  await optional('ratelimit', './ratelimit.js', 'runRateLimitBench'),
  await optional('alertmanager', './alertmanager.js', 'runAlertmanagerBench'),
  await optional('alertmanager-notify', './alertmanager-notify.js', 'runAlertmanagerNotifyBench'),
  await optional('alertmanager-silences', './alertmanager-silences.js', 'runAlertmanagerSilencesBench'),
  await optional('alertmanager-shared', './alertmanager-shared.js', 'runAlertmanagerSharedBench'),
  await optional('gateway', './gateway.js', 'runGatewayBench'),
  await optional('gateway-catalog', './gateway-catalog.js', 'runGatewayCatalogBench'),
  await optional('gateway-shared', './gateway-shared.js', 'runGatewaySharedBench'),
  await optional('gateway-media', './gateway-media.js', 'runGatewayMediaBench'),
  await optional('gateway-batch', './gateway-batch.js', 'runGatewayBatchBench'),
  await optional('gateway-guardrails', './gateway-guardrails.js', 'runGatewayGuardrailsBench'),
  await optional('nodes', './nodes.js', 'runNodesBench'),
  await optional('abuse', './abuse.js', 'runAbuseBench'),
];

const only = process.argv.slice(2);
process.stdout.write(`ctl bench — ${new Date().toISOString()} — node ${process.version}\n`);
for (const b of benches) {
  if (only.length > 0 && !only.includes(b.name)) continue;
  try {
    await b.run();
  } catch (e) {
    process.stdout.write(`\n${b.name}: bench failed: ${(e as Error).stack ?? e}\n`);
    process.exitCode = 1;
  }
}
