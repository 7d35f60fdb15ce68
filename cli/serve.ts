import type { Command } from 'commander';
import { intOption } from './run.js';

export function register(program: Command): void {
  program
    .command('serve')
    .description('run the daemon in the foreground (systemd Type=exec)')
    .option('--config <file>', 'start-up configuration (default: STATE_DIR/ctl.yaml when present)')
    .option('--log-level <level>', 'trace|debug|info|warn|error|fatal', 'info')
    .option('--init-failure-domain <n>', 'failure domain written to daemon.yaml on first start', intOption('--init-failure-domain'))
    .option('--pre-init-listen-address <addr>', 'HTTPS listener for the Core API reads before bootstrap (host:port)')
    .action(async (opts: { config?: string; logLevel: string; initFailureDomain?: number; preInitListenAddress?: string }, cmd: Command) => {
      const { runDaemon } = await import('../src/daemon/run.js');
      const globals = cmd.optsWithGlobals<{ stateDir?: string }>();
      await runDaemon({
        stateDir: globals.stateDir,
        configPath: opts.config,
        logLevel: opts.logLevel,
        initFailureDomain: opts.initFailureDomain,
        preInitListenAddress: opts.preInitListenAddress,
      });
    });
}
