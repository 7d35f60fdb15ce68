import { Command, Option } from 'commander';
import { setClientOptions } from './client.js';
import { setOutputFormat, type OutputFormat } from './output.js';
import { cliVersion } from './version.js';
import { register as registerServe } from './serve.js';
import { register as registerDaemon } from './daemon.js';
import { register as registerAlertmanager } from './alertmanager.js';
import { register as registerRatelimit } from './ratelimit.js';
import { register as registerGateway } from './gateway.js';
import { register as registerPipeline } from './pipeline.js';
import { register as registerNodes } from './nodes.js';

/** The whole command tree (main.ts parses argv with it; tests walk it to check the man pages). */
export function buildProgram(): Command {
  const program = new Command('ctl')
    .description('one daemon, one CLI: alert manager API, Core API, rate limiter, model gateway, content pipeline, node monitor')
    .version(cliVersion(), '-V, --version')
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
  registerAlertmanager(program);
  registerRatelimit(program);
  registerGateway(program);
  registerPipeline(program);
  registerNodes(program);
  return program;
}
