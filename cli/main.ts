import { CommanderError } from 'commander';
import { buildProgram } from './program.js';
import { EXIT, fail } from './run.js';

// A reader that went away (`ctl status | head -1`): stop quietly, as Unix tools do, instead of an
// unhandled EPIPE stack trace. Anything else on stdout/stderr is still a failure.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(EXIT.ok);
    throw e;
  });
}

try {
  const program = await buildProgram(process.argv.slice(2));
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // --help and --version exit 0; every parse error is a usage error.
    process.exit(e.exitCode === 0 ? EXIT.ok : EXIT.usage);
  }
  fail(e);
}
