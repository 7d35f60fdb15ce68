import { Command, CommanderError, Option } from 'commander';
import { setClientOptions } from './client.js';
import { setOutputFormat, type OutputFormat } from './output.js';
import { EXIT, fail } from './run.js';
import { register as registerServe } from './serve.js';
import { register as registerDaemon } from './daemon.js';
import { register as registerNodes } from './nodes.js';
import { register as registerRatelimit } from './ratelimit.js';
import { register as registerGateway } from './gateway.js';
import { register as registerPipeline } from './pipeline.js';

const program = new Command('ctl')
  .description('one daemon, one CLI: alert manager API, Core API, rate limiter, model gateway, content pipeline, node monitor')
  .version(process.env.npm_package_version ?? (await import('./version.js')).cliVersion(), '-V, --version')
  .option('--state-dir <dir>', 'state directory (default: $CTL_STATE_DIR, /var/lib/ctl for root, else ~/.local/state/ctl)')
  .option('--socket <path>', 'control socket (default: STATE_DIR/control.socket)')
  .option('--url <url>', 'talk to a TCP listener instead of the socket (e.g. http://127.0.0.1:9093)')
  .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'yaml']).default('table'))
  .showHelpAfterError()
  .exitOverride();

program.hook('preAction', (_this, cmd) => {
  const g = cmd.optsWithGlobals<{ stateDir?: string; socket?: string; url?: string; output: OutputFormat }>();
  setClientOptions({ stateDir: g.stateDir, socket: g.socket, url: g.url });
  setOutputFormat(g.output);
});

registerServe(program);
registerDaemon(program);
registerNodes(program);
registerRatelimit(program);
registerGateway(program);
registerPipeline(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // --help and --version exit 0; every parse error is a usage error.
    process.exit(e.exitCode === 0 ? EXIT.ok : EXIT.usage);
  }
  fail(e);
}
